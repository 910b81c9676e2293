package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoop;
import io.pmix.server.internal.net.ServerLoop;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The server's progress thread as an executor: what the core ({@link ServerCore}, the
 * collectives, the modex, the monitors) schedules its work and timers on, and what is lent out
 * as {@code PMIxServer.progressExecutor}. Tasks and timers run on the thread, one at a time, in
 * the order given; the thread stays the server's, so the lifecycle methods only report on it and
 * {@link #shutdown} is refused. The one place the core meets the loop underneath (Netty's event
 * loop today), so that the transport can change without it (docs/architecture.md, "A server
 * transport without Netty").
 */
public final class ProgressExecutor extends AbstractExecutorService
    implements ScheduledExecutorService {
  private final ScheduledExecutorService loop;
  /** The loop as Netty's, or null for the server's own. */
  private final @Nullable EventLoop netty;
  /** The loop as the server's own, or null for Netty's. */
  private final @Nullable ServerLoop own;

  /** A view of Netty's {@code loop}. */
  public ProgressExecutor(EventLoop loop) {
    this.loop = requireNonNull(loop, "loop");
    this.netty = loop;
    this.own = null;
  }

  /** A view of the server's own {@code loop}. */
  public ProgressExecutor(ServerLoop loop) {
    this.loop = requireNonNull(loop, "loop");
    this.netty = null;
    this.own = loop;
  }

  /** Whether the caller runs on the progress thread. */
  public boolean inProgressThread() {
    ServerLoop o = own;
    return o != null ? o.inLoop() : requireNonNull(netty).inEventLoop();
  }

  @Override
  public void execute(Runnable command) {
    loop.execute(requireNonNull(command, "command"));
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return loop.schedule(command, delay, unit);
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    return loop.schedule(callable, delay, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    return loop.scheduleAtFixedRate(command, initialDelay, period, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return loop.scheduleWithFixedDelay(command, initialDelay, delay, unit);
  }

  /** Refused: the server stops its progress thread at its own shutdown. */
  @Override
  public void shutdown() {
    throw new UnsupportedOperationException("the PMIx server's progress thread stops with it");
  }

  /** Refused: the server stops its progress thread at its own shutdown. */
  @Override
  public List<Runnable> shutdownNow() {
    throw new UnsupportedOperationException("the PMIx server's progress thread stops with it");
  }

  /** Whether the server has begun stopping its progress thread. */
  @Override
  public boolean isShutdown() {
    EventLoop n = netty;
    return n != null ? n.isShuttingDown() : loop.isShutdown();
  }

  /** Whether the server's progress thread has stopped. */
  @Override
  public boolean isTerminated() {
    return loop.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return loop.awaitTermination(timeout, unit);
  }
}
