package io.pmix.common.internal.wire;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * A {@link ChannelInboundHandlerAdapter} that Netty adds to a pipeline without reading an
 * annotation: it answers {@code isSharable()} itself and declares every inbound event method,
 * each passing the event on as the adapter does, so Netty finds no {@code @Skip} to parse when it
 * computes which events the class handles ({@link PlainDecoder} says why that matters).
 *
 * <p>Not sharable unless a subclass says otherwise.
 */
public abstract class PlainInboundHandler extends ChannelInboundHandlerAdapter {
  /** For subclasses. */
  protected PlainInboundHandler() {}

  /** False: one instance per channel unless a subclass overrides this. */
  @Override
  public boolean isSharable() {
    return false;
  }

  @Override
  public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelRegistered();
  }

  @Override
  public void channelUnregistered(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelUnregistered();
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelReadComplete();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    ctx.fireExceptionCaught(cause);
  }
}
