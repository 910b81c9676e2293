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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * <p>Threading and ownership: the store is confined to one thread, its serializing context, which
 * also runs its timeouts; stages complete there. Either the service owns that thread ({@link
 * #create(DataStoreOptions)}: {@link #close()} stops it and waits until it has stopped), or it
 * borrows a single-threaded executor ({@link #create(DataStoreOptions, ScheduledExecutorService)},
 * such as a PMIx server's {@code progressExecutor()}, so that a host whose data calls return at
 * once serves them without crossing a thread), which it never shuts down: {@link #close()} then
 * fails the waiting lookups there and waits for that. Either way, once {@code close} has begun,
 * calls are answered {@code PMIX_ERR_NOT_AVAILABLE}, queued ones included.
 */
public final class LocalDataService implements DataService {
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final DataStore store;
  private final ScheduledExecutorService executor;
  /** The executor when the service made it (and stops it), else null: a borrowed one. */
  private final @Nullable ScheduledThreadPoolExecutor owned;
  private final System.Logger log;
  /** The store's thread, known once the service's first task ran there. */
  private volatile @Nullable Thread storeThread;
  /** Set when {@link #close()} begins: no call is taken after it. */
  private volatile boolean closing;
  // Confined to the store's thread.
  private @Nullable ScheduledFuture<?> sweep;
  private long sweepAt = Long.MAX_VALUE;
  private boolean closed;

  private LocalDataService(
      DataStoreOptions options, @Nullable ScheduledExecutorService borrowed) {
    this.store = new DataStore(options);
    this.log = options.logger();
    if (borrowed == null) {
      int n = INSTANCES.incrementAndGet();
      ScheduledThreadPoolExecutor e =
          new ScheduledThreadPoolExecutor(
              1,
              r -> {
                Thread t = new Thread(r, "pmix-datastore-" + n);
                t.setDaemon(true);
                return t;
              });
      e.setRemoveOnCancelPolicy(true);
      e.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      this.owned = e;
      this.executor = e;
    } else {
      this.owned = null;
      this.executor = borrowed;
    }
    executor.execute(() -> storeThread = Thread.currentThread());
    // The store's code runs once now, on a store of its own, so that the first client's publish
    // does not pay its first execution (StoreRehearsal): on the service's own thread, or on one
    // for the purpose, never on a borrowed executor (a server's progress thread has the first
    // clients' handshakes to do then).
    Runnable rehearse = new Rehearse(options);
    if (borrowed == null) {
      executor.execute(rehearse);
    } else {
      Thread t = new Thread(rehearse, "pmix-datastore-rehearsal");
      t.setDaemon(true);
      t.start();
    }
  }

  /** {@link StoreRehearsal#run}, on whatever thread runs it. */
  private static final class Rehearse implements Runnable {
    private final DataStoreOptions options;

    Rehearse(DataStoreOptions options) {
      this.options = options;
    }

    @Override
    public void run() {
      boolean unused = StoreRehearsal.run(options);
    }
  }

  /** A service over a new store with these options, on a thread of its own. */
  public static LocalDataService create(DataStoreOptions options) {
    return new LocalDataService(requireNonNull(options, "options"), null);
  }

  /** A service over a new store with the default options, on a thread of its own. */
  public static LocalDataService create() {
    return create(DataStoreOptions.defaults());
  }

  /**
   * A service over a new store with these options, run on {@code executor}, which must run its
   * tasks one at a time, in the order given, on one thread (a PMIx server's {@code
   * progressExecutor()} does). The service runs its store and its timers there and never shuts
   * the executor down; a call made on that thread is queued behind the task making it, never run
   * inside it. {@link #close()} must not be called on that thread while the executor runs tasks
   * other than the current one (it waits for one of its own).
   *
   * @throws java.util.concurrent.RejectedExecutionException if the executor takes no task
   */
  public static LocalDataService create(
      DataStoreOptions options, ScheduledExecutorService executor) {
    return new LocalDataService(
        requireNonNull(options, "options"), requireNonNull(executor, "executor"));
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
      if (closed) {
        result.complete(LookupResult.of(Status.ERR_NOT_AVAILABLE));
        return;
      }
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
    closing = true;
    CloseStore closeStore = new CloseStore();
    ScheduledThreadPoolExecutor e = owned;
    if (e != null) {
      if (!e.isShutdown()) {
        try {
          e.execute(closeStore);
        } catch (RejectedExecutionException ex) {
          // Closed concurrently: the other close closes the store.
        }
        e.shutdown();
      }
      awaitUninterruptibly(e);
      return;
    }
    if (Thread.currentThread() == storeThread) {
      closeStore.run();
      return;
    }
    try {
      executor.execute(closeStore);
    } catch (RejectedExecutionException ex) {
      if (!executor.isShutdown()) {
        log.log(Level.WARNING, "the data store's executor refused its close: {0}", ex.toString());
        return;
      }
      // The executor stopped (its server shut down): once it has terminated nothing of ours runs
      // there any more, so the store is closed here.
      awaitUninterruptibly(executor);
      closeStore.run();
      return;
    }
    // Until it ran, or the executor terminated with it still queued (a server shutting down
    // meanwhile), when the store is closed here.
    boolean interrupted = false;
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!closeStore.done.isDone()) {
      if (System.nanoTime() - deadline > 0) {
        log.log(Level.WARNING, "the data store's executor did not run its close within a minute");
        break;
      }
      if (executor.isTerminated()) {
        closeStore.run();
        break;
      }
      try {
        closeStore.done.get(50, TimeUnit.MILLISECONDS);
      } catch (InterruptedException ex) {
        interrupted = true;
      } catch (ExecutionException | TimeoutException ex) {
        // Not yet: look again.
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitUninterruptibly(ExecutorService e) {
    boolean interrupted = false;
    while (true) {
      try {
        if (e.awaitTermination(1, TimeUnit.MINUTES)) {
          break;
        }
      } catch (InterruptedException ex) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Closes the store on its thread: the waiting lookups fail, the timer stops, and every call
   * still queued is answered as closed.
   */
  private final class CloseStore implements Runnable {
    final CompletableFuture<Void> done = new CompletableFuture<>();

    @Override
    public void run() {
      if (!closed) {
        closed = true;
        ScheduledFuture<?> s = sweep;
        if (s != null) {
          boolean unused = s.cancel(false);
          sweep = null;
        }
        store.cancelAll(Status.ERR_NOT_AVAILABLE);
      }
      done.complete(null);
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
    boolean accepted = submit(new Call<>(action, f, whenClosed));
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
    private final @Nullable T whenClosed;

    Call(Supplier<T> action, CompletableFuture<T> stage, @Nullable T whenClosed) {
      this.action = action;
      this.stage = stage;
      this.whenClosed = whenClosed;
    }

    @Override
    public void run() {
      if (closed) {
        if (whenClosed != null) {
          stage.complete(whenClosed);
        } else {
          stage.completeExceptionally(new IllegalStateException("the data service is closed"));
        }
        return;
      }
      try {
        stage.complete(action.get());
      } catch (RuntimeException e) {
        stage.completeExceptionally(e);
      }
      reschedule();
    }
  }

  private boolean submit(Runnable r) {
    if (closing) {
      return false;
    }
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
    if (closed) {
      return;
    }
    store.advance();
    reschedule();
  }
}
