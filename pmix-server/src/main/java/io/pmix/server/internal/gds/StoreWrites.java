package io.pmix.server.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.internal.LazyLogger;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;

/**
 * The writer thread of the shared-memory stores, and the gate that orders what the server tells
 * store readers after those writes.
 *
 * <p>A write takes the readers' locks (docs/gds.md section 5): a reader that stops while holding
 * one (stopped, traced, killed inside its copy) makes the writer wait up to the lock timeout. So
 * writes run here, one at a time in submission order, and the progress thread keeps serving
 * everyone else meanwhile; it writes itself only what waits for nothing (a small job's write
 * while this thread is {@linkplain #idle idle} and every lock is free: {@code
 * SharedStores.storeNow}), and then nothing is submitted here. What a store reader is told after
 * a write was submitted (its job data's REQ reply, a fence release, a direct-modex answer) must
 * not overtake the write, or the reader looks before the data is there: {@link #afterWrites}
 * holds such an action until every write submitted before it has ended, in the order the actions
 * came.
 *
 * <p>{@link #submit} and {@link #afterWrites} are called on the progress thread only; the
 * counters are its state. The writes themselves run on the writer thread and must not touch the
 * progress thread's state: they get copies.
 */
public final class StoreWrites {
  private static final System.Logger LOG = LazyLogger.of(StoreWrites.class);

  private final Executor loop;
  private final ExecutorService writer;
  /** Writes submitted, and writes ended (successfully or not); progress thread only. */
  private long submitted;

  private long ended;
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

  private record Waiting(long after, Runnable action) {}

  /** A writer whose completions are handed to {@code loop}, the progress thread. */
  StoreWrites(Executor loop) {
    this.loop = requireNonNull(loop, "loop");
    this.writer = Executors.newSingleThreadExecutor(new ThreadFactory() { // not Netty's: no Netty class on a job's path
              @Override
              public Thread newThread(Runnable r) {
                Thread t = new Thread(r, "pmix-gds-writer");
                t.setDaemon(true);
                return t;
              }
            });
  }

  /** Runs {@code write} on the writer thread after every write submitted before it. */
  void submit(Runnable write) {
    requireNonNull(write, "write");
    submitted++;
    try {
      writer.execute(
          () -> {
            try {
              write.run();
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "a shared-memory store write failed", e);
            } finally {
              ended();
            }
          });
    } catch (RejectedExecutionException e) {
      // Closed: the stores are gone, and so is what the write would have shown.
      submitted--;
    }
  }

  private void ended() {
    try {
      loop.execute(
          () -> {
            ended++;
            while (!waiting.isEmpty() && waiting.peekFirst().after() <= ended) {
              waiting.pollFirst().action().run();
            }
          });
    } catch (RejectedExecutionException e) {
      // The progress thread stopped first (its server's shutdown waits for close, so only a
      // server that never started): nothing waits any more.
      LOG.log(Level.DEBUG, "store write ended after the progress thread stopped");
    }
  }

  /**
   * Whether every write submitted has ended and its end has been seen here, on the progress
   * thread: the writer thread has nothing to do, and what it did happened before this call (its
   * end reached us through the progress thread's queue). Progress thread only.
   */
  boolean idle() {
    return ended >= submitted && waiting.isEmpty();
  }

  /**
   * Runs {@code action} now if no write is under way, else once every write submitted so far has
   * ended; actions run in the order given. Progress thread only.
   */
  public void afterWrites(Runnable action) {
    requireNonNull(action, "action");
    if (ended >= submitted && waiting.isEmpty()) {
      action.run();
    } else {
      waiting.addLast(new Waiting(submitted, action));
    }
  }

  /** Completes (on the progress thread) once every write submitted so far has ended. */
  public CompletableFuture<Void> written() {
    CompletableFuture<Void> f = new CompletableFuture<>();
    afterWrites(() -> f.complete(null));
    return f;
  }

  /**
   * Runs {@code last} after every write, then stops the writer thread. The stage completes on the
   * writer thread when {@code last} has run. Progress thread only; idempotent.
   */
  CompletableFuture<Void> close(Runnable last) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      writer.execute(
          () -> {
            try {
              last.run();
            } finally {
              done.complete(null);
            }
          });
    } catch (RejectedExecutionException e) {
      done.complete(null); // closed before
    }
    writer.shutdown();
    return done;
  }
}
