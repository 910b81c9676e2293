package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.LazyLogger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The threads of one connector cycle and the hand-offs between them: one progress thread (a
 * {@link ProgressLoop} that owns the connection and all mutable state), one callback thread (where
 * futures complete and event handlers run, so application code never runs on the progress
 * thread) and, in cycles that read a shared-memory data store, one reader thread (a read may wait
 * for the server's write lock, which the progress thread must never do). All are daemon threads: an application that forgets to finalize can still exit. The
 * part of a {@link ConnectorSession} that every other part hands its work through.
 *
 * <p>A blocking call made on one of a role's own threads would wait for work only that same thread
 * can do, so {@link #checkMayBlock} turns it into an immediate {@link IllegalStateException}. A
 * thread of another role (a client's callback calling a blocking tool operation) may block.
 */
public final class LibraryThreads implements SessionPart {
  private static final System.Logger LOG = LazyLogger.of(LibraryThreads.class);

  /** How long teardown waits for each thread to end, and a reader for the progress thread. */
  static final Duration THREAD_STOP_WAIT = Duration.ofSeconds(10);

  /** A thread of a connector library. */
  static final class LibraryThread extends Thread {
    final Role role;

    LibraryThread(Runnable r, String name, Role role) {
      super(r, name);
      this.role = role;
      setDaemon(true);
    }
  }

  private final Role role;

  @Bookkept("session.threadsAlive")
  private final List<Thread> threads = new CopyOnWriteArrayList<>();

  @Bookkept("session.eventLoopRunning")
  private final ProgressLoop loop;

  @Bookkept("session.callbackExecutorRunning")
  private final ExecutorService callbacks;

  @Bookkept("session.gdsReaderRunning")
  private final ExecutorService reader;

  /**
   * Futures a blocking call waits on that nothing else depends on (see {@link #awaiting}): only
   * while that call waits, so empty whenever no call blocks.
   */
  private static final Set<CompletableFuture<?>> AWAITED = ConcurrentHashMap.newKeySet();

  /** Tasks handed to the callback thread that have not finished yet. */
  @Bookkept("session.callbacksPending")
  private final AtomicInteger pendingCallbacks = new AtomicInteger();

  /** Set once both threads have ended: from then on their state may be read directly. */
  private volatile boolean stopped;

  /**
   * Starts nothing yet: each thread starts with its first task. At {@link #stop} they end in a
   * chain, each stage's end shutting the next down: the progress thread (which may hand a read to
   * the reader), then the reader (which may hand a failure to the callback thread), then the
   * callback thread.
   */
  LibraryThreads(Role role) {
    this.role = requireNonNull(role, "role");
    this.callbacks = new Stage(new Factory(role, role.callbackThread(), threads), null);
    // Like the callback thread, the reader starts with its first task: a cycle on hash has none.
    this.reader = new Stage(new Factory(role, role.gdsThread(), threads), callbacks);
    this.loop = new ProgressLoop(new Factory(role, role.progressThread(), threads));
    loop.whenTerminated(new ShutDown(reader));
  }

  /**
   * A single-thread executor whose thread starts with its first task and that shuts {@code next}
   * down once it has terminated (on its own thread as it ends, or in the caller of shutdown when
   * it never started one).
   */
  private static final class Stage extends ThreadPoolExecutor {
    private final @Nullable ExecutorService next;

    Stage(ThreadFactory factory, @Nullable ExecutorService next) {
      super(1, 1, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), factory);
      this.next = next;
    }

    @Override
    protected void terminated() {
      if (next != null) {
        next.shutdown();
      }
    }
  }

  /** Shuts an executor down (the progress loop's last act). */
  private static final class ShutDown implements Runnable {
    private final ExecutorService e;

    ShutDown(ExecutorService e) {
      this.e = e;
    }

    @Override
    public void run() {
      e.shutdown();
    }
  }

  // Classes, not lambdas, on the way of a first init and a blocking call: a lambda's first call
  // links its call site, ~0.1-0.3 ms of a fresh JVM (docs/architecture.md, "First requests").

  /** Makes library threads with this exact name, each added to {@code started}. */
  private static final class Factory implements ThreadFactory {
    private final Role role;
    private final String name;
    private final List<Thread> started;

    Factory(Role role, String name, List<Thread> started) {
      this.role = requireNonNull(role, "role");
      this.name = requireNonNull(name, "name");
      this.started = started;
    }

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new LibraryThread(r, name, role);
      started.add(t);
      return t;
    }
  }

  /** Whether the calling thread is one of {@code role}'s library threads. */
  public static boolean onLibraryThread(Role role) {
    return Thread.currentThread() instanceof LibraryThread t && t.role.equals(role);
  }

  /**
   * Fails fast if the caller is one of {@code role}'s threads, where waiting would deadlock.
   *
   * @throws IllegalStateException on the role's progress or callback thread
   */
  public static void checkMayBlock(Role role, String operation) {
    if (onLibraryThread(role)) {
      throw new IllegalStateException(
          "blocking "
              + role.api()
              + "."
              + operation
              + " called on the library's thread "
              + Thread.currentThread().getName()
              + " (from an event handler or a future's callback); use the non-blocking form");
    }
  }

  /** The role whose threads these are. */
  Role role() {
    return role;
  }

  /** The progress thread's loop (for the connection's socket and timers). */
  ProgressLoop loop() {
    return loop;
  }

  /** The threads started so far (for teardown checks). */
  List<Thread> threads() {
    return List.copyOf(threads);
  }

  /**
   * Has the progress loop end once its current task is done (a last finalize's answer, on the
   * progress thread): the chain of ends {@link #stop} waits for starts at once. Work handed in
   * from then on is refused as after a finalize.
   */
  void endLoop() {
    loop.shutdown();
  }

  /** Whether the progress loop no longer takes work ({@link #endLoop} or {@link #stop}). */
  boolean loopEnding() {
    return loop.isShutdown();
  }

  /** Whether both threads have been stopped and waited for. */
  boolean isStopped() {
    return stopped;
  }

  // ---------------------------------------------------------------------------------------------
  // Hand-off to the progress thread and back

  /** Runs {@code body} on the progress thread; its failures complete the future. */
  <T> CompletableFuture<T> call(Consumer<CompletableFuture<T>> body) {
    CompletableFuture<T> f = new CompletableFuture<>();
    call(f, body);
    return f;
  }

  /** Runs {@code body} with {@code f} on the progress thread; its failures complete {@code f}. */
  <T> void call(CompletableFuture<T> f, Consumer<CompletableFuture<T>> body) {
    try {
      loop.execute(new Call<>(body, f));
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(finalized(e));
    }
  }

  /** A body run on the progress thread; its failure fails the future. */
  private final class Call<T> implements Runnable {
    private final Consumer<CompletableFuture<T>> body;
    private final CompletableFuture<T> f;

    Call(Consumer<CompletableFuture<T>> body, CompletableFuture<T> f) {
      this.body = body;
      this.f = f;
    }

    @Override
    public void run() {
      try {
        body.accept(f);
      } catch (RuntimeException e) {
        fail(f, e);
      }
    }
  }

  /**
   * Runs {@code task} on the progress thread and returns at once.
   *
   * @throws PmixException with {@code ERR_INIT} after the last finalize
   */
  void execute(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      throw finalized(e);
    }
  }

  /** The failure of work handed in after the last finalize. */
  PmixException finalized(@Nullable Throwable cause) {
    return new PmixException(Status.ERR_INIT, role.api() + " has been finalized", cause);
  }

  /**
   * Marks {@code f} as waited on by a blocking call on the calling thread until {@code release}
   * is closed, when nothing depends on it yet. Such a future holds no application code, so the
   * progress thread may complete it itself (one hand-off less per blocking call: the caller wakes
   * at once) when no callback is pending: every event handler delivered before has then returned,
   * the order C keeps between handlers and blocking returns.
   */
  static Runnable awaiting(CompletableFuture<?> f) {
    if (f.isDone() || f.getNumberOfDependents() != 0 || !AWAITED.add(f)) {
      return NOT_AWAITED;
    }
    return new Awaited(f);
  }

  private static final Runnable NOT_AWAITED =
      new Runnable() {
        @Override
        public void run() {}
      };

  /** Ends the marking of a future as waited on by a blocking call. */
  private static final class Awaited implements Runnable {
    private final CompletableFuture<?> f;

    Awaited(CompletableFuture<?> f) {
      this.f = f;
    }

    @Override
    public void run() {
      AWAITED.remove(f);
    }
  }

  /**
   * Whether the progress thread may complete {@code f} itself (see {@link #awaiting}). Before the
   * callback thread has started nothing was handed to it, so nothing is pending: a cycle whose
   * calls all block (init, put, commit, fence, get, finalize) does not start it, which spares a
   * thread's start at init and its stop at finalize (issue 15). Init's future is marked before
   * its hand-off; a blocking call's other futures when the caller begins to wait, so one that the
   * progress thread completes before that still goes through the callback thread.
   */
  private boolean direct(CompletableFuture<?> f) {
    return pendingCallbacks.get() == 0 && loop.inLoop() && AWAITED.contains(f);
  }

  /**
   * Completes a future on the callback thread, so application code never runs on ours; a future
   * only a blocking call waits on, directly (see {@link #awaiting}).
   */
  <T> void complete(CompletableFuture<T> f, @Nullable T value) {
    if (direct(f)) {
      f.complete(value);
      return;
    }
    if (!onCallbackThread(new Completion<>(f, value, null))) {
      f.complete(value);
    }
  }

  /** Fails a future on the callback thread (directly as {@link #complete} does). */
  void fail(CompletableFuture<?> f, Throwable t) {
    if (direct(f)) {
      f.completeExceptionally(t);
      return;
    }
    if (!onCallbackThread(new Completion<>(f, null, t))) {
      f.completeExceptionally(t);
    }
  }

  /** Completes a future with a value, or fails it with {@code failure}. */
  private static final class Completion<T> implements Runnable {
    private final CompletableFuture<T> f;
    private final @Nullable T value;
    private final @Nullable Throwable failure;

    Completion(CompletableFuture<T> f, @Nullable T value, @Nullable Throwable failure) {
      this.f = f;
      this.value = value;
      this.failure = failure;
    }

    @Override
    public void run() {
      if (failure != null) {
        f.completeExceptionally(failure);
      } else {
        f.complete(value);
      }
    }
  }

  /** Hands {@code task} to the callback thread, counted while pending; false once stopping. */
  private boolean onCallbackThread(Runnable task) {
    pendingCallbacks.incrementAndGet();
    try {
      callbacks.execute(new Counted(task));
      return true;
    } catch (RejectedExecutionException e) {
      pendingCallbacks.decrementAndGet();
      return false;
    }
  }

  /** A task on the callback thread, counted while pending. */
  private final class Counted implements Runnable {
    private final Runnable task;

    Counted(Runnable task) {
      this.task = task;
    }

    @Override
    public void run() {
      try {
        task.run();
      } finally {
        pendingCallbacks.decrementAndGet();
      }
    }
  }

  /**
   * Runs {@code task} on the reader thread, in order with the tasks handed to it before.
   *
   * @throws RejectedExecutionException once the threads are stopping
   */
  void read(Runnable task) {
    reader.execute(task);
  }

  /**
   * Runs application code (event handlers, output sinks) on the callback thread, after every
   * completion handed to it before; a handler that throws is logged and the rest still run.
   * Dropped once finalizing: nothing is delivered any more then.
   */
  void deliver(String what, List<Runnable> handlers) {
    if (handlers.isEmpty()) {
      return;
    }
    // False when finalizing: nothing is delivered any more.
    var unused =
        onCallbackThread(
            () -> {
              for (Runnable h : handlers) {
                try {
                  h.run();
                } catch (RuntimeException ex) {
                  LOG.log(Level.WARNING, what + " threw; continuing", ex);
                }
              }
            });
  }

  /**
   * {@code read} on the progress thread while it runs (so that state confined to it is read
   * safely), directly once it has ended or when it does not answer.
   */
  <T> T read(Supplier<T> read) {
    if (!stopped && !loop.inLoop()) {
      CompletableFuture<T> f = new CompletableFuture<>();
      try {
        loop.execute(() -> f.complete(read.get()));
        return f.get(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
        // Stopping meanwhile: fall through to a direct read.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return read.get();
  }

  /**
   * Stops both threads and waits until they have ended; afterwards {@link #isStopped} is true.
   * Returns whether the caller was interrupted meanwhile (its flag is set again by the caller once
   * the rest of the teardown is done).
   */
  boolean stop() {
    // The threads end in a chain (the constructor), and the caller waits for its last link only:
    // waking the caller after each link cost a finalize on a busy machine ~0.1-1 ms a link.
    loop.shutdown();
    boolean interrupted = false;
    try {
      if (!callbacks.awaitTermination(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        if (!loop.isTerminated()) {
          LOG.log(Level.WARNING, "the PMIx progress thread did not stop in time");
        }
      }
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (!callbacks.isTerminated()) {
      // A link did not end in time (or the wait was interrupted): each stage in order, directly.
      // A read still running finds the progress thread gone and fails its get on the callback
      // thread, so the reader stops before the callback thread does.
      interrupted |= !awaitStopped(reader);
      interrupted |= !awaitStopped(callbacks);
    }
    for (Thread t : threads) {
      try {
        t.join(THREAD_STOP_WAIT.toMillis());
      } catch (InterruptedException e) {
        interrupted = true;
      }
      if (t.isAlive()) {
        LOG.log(Level.WARNING, "PMIx thread {0} did not stop", t.getName());
      }
    }
    stopped = true;
    return interrupted;
  }

  /** Shuts {@code e} down and waits for it; false if interrupted meanwhile. */
  private static boolean awaitStopped(ExecutorService e) {
    e.shutdown();
    try {
      if (!e.awaitTermination(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        e.shutdownNow();
      }
      return true;
    } catch (InterruptedException ex) {
      e.shutdownNow();
      return false;
    }
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("session.threadsAlive", threads.stream().filter(Thread::isAlive).count());
    m.put("session.eventLoopRunning", loop.isTerminated() ? 0L : 1L);
    m.put("session.callbackExecutorRunning", callbacks.isTerminated() ? 0L : 1L);
    m.put("session.gdsReaderRunning", reader.isTerminated() ? 0L : 1L);
    m.put("session.callbacksPending", (long) pendingCallbacks.get());
    return m;
  }

  @Override
  public Map<String, Object> resources() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("progressLoop", loop);
    m.put("callbackExecutor", callbacks);
    m.put("gdsReader", reader);
    for (Thread t : threads) {
      m.put("thread " + t.getName(), t);
    }
    return m;
  }

  /**
   * Nothing to drop: the threads have ended (the list of them stays, so a finished cycle can be
   * checked for threads that outlived it).
   */
  @Override
  public void release() {}
}
