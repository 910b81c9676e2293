package io.pmix.server.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.pmix.common.internal.wire.ConnectRequestDecoder;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.common.internal.wire.FrameReader;
import io.pmix.common.internal.wire.NettyDefaults;
import io.pmix.server.ServerOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Netty's transport for the server: one event loop (epoll's where Netty's native transport loads
 * and {@link ServerOptions#preferEpoll} asks for it, else NIO's), {@link Acceptor}'s listener,
 * and each connection's pipeline ({@link ConnectRequestDecoder}, {@link FrameReader}, {@link
 * PeerHandler}).
 */
final class NettyServerTransport extends ServerTransport {
  private final boolean epoll;
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final ProgressExecutor executor;
  /** Every accepted connection, handshaken or not, so the shutdown can close them all. */
  private final ChannelGroup all;
  private @Nullable Channel listener;

  NettyServerTransport(boolean preferEpoll) {
    NettyDefaults.apply();
    epoll = preferEpoll && Epoll.isAvailable();
    group =
        new MultiThreadIoEventLoopGroup(
            1,
            new DefaultThreadFactory("pmix-progress", true),
            epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    loop = group.next();
    executor = new ProgressExecutor(loop);
    all = new DefaultChannelGroup("pmix-connections", loop);
  }

  @Override
  public ProgressExecutor executor() {
    return executor;
  }

  @Override
  public InetSocketAddress listen(
      ServerCore core,
      ServerOptions options,
      @Nullable Executor ownerLookupExecutor,
      PendingHandshakes pending)
      throws InterruptedException {
    // Shared by every connection of this server: the bounds are global, not per connection.
    FrameBudget frameBudget = FrameBudget.of(options.frameBudget());
    LoopReceiveBuffer receive = LoopReceiveBuffer.of(loop);
    Acceptor.ChildSetup childSetup =
        new Acceptor.ChildSetup() {
          @Override
          public void setUp(Channel child) {
            all.add(child);
            var unusedConfig = child.config().setRecvByteBufAllocator(receive);
            // No encoder: every reply is written as one framed buffer (Replies.frame, the
            // handshake replies), so no outbound handler has anything to do.
            child
                .pipeline()
                .addLast("connect", new ConnectRequestDecoder())
                .addLast("frames", new FrameReader(options.maxMessageSize(), frameBudget))
                .addLast(
                    "peer",
                    new PeerHandler(
                        core, options.handshakeTimeout(), ownerLookupExecutor, pending));
          }
        };
    InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    Channel ch = Acceptor.bind(loop, epoll, loopback, 4096, childSetup);
    listener = ch;
    return (InetSocketAddress) ch.localAddress();
  }

  @Override
  public void closeListener() {
    Channel l = listener;
    if (l != null) {
      ChannelFuture unused = l.close();
    }
  }

  @Override
  public List<CompletableFuture<Void>> closeConnections() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    var unused = all.close().addListener(f -> done.complete(null));
    return List.of(done);
  }

  @Override
  public void stop(Runnable whenStopped) {
    Future<?> stop = group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    var unused = stop.addListener(f -> whenStopped.run());
  }

  @Override
  public void stopNow() {
    Channel l = listener;
    if (l != null) {
      ChannelFuture unused = l.close().awaitUninterruptibly();
    }
    Future<?> unused = group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
  }

  @Override
  public String kind() {
    return epoll ? "netty epoll" : "netty nio";
  }
}
