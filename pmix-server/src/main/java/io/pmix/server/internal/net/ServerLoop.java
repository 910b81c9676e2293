package io.pmix.server.internal.net;

import static java.util.Objects.requireNonNull;

import io.pmix.common.internal.LazyLogger;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The server's progress thread on epoll: one thread running the tasks handed to it, its timers
 * and the readiness of its descriptors, one at a time, in that order. Takes the place of a Netty
 * event loop (docs/architecture.md, "A server transport without Netty"): a fresh JVM loads a few
 * classes of ours instead of Netty's transport, and a wake-up costs the descriptors that are
 * ready.
 *
 * <p>Tasks come from any thread ({@link #execute}, the {@code schedule} methods); descriptors are
 * registered, changed and removed on the loop's thread only, each with its {@link Handler}. At
 * most {@link #TASK_BATCH} tasks run between two waits, so tasks that hand in tasks do not keep
 * the sockets waiting. {@link #shutdown} runs what was handed in before, then ends the thread; the
 * descriptors are their owners' to close. Timers are cancelled at the end.
 */
public final class ServerLoop extends AbstractExecutorService implements ScheduledExecutorService {
  private static final System.Logger LOG = LazyLogger.of(ServerLoop.class);

  /** The most tasks run before the loop looks at its descriptors again. */
  static final int TASK_BATCH = 1024;

  /** What a registered descriptor is told; called on the loop's thread. */
  public interface Handler {
    /** The descriptor is ready: {@code events} are epoll's bits ({@link Epoll#EPOLLIN}...). */
    void ready(int events);
  }

  private static final int RUNNING = 0;
  private static final int SHUTTING_DOWN = 1;
  private static final int TERMINATED = 2;

  private final int epfd;
  private final Object wakeLock = new Object();
  /** The eventfd; -1 once closed (under {@link #wakeLock}). */
  private int efd;

  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean wakenUp = new AtomicBoolean();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final Thread thread;
  private volatile int state = RUNNING;
  /** Run on the thread as it ends ({@link #whenTerminated}). */
  private volatile @Nullable Runnable afterTermination;

  // ---- the loop's thread only ----
  private final PriorityQueue<LoopTimer<?>> timers = new PriorityQueue<>();
  private long timerSeq;
  private @Nullable Handler[] handlers = new Handler[64];
  private final int[] ready = new int[2 * Epoll.WAIT_MAX];

  /**
   * A loop whose thread {@code threadFactory} makes, started at once.
   *
   * @throws IOException if epoll or the eventfd cannot be opened
   */
  public ServerLoop(ThreadFactory threadFactory) throws IOException {
    requireNonNull(threadFactory, "threadFactory");
    int ep = Epoll.create0();
    if (ep < 0) {
      throw new IOException("epoll_create1: " + Epoll.strerror0(-ep));
    }
    int ev = Epoll.eventfd0();
    if (ev < 0) {
      int unused = Epoll.close0(ep);
      throw new IOException("eventfd: " + Epoll.strerror0(-ev));
    }
    int r = Epoll.ctl0(ep, Epoll.CTL_ADD, ev, Epoll.EPOLLIN);
    if (r < 0) {
      int unused = Epoll.close0(ep);
      int unused2 = Epoll.close0(ev);
      throw new IOException("epoll_ctl: " + Epoll.strerror0(-r));
    }
    epfd = ep;
    efd = ev;
    thread =
        threadFactory.newThread(
            new Runnable() { // not a method reference: every server's start runs this
              @Override
              public void run() {
                ServerLoop.this.run();
              }
            });
    thread.start();
  }

  /** Whether the caller is the loop's thread. */
  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  // ---------------------------------------------------------------------------------------------
  // Descriptors (the loop's thread)
  // ---------------------------------------------------------------------------------------------

  /** Watches {@code fd} for {@code events}, telling {@code handler}. Loop thread only. */
  public void register(int fd, int events, Handler handler) throws IOException {
    checkInLoop();
    if (fd >= handlers.length) {
      handlers = Arrays.copyOf(handlers, Math.max(fd + 1, handlers.length * 2));
    }
    ctl(Epoll.CTL_ADD, fd, events);
    handlers[fd] = requireNonNull(handler, "handler");
  }

  /** Watches {@code fd}, registered, for {@code events} instead. Loop thread only. */
  public void modify(int fd, int events) throws IOException {
    checkInLoop();
    ctl(Epoll.CTL_MOD, fd, events);
  }

  /**
   * Forgets {@code fd} before its owner closes it (a closed descriptor leaves epoll by itself,
   * but its number may be reused at once). Loop thread only.
   */
  public void deregister(int fd) {
    checkInLoop();
    if (fd >= 0 && fd < handlers.length && handlers[fd] != null) {
      handlers[fd] = null;
      int unused = Epoll.ctl0(epfd, Epoll.CTL_DEL, fd, 0);
    }
  }

  private void ctl(int op, int fd, int events) throws IOException {
    int r = Epoll.ctl0(epfd, op, fd, events);
    if (r < 0) {
      throw new IOException("epoll_ctl: " + Epoll.strerror0(-r));
    }
  }

  private void checkInLoop() {
    if (!inLoop()) {
      throw new IllegalStateException("not on the PMIx server's progress thread");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Tasks and timers (any thread)
  // ---------------------------------------------------------------------------------------------

  @Override
  public void execute(Runnable task) {
    requireNonNull(task, "task");
    if (state == TERMINATED) {
      throw new RejectedExecutionException("the PMIx server's progress thread has stopped");
    }
    tasks.add(task);
    // The thread's last drain runs after TERMINATED is set: a task it may have missed is taken
    // back here and refused, unless it already ran.
    if (state == TERMINATED && tasks.remove(task)) {
      throw new RejectedExecutionException("the PMIx server's progress thread has stopped");
    }
    if (!inLoop() && wakenUp.compareAndSet(false, true)) {
      wake();
    }
  }

  private void wake() {
    synchronized (wakeLock) {
      if (efd >= 0) {
        int unused = Epoll.wake0(efd);
      }
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return add(new LoopTimer<>(Executors.callable(command), deadline(delay, unit), 0));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    return add(new LoopTimer<>(requireNonNull(callable, "callable"), deadline(delay, unit), 0));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    return periodic(command, initialDelay, period, unit, 1);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return periodic(command, initialDelay, delay, unit, -1);
  }

  /** A repeating timer: at a fixed rate ({@code sign} 1) or with a fixed delay (-1). */
  private ScheduledFuture<?> periodic(
      Runnable command, long initialDelay, long every, TimeUnit unit, int sign) {
    if (every <= 0) {
      throw new IllegalArgumentException("period or delay must be positive: " + every);
    }
    return add(
        new LoopTimer<>(
            Executors.callable(command), deadline(initialDelay, unit), sign * unit.toNanos(every)));
  }

  private static long deadline(long delay, TimeUnit unit) {
    return System.nanoTime() + unit.toNanos(Math.max(0, delay));
  }

  private <V> LoopTimer<V> add(LoopTimer<V> t) {
    if (inLoop()) {
      t.seq = timerSeq++;
      timers.add(t);
    } else {
      execute(new AddTimer(t));
    }
    return t;
  }

  /** Puts a timer made on another thread in the loop's queue. */
  private final class AddTimer implements Runnable {
    private final LoopTimer<?> timer;

    AddTimer(LoopTimer<?> timer) {
      this.timer = timer;
    }

    @Override
    public void run() {
      timer.seq = timerSeq++;
      timers.add(timer);
    }
  }

  /**
   * A timer: a one-shot (period 0), fixed-rate (period above 0) or fixed-delay (below 0) task.
   * Cancelled from any thread ({@link FutureTask}); the loop drops it when it comes up.
   */
  private final class LoopTimer<V> extends FutureTask<V> implements RunnableScheduledFuture<V> {
    private long deadline;
    private final long period;
    long seq;

    LoopTimer(Callable<V> callable, long deadline, long period) {
      super(callable);
      this.deadline = deadline;
      this.period = period;
    }

    @Override
    public boolean isPeriodic() {
      return period != 0;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      if (o == this) {
        return 0;
      }
      if (o instanceof LoopTimer<?> t) {
        int c = Long.compare(deadline - t.deadline, 0);
        return c != 0 ? c : Long.compare(seq, t.seq);
      }
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public void run() {
      if (!isPeriodic()) {
        super.run();
      } else if (runAndReset()) {
        deadline = period > 0 ? deadline + period : System.nanoTime() - period;
        seq = timerSeq++;
        timers.add(this);
      }
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(this);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Shutdown
  // ---------------------------------------------------------------------------------------------

  /** Runs what was handed in before, then ends the thread. Tasks handed in later are refused. */
  @Override
  public void shutdown() {
    synchronized (wakeLock) {
      if (state != RUNNING) {
        return;
      }
      state = SHUTTING_DOWN;
    }
    wake();
  }

  /** As {@link #shutdown}; returns nothing (the tasks already handed in still run). */
  @Override
  public List<Runnable> shutdownNow() {
    shutdown();
    return new ArrayList<>();
  }

  @Override
  public boolean isShutdown() {
    return state != RUNNING;
  }

  @Override
  public boolean isTerminated() {
    return state == TERMINATED;
  }

  /** Has {@code r} run on the loop's thread once it has terminated; set before the shutdown. */
  public void whenTerminated(Runnable r) {
    afterTermination = requireNonNull(r, "r");
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return terminated.await(timeout, unit);
  }

  // ---------------------------------------------------------------------------------------------
  // The thread
  // ---------------------------------------------------------------------------------------------

  private void run() {
    try {
      while (true) {
        boolean more = runTasks();
        runTimers();
        if (state != RUNNING && tasks.isEmpty()) {
          break;
        }
        wakenUp.set(false);
        int timeout;
        if (more || !tasks.isEmpty() || state != RUNNING) {
          timeout = 0;
        } else {
          LoopTimer<?> next = firstLiveTimer();
          timeout =
              next == null
                  ? -1
                  : (int)
                      Math.min(
                          Integer.MAX_VALUE,
                          Math.max(
                              0,
                              TimeUnit.NANOSECONDS.toMillis(
                                  next.deadline - System.nanoTime() + 999_999)));
        }
        int n = Epoll.wait0(epfd, ready, Epoll.WAIT_MAX, timeout);
        if (n < 0) {
          throw new IOException("epoll_wait: " + Epoll.strerror0(-n));
        }
        for (int i = 0; i < n; i++) {
          int fd = ready[2 * i];
          if (fd == efd) {
            Epoll.drain0(fd);
            continue;
          }
          Handler h = fd < handlers.length ? handlers[fd] : null;
          if (h != null) {
            try {
              h.ready(ready[2 * i + 1]);
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "a socket handler on the PMIx progress thread threw", e);
            }
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.ERROR, "the PMIx server's progress thread failed", e);
    } finally {
      state = SHUTTING_DOWN;
      drainTasks();
      for (LoopTimer<?> t : timers) {
        boolean unused = t.cancel(false);
      }
      timers.clear();
      synchronized (wakeLock) {
        int unused = Epoll.close0(efd);
        efd = -1;
        state = TERMINATED;
      }
      int unused = Epoll.close0(epfd);
      // What came in between the last drain and TERMINATED.
      drainTasks();
      terminated.countDown();
      Runnable r = afterTermination;
      if (r != null) {
        guarded(r);
      }
    }
  }

  /** Runs up to {@link #TASK_BATCH} tasks; whether more are waiting. */
  private boolean runTasks() {
    for (int i = 0; i < TASK_BATCH; i++) {
      Runnable r = tasks.poll();
      if (r == null) {
        return false;
      }
      guarded(r);
    }
    return !tasks.isEmpty();
  }

  private void drainTasks() {
    while (runTasks()) {
      // every batch, until none is left
    }
  }

  private void runTimers() {
    long now = System.nanoTime();
    LoopTimer<?> t;
    while ((t = timers.peek()) != null && (t.isCancelled() || t.deadline - now <= 0)) {
      timers.poll();
      if (!t.isCancelled()) {
        guarded(t);
      }
    }
  }

  private @Nullable LoopTimer<?> firstLiveTimer() {
    LoopTimer<?> t;
    while ((t = timers.peek()) != null && t.isCancelled()) {
      timers.poll();
    }
    return t;
  }

  /** Runs {@code r}; a failure is logged and the loop goes on. */
  private static void guarded(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a task on the PMIx server's progress thread threw", e);
    }
  }
}
