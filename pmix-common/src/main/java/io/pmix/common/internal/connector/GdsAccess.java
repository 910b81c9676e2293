package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.gds.GdsModule;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The shared-memory data store a cycle reads job-level and modex data from, when its client
 * chose one (ds21 or ds12; docs/gds.md), and the reads of it. A read that would wait for the
 * server's write lock (or for another thread of this process reading) runs on the {@link
 * LibraryThreads#read reader thread} and its outcome comes back to the progress thread; one that
 * need not is made on the progress thread at once. Reads are made one at a time, in the order
 * asked.
 *
 * <p>Owns the module from {@link #install} on: {@link #release} (after every thread of the cycle
 * has ended) closes it, unmapping its segments and closing its descriptors; a ds21 lock slot
 * stays the process's, as in libpmix, and the next cycle reuses it.
 *
 * <p>Threading: installed and asked on the progress thread; the module itself is used there
 * (only through {@link GdsModule#readIfFree}), on the reader thread and, for the fast path of a
 * get, on the application's calling thread (the module is thread-safe), and closed once the
 * library's threads have ended (a caller reading then finds it closed and takes the ordinary
 * path, which fails as finalized).
 */
final class GdsAccess implements SessionPart {
  private final LibraryThreads threads;

  // Volatile: the fast path of a get reads it on the caller's thread.
  @Bookkept("session.gdsModule")
  private volatile @Nullable GdsModule module;

  @Bookkept("session.gdsReads")
  private int reads;

  GdsAccess(LibraryThreads threads) {
    this.threads = requireNonNull(threads, "threads");
  }

  /** Takes {@code m} over; one installed earlier (a failed init's) is closed. Progress thread. */
  void install(GdsModule m) {
    requireNonNull(m, "module");
    GdsModule old = module;
    module = m;
    if (old != null && old != m) {
      // Closed on the reader thread, after the reads asked of it: closing waits for a read in
      // progress, which may wait for the server's lock, and the progress thread must not.
      try {
        threads.read(old::close);
      } catch (RejectedExecutionException e) {
        old.close();
      }
    }
  }

  /** Whether a shared-memory store is attached. */
  boolean attached() {
    return module != null;
  }

  /** The attached module's name, or {@code hash} when none is. */
  String name() {
    GdsModule m = module;
    return m == null ? "hash" : m.name();
  }

  /**
   * The value of {@code key} for {@code proc} read on the calling thread, an application's (as
   * libpmix's client reads its store in the caller of {@code PMIx_Get}): null when it is not
   * there, no store is attached, the caller is one of the library's own threads (which must not
   * wait for the server's lock), or the read fails (the caller then takes the ordinary path,
   * which reports the failure).
   */
  @Nullable Value readOnCaller(Proc proc, String key) {
    GdsModule m = module;
    if (m == null || LibraryThreads.onLibraryThread(threads.role())) {
      return null;
    }
    try {
      return m.fetch(proc, key) instanceof GdsModule.Fetched.Found f ? f.value() : null;
    } catch (RuntimeException e) {
      // A closed store (the cycle is ending), a lock not granted: the ordinary path decides.
      return null;
    }
  }

  /**
   * Runs {@code read} against the module, then {@code then} with its result on the progress
   * thread, or {@code failed} there with the failure of the read (a corrupt store, the lock not
   * granted in time). The read is made here, and {@code then} or {@code failed} runs before this
   * returns, when it needs no waiting ({@link GdsModule#readIfFree}) and no read asked before is
   * still to come back from the reader thread (their order is kept); otherwise on the reader
   * thread, and if the cycle ends meanwhile, neither runs: {@code owner} fails with {@code
   * ERR_INIT}. Progress thread.
   *
   * @throws IllegalStateException if no module is attached
   */
  <T> void read(
      CompletableFuture<?> owner,
      Function<GdsModule, T> read,
      Consumer<T> then,
      Consumer<PmixException> failed) {
    GdsModule m = module;
    if (m == null) {
      throw new IllegalStateException("no shared-memory store is attached");
    }
    if (reads == 0) {
      // Here, without the two hand-offs through the reader thread (each a thread's wake-up): a
      // get that missed the store, asked the server and read the store again crossed four.
      Here<T> here = new Here<>(read);
      boolean made;
      try {
        made = m.readIfFree(here);
      } catch (RuntimeException e) {
        failed.accept(failure(m, e));
        return;
      }
      if (made) {
        if (here.failure != null) {
          failed.accept(here.failure);
        } else {
          then.accept(here.result);
        }
        return;
      }
    }
    reads++;
    try {
      threads.read(new Read<>(m, owner, read, then, failed));
    } catch (RejectedExecutionException e) {
      reads--;
      threads.fail(owner, threads.finalized(e));
    }
  }

  /** A failed read as its get reports it. */
  private static PmixException failure(GdsModule m, RuntimeException e) {
    if (e instanceof PmixException p) {
      return p;
    }
    // A closed reader (the cycle ended) or a bug: the get fails, the library keeps serving.
    return new PmixException(Status.ERROR, "reading the " + m.name() + " store: " + e, e);
  }

  private <T> void runRead(
      GdsModule m,
      CompletableFuture<?> owner,
      Function<GdsModule, T> read,
      Consumer<T> then,
      Consumer<PmixException> failed) {
    T result;
    PmixException failure = null;
    try {
      result = read.apply(m);
    } catch (RuntimeException e) {
      result = null;
      failure = failure(m, e);
    }
    try {
      threads.execute(new Outcome<>(result, failure, then, failed));
    } catch (PmixException e) {
      // The progress thread has ended (the last finalize): what was asked fails as finalized.
      threads.fail(owner, e);
    }
  }

  // Classes, not lambdas: every first init on ds21/ds12 reads the store (docs/architecture.md,
  // "First requests").

  /**
   * A read made on the progress thread, within {@link GdsModule#readIfFree}: its result, or its
   * failure (kept apart from the module's own, which means nothing was read).
   */
  private static final class Here<T> implements Consumer<GdsModule> {
    private final Function<GdsModule, T> read;
    private @Nullable T result;
    private @Nullable PmixException failure;

    Here(Function<GdsModule, T> read) {
      this.read = read;
    }

    @Override
    public void accept(GdsModule m) {
      try {
        result = read.apply(m);
      } catch (RuntimeException e) {
        failure = failure(m, e);
      }
    }
  }

  /** A read, on the reader thread. */
  private final class Read<T> implements Runnable {
    private final GdsModule m;
    private final CompletableFuture<?> owner;
    private final Function<GdsModule, T> read;
    private final Consumer<T> then;
    private final Consumer<PmixException> failed;

    Read(
        GdsModule m,
        CompletableFuture<?> owner,
        Function<GdsModule, T> read,
        Consumer<T> then,
        Consumer<PmixException> failed) {
      this.m = m;
      this.owner = owner;
      this.read = read;
      this.then = then;
      this.failed = failed;
    }

    @Override
    public void run() {
      runRead(m, owner, read, then, failed);
    }
  }

  /** A read's outcome, on the progress thread. */
  private final class Outcome<T> implements Runnable {
    private final @Nullable T result;
    private final @Nullable PmixException failure;
    private final Consumer<T> then;
    private final Consumer<PmixException> failed;

    Outcome(
        @Nullable T result,
        @Nullable PmixException failure,
        Consumer<T> then,
        Consumer<PmixException> failed) {
      this.result = result;
      this.failure = failure;
      this.then = then;
      this.failed = failed;
    }

    @Override
    public void run() {
      reads--;
      if (failure != null) {
        failed.accept(failure);
      } else {
        then.accept(result);
      }
    }
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("session.gdsModule", module != null ? 1L : 0L);
    m.put("session.gdsReads", (long) reads);
    return m;
  }

  @Override
  public Map<String, Object> resources() {
    GdsModule m = module;
    return m == null ? Map.of() : Map.of("gdsModule", m);
  }

  /** Closes the module: every thread of the cycle has ended, so nothing reads it any more. */
  @Override
  public void release() {
    GdsModule m = module;
    module = null;
    reads = 0;
    if (m != null) {
      m.close();
    }
  }
}
