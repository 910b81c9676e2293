package io.pmix.server.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;
import io.pmix.common.internal.wire.ArrayFrame;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.PlainInboundHandler;
import java.time.Duration;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The last inbound handler of a connection Netty accepted: tells the connection's {@link
 * PeerSession} what the channel does (its activation, the decoded connect request and frames, its
 * close, a decoder's failure). One instance per channel; runs on the progress thread.
 */
public final class PeerHandler extends PlainInboundHandler {
  private final ServerCore core;
  private final Duration handshakeTimeout;
  private final @Nullable Executor ownerLookupExecutor;
  private final SocketOwner socketOwner;
  private final PendingHandshakes pending;
  private @Nullable PeerSession session;

  /**
   * A handler for one connection.
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials and skip the lookup
   */
  public PeerHandler(
      ServerCore core, Duration handshakeTimeout, @Nullable Executor ownerLookupExecutor) {
    this(core, handshakeTimeout, ownerLookupExecutor, new PendingHandshakes(Integer.MAX_VALUE));
  }

  /**
   * A handler for one connection, counted in {@code pending} until its handshake completes.
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials and skip the lookup
   */
  public PeerHandler(
      ServerCore core, Duration handshakeTimeout, @Nullable Executor ownerLookupExecutor,
      PendingHandshakes pending) {
    this(core, handshakeTimeout, ownerLookupExecutor, new SocketOwner(), pending);
  }

  PeerHandler(
      ServerCore core, Duration handshakeTimeout, @Nullable Executor ownerLookupExecutor,
      SocketOwner socketOwner, PendingHandshakes pending) {
    this.core = core;
    this.handshakeTimeout = handshakeTimeout;
    this.ownerLookupExecutor = ownerLookupExecutor;
    this.socketOwner = socketOwner;
    this.pending = pending;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    PeerSession s =
        new PeerSession(
            core,
            NettyConnection.of(ctx.channel()),
            ctx.executor(),
            handshakeTimeout,
            ownerLookupExecutor,
            socketOwner,
            pending);
    session = s;
    if (s.opened(ctx.channel().remoteAddress(), ctx.channel().localAddress())) {
      ctx.fireChannelActive();
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    PeerSession s = session;
    if (s != null && msg instanceof ConnectRequest req) {
      s.connectRequest(req);
      return;
    }
    if (s != null && msg instanceof ArrayFrame frame) {
      s.frame(frame.tag(), frame.payload());
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    PeerSession s = session;
    if (s != null) {
      s.closed();
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    PeerSession s = session;
    if (s != null) {
      s.failed(cause);
    } else {
      var unused = ctx.close();
    }
  }
}
