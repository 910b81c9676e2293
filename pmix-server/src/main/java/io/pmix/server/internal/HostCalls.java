package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.LazyLogger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one way host code runs: an upcall or an epilog goes to the host's executor, never the
 * progress thread, and an upcall's outcome comes back to the progress thread. Every part of the
 * server that asks the host something goes through here, so no host code can run on the loop or
 * under a lock by accident.
 */
public final class HostCalls {
  private static final System.Logger LOG = LazyLogger.of(HostCalls.class);

  /** What to do, on the progress thread, with an upcall's result or failure status. */
  public interface Done<T> {
    /** The upcall's value (on success) or its failure status (else null). */
    void done(@Nullable T value, @Nullable Status failure);
  }

  private final Executor loop;
  private final Executor hostExecutor;

  /**
   * Host calls of one server.
   *
   * @param loop the progress thread, where outcomes are handled
   * @param hostExecutor where host code runs
   */
  public HostCalls(Executor loop, Executor hostExecutor) {
    this.loop = requireNonNull(loop, "loop");
    this.hostExecutor = requireNonNull(hostExecutor, "hostExecutor");
  }

  /**
   * Runs an upcall on the host executor and hands its outcome back to the progress thread. A
   * host that throws, returns null or fails with a non-PMIx exception is a {@code PMIX_ERROR};
   * an executor that refuses the upcall is {@code ERR_NOT_AVAILABLE}, answered at once.
   */
  public <T> void call(Supplier<CompletionStage<T>> upcall, Done<T> done) {
    try {
      hostExecutor.execute(new Upcall<>(upcall, done, loop));
    } catch (RejectedExecutionException e) {
      done.done(null, Status.ERR_NOT_AVAILABLE);
    }
  }

  /**
   * Runs an upcall that returns at once ({@code HostModule.dataCallsReturnAtOnce},
   * {@code clientCallsReturnAtOnce}) here, on the progress thread, and hands its outcome back to
   * the loop as {@link #call} does (a stage completed already is handled after the current task,
   * never inside the upcall's caller). A host that throws or returns null is a {@code
   * PMIX_ERROR}.
   */
  public <T> void callHere(Supplier<CompletionStage<T>> upcall, Done<T> done) {
    new Upcall<>(upcall, done, loop).run();
  }

  /**
   * {@link #callHere} when the host said this upcall returns at once, else {@link #call}.
   *
   * @param returnsAtOnce what the host answered for this upcall, read when the server was made
   */
  public <T> void call(
      Supplier<CompletionStage<T>> upcall, Done<T> done, boolean returnsAtOnce) {
    if (returnsAtOnce) {
      callHere(upcall, done);
    } else {
      call(upcall, done);
    }
  }

  /**
   * One upcall, run on the host executor (or here: {@link #callHere}), whose outcome goes back to the loop. Classes, not
   * lambdas, on the request paths: a lambda's first call costs a fresh server 0.1-0.2 ms
   * (docs/architecture.md, "First requests").
   */
  private static final class Upcall<T> implements Runnable, BiConsumer<T, Throwable> {
    private final Supplier<CompletionStage<T>> upcall;
    private final Done<T> done;
    private final Executor loop;

    Upcall(Supplier<CompletionStage<T>> upcall, Done<T> done, Executor loop) {
      this.upcall = upcall;
      this.done = done;
      this.loop = loop;
    }

    @Override
    public void run() {
      CompletionStage<T> stage;
      try {
        stage = requireNonNull(upcall.get(), "host returned a null stage");
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "host upcall threw", e);
        stage = CompletableFuture.failedFuture(e);
      }
      stage.whenComplete(this);
    }

    @Override
    public void accept(@Nullable T value, @Nullable Throwable e) {
      try {
        loop.execute(new Outcome<>(done, value, e == null ? null : statusOf(e)));
      } catch (RejectedExecutionException ex) {
        // The server stopped meanwhile; nobody is left to answer.
      }
    }
  }

  /** An upcall's outcome, handled on the loop. */
  private static final class Outcome<T> implements Runnable {
    private final Done<T> done;
    private final @Nullable T value;
    private final @Nullable Status failure;

    Outcome(Done<T> done, @Nullable T value, @Nullable Status failure) {
      this.done = done;
      this.value = value;
      this.failure = failure;
    }

    @Override
    public void run() {
      done.done(value, failure);
    }
  }

  /** Runs host-registered cleanup on the host executor, in order; a failing one is logged. */
  public void runEpilogs(List<Runnable> epilogs) {
    if (epilogs.isEmpty()) {
      return;
    }
    List<Runnable> copy = List.copyOf(epilogs);
    try {
      hostExecutor.execute(
          () -> {
            for (Runnable r : copy) {
              try {
                r.run();
              } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "an epilog failed", e);
              }
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.log(Level.WARNING, "epilogs not run: the host executor refused them");
    }
  }

  /** The PMIx status a host failure stands for: a PmixException's, else {@code PMIX_ERROR}. */
  public static Status statusOf(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof PmixException pe ? pe.status() : Status.ERROR;
  }
}
