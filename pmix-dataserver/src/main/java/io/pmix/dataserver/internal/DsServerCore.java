package io.pmix.dataserver.internal;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.pmix.dataserver.DataStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The store of a data server with the one timer that drives it, both confined to the server's
 * event loop: every connection of the server is registered on that same loop, so the loop is the
 * store's serializing context and no lock is needed.
 */
public final class DsServerCore {
  private final DataStore store;
  private final EventLoop loop;
  private @Nullable ScheduledFuture<?> sweep;
  private long sweepAt;

  /** A core running {@code store} on {@code loop}. */
  public DsServerCore(DataStore store, EventLoop loop) {
    this.store = requireNonNull(store, "store");
    this.loop = requireNonNull(loop, "loop");
  }

  /** The store; only to be used on {@link #loop()}. */
  public DataStore store() {
    return store;
  }

  /** The event loop every connection and the timer run on. */
  public EventLoop loop() {
    return loop;
  }

  /**
   * Arms the timer for the store's next deadline unless an earlier one is armed. Called after
   * every operation; on the loop.
   */
  public void reschedule() {
    Optional<Duration> next = store.untilNextDeadline();
    if (next.isEmpty()) {
      return;
    }
    long delay = next.get().toNanos();
    long at = System.nanoTime() + delay;
    ScheduledFuture<?> s = sweep;
    if (s != null && !s.isDone() && sweepAt - at <= 0) {
      return;
    }
    if (s != null) {
      boolean unused = s.cancel(false);
    }
    sweepAt = at;
    sweep = loop.schedule(this::onSweep, delay, TimeUnit.NANOSECONDS);
  }

  /** Stops the timer; on the loop, at shutdown. */
  public void stop() {
    ScheduledFuture<?> s = sweep;
    if (s != null) {
      boolean unused = s.cancel(false);
      sweep = null;
    }
  }

  private void onSweep() {
    sweep = null;
    store.advance();
    reschedule();
  }
}
