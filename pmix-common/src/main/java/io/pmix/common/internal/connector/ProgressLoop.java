package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import io.pmix.common.internal.LazyLogger;

/**
 * A connector's progress thread: one thread running tasks handed to it, timers, and the readiness
 * of its sockets (a {@link Poller}), in that order, one at a time. Not Netty: the connector has
 * one socket, and Netty's event loop, channel pipeline and buffers cost ~150 ms of class loading
 * and static initialization in a fresh JVM, most of a first {@code PMIx.init}; nor, where
 * pmix-java's native library loads, NIO's selector and socket channel (20-30 ms of it; {@link
 * Poller}) (docs/architecture.md, start-up of the client).
 *
 * <p>The thread starts with the first task. {@link #shutdown} runs the tasks already handed in,
 * and those handed in meanwhile, closes every channel still registered (each registrant is told,
 * as a socket closing would tell it) and ends the thread; tasks handed in after that are rejected.
 */
final class ProgressLoop {
  private static final System.Logger LOG = LazyLogger.of(ProgressLoop.class);

  /** What a socket of the loop is told; called on the loop's thread. */
  interface Registrant {
    /** The socket is ready for {@code readyOps}, some of its interest operations ({@link Poller}). */
    void ready(int readyOps);

    /** The loop is ending: close the socket and act as if the peer had closed it. */
    void shutdown();
  }

  /** Opens the loop's {@link Poller} when its thread starts. */
  interface PollerOpener {
    /** A new poller. */
    Poller open() throws IOException;
  }

  /** A timer; {@link #cancel} from the loop's thread only. */
  static final class Timer implements Comparable<Timer> {
    private final long deadline;
    private final long seq;
    private final Runnable task;
    private boolean cancelled;

    private Timer(long deadline, long seq, Runnable task) {
      this.deadline = deadline;
      this.seq = seq;
      this.task = task;
    }

    /** The timer will not run (if it has not yet). */
    void cancel() {
      cancelled = true;
    }

    @Override
    public int compareTo(Timer o) {
      int c = Long.compare(deadline - o.deadline, 0);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(seq);
    }
  }

  private static final int RUNNING = 0;
  private static final int SHUTTING_DOWN = 1;
  private static final int TERMINATED = 2;

  private final ThreadFactory threadFactory;
  // Null for Poller.open: no opener class of its own to load in every first init.
  private final @Nullable PollerOpener opener;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  /** Set while a wake-up of the poller is pending, so producers wake it once per poll. */
  private final AtomicBoolean wakenUp = new AtomicBoolean();

  private final CountDownLatch terminated = new CountDownLatch(1);
  /** Run once the loop has terminated ({@link #whenTerminated}). */
  private volatile @Nullable Runnable afterTermination;

  // ---- confined to the loop's thread ----
  private final PriorityQueue<Timer> timers = new PriorityQueue<>();
  private long timerSeq;

  private final Object startLock = new Object();
  private volatile @Nullable Thread thread;
  private volatile @Nullable Poller poller;
  private volatile int state = RUNNING;

  /**
   * A loop whose thread, made by {@code threadFactory}, starts with the first task; on the
   * native poller where pmix-java's library loads, else on NIO's.
   */
  ProgressLoop(ThreadFactory threadFactory) {
    this.threadFactory = requireNonNull(threadFactory, "threadFactory");
    this.opener = null;
  }

  /** A loop on the poller {@code opener} opens (tests run both kinds). */
  ProgressLoop(ThreadFactory threadFactory, PollerOpener opener) {
    this.threadFactory = requireNonNull(threadFactory, "threadFactory");
    this.opener = requireNonNull(opener, "opener");
  }

