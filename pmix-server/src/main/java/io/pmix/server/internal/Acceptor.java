package io.pmix.server.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.PlainInboundHandler;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The server's listening socket: binds it on the progress thread's loop and gives every accepted
 * connection its pipeline ({@link ChildSetup}) before registering it on the same loop, with
 * {@code TCP_NODELAY} set as C peers set it.
 *
 * <p>What Netty's {@code ServerBootstrap} does for one loop, without its two handlers: each is
 * marked {@code @Sharable} or inherits {@code @Skip}-marked methods, and adding it to a pipeline
 * is the JVM's first annotation parse, with a proxy class generated per annotation type (~13 ms
 * of a fresh server's start on this machine together with the decoders', see {@link
 * PlainInboundHandler}).
 *
 * <p>The rules kept from it: a failed registration or bind closes the listener; an accepted
 * connection that cannot be set up or registered is closed at once; an accept failure (out of
 * descriptors) stops accepting for a second instead of failing in a loop.
 */
public final class Acceptor extends PlainInboundHandler {
  private static final System.Logger LOG = LazyLogger.of(Acceptor.class);
  /** How long accepting pauses after an accept failure, as Netty's bootstrap pauses. */
  static final long PAUSE_AFTER_FAILURE_MS = 1_000;

  /** What every accepted connection gets before it is registered; runs on the progress thread. */
  public interface ChildSetup {
    /** Builds {@code child}'s pipeline (and counts it wherever the server counts connections). */
    void setUp(Channel child);
  }

  private final EventLoop loop;
  private final ChildSetup setup;

  private Acceptor(EventLoop loop, ChildSetup setup) {
    this.loop = loop;
    this.setup = setup;
  }

  /**
   * Opens the listener (epoll's or NIO's), registers it on {@code loop} and binds it to {@code
   * address}, waiting for both.
   *
   * @return the bound listener; on failure it is closed and the registration's or bind's failure
   *     thrown
   * @throws InterruptedException if interrupted while waiting
   */
  public static Channel bind(
      EventLoop loop, boolean epoll, InetSocketAddress address, int backlog, ChildSetup setup)
      throws InterruptedException {
    ServerChannel server = epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
    boolean unusedSet = server.config().setOption(ChannelOption.SO_BACKLOG, backlog);
    server.pipeline().addLast(new Acceptor(loop, setup));
    ChannelFuture registered = loop.register(server).await();
    if (!registered.isSuccess()) {
      server.unsafe().closeForcibly(); // its socket, which no loop will close
      ChannelFuture unused = registered.sync(); // throws the registration's failure
    }
    ChannelFuture bound = server.bind(address);
    bound.addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    return bound.sync().channel();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    Channel child = (Channel) msg;
    try {
      boolean unusedSet = child.config().setOption(ChannelOption.TCP_NODELAY, true);
      setup.setUp(child);
      ChannelFuture unused = loop.register(child).addListener(new Registered(child));
    } catch (RuntimeException e) {
      forceClose(child, e);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ChannelConfig config = ctx.channel().config();
    if (config.isAutoRead()) {
      // Out of descriptors, typically: accepting again at once would fail again at once.
      config.setAutoRead(false);
      var unused =
          ctx.channel()
              .eventLoop()
              .schedule(new ResumeAccepting(config), PAUSE_AFTER_FAILURE_MS, TimeUnit.MILLISECONDS);
    }
    LOG.log(Level.WARNING, "accepting a connection failed; pausing for a second", cause);
  }

  private static void forceClose(Channel child, Throwable cause) {
    child.unsafe().closeForcibly();
    LOG.log(Level.WARNING, "could not set up an accepted connection: " + child, cause);
  }

  /** Closes a connection whose registration failed. A class: no lambda on a first connection. */
  private static final class Registered implements ChannelFutureListener {
    private final Channel child;

    Registered(Channel child) {
      this.child = child;
    }

    @Override
    public void operationComplete(ChannelFuture f) {
      if (!f.isSuccess()) {
        forceClose(child, f.cause());
      }
    }
  }

  /** Accepts again after a pause. */
  private static final class ResumeAccepting implements Runnable {
    private final ChannelConfig config;

    ResumeAccepting(ChannelConfig config) {
      this.config = config;
    }

    @Override
    public void run() {
      config.setAutoRead(true);
    }
  }
}
