package io.pmix.dataserver;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.dataserver.internal.StoreRehearsal;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DataStore} embedded in this process, behind the asynchronous {@link DataService}
 * interface: what a single PMIx server (pmixrun by default) serves its clients' publish, lookup and
 * unpublish from.
 *
 * <p>Threading and ownership: the service owns one thread, the only one that touches the store
 * (it is the store's serializing context), and schedules the store's timeouts on it. Stages
 * complete on that thread. {@link #close()} stops it and waits until it has stopped.
 */
public final class LocalDataService implements DataService {
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final DataStore store;
  private final ScheduledThreadPoolExecutor executor;
  private final System.Logger log;
  // Confined to the executor thread.
  private @Nullable ScheduledFuture<?> sweep;
  private long sweepAt = Long.MAX_VALUE;

  private LocalDataService(DataStoreOptions options) {
    this.store = new DataStore(options);
    this.log = options.logger();
    int n = INSTANCES.incrementAndGet();
    this.executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "pmix-datastore-" + n);
              t.setDaemon(true);
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    // The store's code runs once now, on this thread and a store of its own, so that the first
    // client's publish does not pay its first execution (StoreRehearsal).
    executor.execute(
        () -> {
          boolean unused = StoreRehearsal.run(options);
        });
  }

  /** A service over a new store with these options. */
  public static LocalDataService create(DataStoreOptions options) {
    return new LocalDataService(requireNonNull(options, "options"));
  }

  /** A service over a new store with the default options. */
  public static LocalDataService create() {
    return create(DataStoreOptions.defaults());
  }

  @Override
  public CompletionStage<Status> publish(Identity publisher, List<Info> info) {
    requireNonNull(publisher, "publisher");
    List<Info> copy = List.copyOf(info);
    return call(
        new Supplier<Status>() {
          @Override
          public Status get() {
            return store.publish(publisher, copy);
          }
        },
        Status.ERR_NOT_AVAILABLE);
  }

  @Override
  public CompletionStage<LookupResult> lookup(
      Identity requester, List<String> keys, List<Info> directives) {
    requireNonNull(requester, "requester");
    List<String> k = List.copyOf(keys);
    List<Info> d = List.copyOf(directives);
    CompletableFuture<LookupResult> result = new CompletableFuture<>();
    if (!submit(new Lookup(requester, k, d, result))) {
      result.complete(LookupResult.of(Status.ERR_NOT_AVAILABLE));
    }
    return result;
  }

  /**
   * A lookup, run on the store's thread; its answer completes {@code result}. Classes, not
   * lambdas, on the paths of publish, lookup, unpublish and the lifetimes: a lambda's first call
   * costs a fresh JVM 0.1-0.2 ms, and a job makes each of these calls only a few times
   * (docs/architecture.md, "First requests").
   */
  private final class Lookup implements Runnable, Consumer<LookupResult> {
    private final Identity requester;
    private final List<String> keys;
    private final List<Info> directives;
    private final CompletableFuture<LookupResult> result;

    Lookup(
        Identity requester,
        List<String> keys,
        List<Info> directives,
        CompletableFuture<LookupResult> result) {
      this.requester = requester;
      this.keys = keys;
      this.directives = directives;
      this.result = result;
    }

    @Override
    public void accept(LookupResult r) {
      result.complete(r);
    }

    @Override
    public void run() {
      DataStore.PendingLookup pending = store.lookup(requester, keys, directives, this);
      if (!pending.isDone()) {
        cancelWhenAbandoned(pending);
      }
      reschedule();
    }

    /** The caller giving up (its requester left) cancels the waiting lookup in the store. */
    private void cancelWhenAbandoned(DataStore.PendingLookup pending) {
      CompletableFuture<LookupResult> unused =
          result.whenComplete(
              (r, e) -> {
                if (result.isCancelled()) {
                  // Rejected only once closed, when close() cancels every lookup anyway.
                  boolean unusedAccepted =
                      submit(() -> pending.cancel(Status.ERR_LOST_CONNECTION));
                }
              });
    }
  }

  @Override
  public CompletionStage<Status> unpublish(
      Identity requester, List<String> keys, List<Info> directives) {
    requireNonNull(requester, "requester");
    List<String> k = List.copyOf(keys);
    List<Info> d = List.copyOf(directives);
    return call(
        new Supplier<Status>() {
          @Override
          public Status get() {
            return store.unpublish(requester, k, d);
          }
        },
        Status.ERR_NOT_AVAILABLE);
  }

  @Override
  public CompletionStage<Status> procEnded(Proc proc) {
    requireNonNull(proc, "proc");
    return run(
        new Runnable() {
          @Override
          public void run() {
            store.procEnded(proc);
          }
        });
  }

  @Override
  public CompletionStage<Status> appEnded(String nspace, int appNumber) {
    requireNonNull(nspace, "nspace");
    if (appNumber == Identity.UNKNOWN) {
      throw new IllegalArgumentException("an application number is needed");
    }
    return run(
        new Runnable() {
          @Override
          public void run() {
            store.appEnded(nspace, appNumber);
          }
        });
  }

  @Override
  public CompletionStage<Status> namespaceEnded(String nspace) {
    requireNonNull(nspace, "nspace");
    return run(
        new Runnable() {
          @Override
          public void run() {
            store.namespaceEnded(nspace);
          }
        });
  }

  @Override
  public CompletionStage<Status> sessionEnded(int sessionId) {
    return run(
        new Runnable() {
          @Override
          public void run() {
            store.sessionEnded(sessionId);
          }
        });
  }

  /**
   * Runs {@code action} on the store's thread with the store, for inspection by tests and
   * operators; the stage completes with what it returns.
   */
  public <T> CompletionStage<T> inspect(Function<DataStore, T> action) {
    requireNonNull(action, "action");
    return call(() -> action.apply(store), null);
  }

  @Override
  public void close() {
    if (!executor.isShutdown()) {
      try {
        executor.execute(() -> store.cancelAll(Status.ERR_NOT_AVAILABLE));
      } catch (RejectedExecutionException e) {
        // Closed concurrently: the other close cancels.
      }
      executor.shutdown();
    }
    boolean interrupted = false;
    while (true) {
      try {
        if (executor.awaitTermination(1, TimeUnit.MINUTES)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------

  private CompletionStage<Status> run(Runnable action) {
    return call(new Succeeding(action), Status.ERR_NOT_AVAILABLE);
  }

  /** An action that answers SUCCESS once done. */
  private static final class Succeeding implements Supplier<Status> {
    private final Runnable action;

    Succeeding(Runnable action) {
      this.action = action;
    }

    @Override
    public Status get() {
      action.run();
      return Status.SUCCESS;
    }
  }

  /**
   * Runs {@code action} on the store's thread. A closed service completes with {@code whenClosed}
   * (null: exceptionally, for {@link #inspect}); an exception from the action completes the stage
   * exceptionally, which only a bug (or an inspecting caller's own code) can cause.
   */
  private <T> CompletionStage<T> call(Supplier<T> action, @Nullable T whenClosed) {
    CompletableFuture<T> f = new CompletableFuture<>();
    boolean accepted = submit(new Call<>(action, f));
    if (!accepted) {
      if (whenClosed != null) {
        f.complete(whenClosed);
      } else {
        f.completeExceptionally(new IllegalStateException("the data service is closed"));
      }
    }
    return f;
  }

  /** An action run on the store's thread, completing its stage with what it returns. */
  private final class Call<T> implements Runnable {
    private final Supplier<T> action;
    private final CompletableFuture<T> stage;

    Call(Supplier<T> action, CompletableFuture<T> stage) {
      this.action = action;
      this.stage = stage;
    }

    @Override
    public void run() {
      try {
        stage.complete(action.get());
      } catch (RuntimeException e) {
        stage.completeExceptionally(e);
      }
      reschedule();
    }
  }

  private boolean submit(Runnable r) {
    try {
      executor.execute(r);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** Arms the one timer for the store's next deadline, if it is earlier than the armed one. */
  private void reschedule() {
    Optional<Duration> next = store.untilNextDeadline();
    if (next.isEmpty()) {
      return;
    }
    long delay = next.get().toNanos();
    long at = System.nanoTime() + delay;
    if (sweep != null && !sweep.isDone() && sweepAt - at <= 0) {
      return;
    }
    if (sweep != null) {
      boolean unused = sweep.cancel(false);
    }
    sweepAt = at;
    try {
      sweep = executor.schedule(this::onSweep, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      log.log(Level.DEBUG, "not arming the store's timer: the service is closed");
    }
  }

  private void onSweep() {
    sweep = null;
    sweepAt = Long.MAX_VALUE;
    store.advance();
    reschedule();
  }
}