  /** Whether the caller is the loop's thread. */
  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Whether {@link #shutdown} was called: the loop takes no more work. */
  boolean isShutdown() {
    return state != RUNNING;
  }

  /** Whether the thread has ended (or the loop was shut down before it ever started). */
  boolean isTerminated() {
    return state == TERMINATED;
  }

  /**
   * Runs {@code task} on the loop's thread, after the tasks handed in before.
   *
   * @throws RejectedExecutionException once {@link #shutdown} was called
   */
  void execute(Runnable task) {
    requireNonNull(task, "task");
    if (state == TERMINATED) {
      throw new RejectedExecutionException("the PMIx progress thread has stopped");
    }
    if (thread == null) {
      start();
    }
    tasks.add(task);
    // The thread's last drain runs after TERMINATED is set: a task it may have missed is taken
    // back here and refused, unless it already ran.
    if (state == TERMINATED && tasks.remove(task)) {
      throw new RejectedExecutionException("the PMIx progress thread has stopped");
    }
    if (!inLoop() && wakenUp.compareAndSet(false, true)) {
      Poller p = poller;
      if (p != null) {
        p.wakeup();
      }
    }
  }

  private void start() {
    synchronized (startLock) {
      if (thread != null) {
        return;
      }
      if (state != RUNNING) {
        // Shut down before it ever ran: nothing will run it.
        throw new RejectedExecutionException("the PMIx progress thread has stopped");
      }
      try {
        poller = opener != null ? opener.open() : Poller.open();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot open a poller for the PMIx progress thread", e);
      }
      Thread t =
          threadFactory.newThread(
              new Runnable() { // not a method reference: a first init runs this
                @Override
                public void run() {
                  ProgressLoop.this.run();
                }
              });
      thread = t;
      t.start();
    }
  }

  /**
   * Runs {@code task} on the loop's thread after {@code delayMillis}, unless cancelled first.
   * Loop thread only.
   */
  @CanIgnoreReturnValue
  Timer schedule(Runnable task, long delayMillis) {
    checkInLoop();
    Timer t =
        new Timer(
            System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, delayMillis)),
            timerSeq++,
            task);
    timers.add(t);
    return t;
  }

  /**
   * A new unconnected socket of the loop, with {@code registrant} told of its readiness. Loop
   * thread only.
   */
  StreamSocket socket(Registrant registrant) throws IOException {
    checkInLoop();
    return requireNonNull(poller).socket(registrant);
  }

  private void checkInLoop() {
    if (!inLoop()) {
      throw new IllegalStateException("not on the PMIx progress thread");
    }
  }

  /**
   * Stops accepting tasks; the thread runs those already handed in, closes the registered
   * channels and ends. Returns at once; see {@link #awaitTermination}.
   */
  void shutdown() {
    boolean neverStarted;
    synchronized (startLock) {
      if (state != RUNNING) {
        return;
      }
      state = SHUTTING_DOWN;
      neverStarted = thread == null;
      if (neverStarted) {
        state = TERMINATED;
        terminated.countDown();
      }
    }
    if (neverStarted) {
      afterTermination();
      return;
    }
    Poller p = poller;
    if (p != null) {
      p.wakeup();
    }
  }

  /**
   * Has {@code r} run once the loop has terminated: on the loop's thread as it ends, or in the
   * caller of {@link #shutdown} when the thread never started. Set before the first task.
   */
  void whenTerminated(Runnable r) {
    afterTermination = requireNonNull(r, "r");
  }

  private void afterTermination() {
    Runnable r = afterTermination;
    if (r != null) {
      guarded(r);
    }
  }

  /** Waits up to {@code millis} for the thread to end; whether it has. */
  boolean awaitTermination(long millis) throws InterruptedException {
    return terminated.await(millis, TimeUnit.MILLISECONDS);
  }

  private void run() {
    Poller p = requireNonNull(poller);
    try {
      while (true) {
        runTasks();
        runTimers();
        if (state != RUNNING && tasks.isEmpty()) {
          break;
        }
        wakenUp.set(false);
        if (!tasks.isEmpty() || state != RUNNING) {
          p.poll(0);
        } else {
          Timer next = firstLiveTimer();
          if (next == null) {
            p.poll(-1);
          } else {
            long ms = TimeUnit.NANOSECONDS.toMillis(next.deadline - System.nanoTime() + 999_999);
            p.poll(Math.max(ms, 0));
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.ERROR, "PMIx progress thread failed", e);
    } finally {
      state = SHUTTING_DOWN;
      for (Registrant r : p.registrants()) {
        try { // not guarded's method reference: every last finalize runs this
          r.shutdown();
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "a task on the PMIx progress thread threw", e);
        }
      }
      // What the registrants' shutdown handed in (a failure to deliver, say) still runs.
      runTasks();
      p.close();
      timers.clear();
      state = TERMINATED;
      runTasks();
      terminated.countDown();
      afterTermination();
    }
  }

  private void runTasks() {
    Runnable r;
    while ((r = tasks.poll()) != null) {
      guarded(r);
    }
  }

  private void runTimers() {
    long now = System.nanoTime();
    Timer t;
    while ((t = timers.peek()) != null && (t.cancelled || t.deadline - now <= 0)) {
      timers.poll();
      if (!t.cancelled) {
        guarded(t.task);
      }
    }
  }

  private @Nullable Timer firstLiveTimer() {
    Timer t;
    while ((t = timers.peek()) != null && t.cancelled) {
      timers.poll();
    }
    return t;
  }

  /** Runs {@code r}; a failure is logged and the loop goes on, as Netty's loop does. */
  private static void guarded(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a task on the PMIx progress thread threw", e);
    }
  }
}
