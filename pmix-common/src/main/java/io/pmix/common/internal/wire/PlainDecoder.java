package io.pmix.common.internal.wire;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * A {@link ByteToMessageDecoder} that Netty adds to a pipeline without reading an annotation.
 *
 * <p>Why: when a handler is added, Netty asks {@code isSharable()}, which looks for the
 * {@code @Sharable} annotation, and computes which events the handler's class skips, which looks
 * for {@code @Skip} on each event method it inherits from Netty's adapters. In a fresh JVM the
 * first of those reads parses the annotations and generates a proxy class for each annotation type
 * and its meta-annotations: ~13 ms of a server's start on this machine, before the first client
 * can be served (docs/architecture.md, "Start-up of pmixrun"). This class answers the first
 * question itself and declares every event method the decoder base class leaves to the adapter,
 * each passing the event on as the adapter would, so nothing is left to look up.
 *
 * <p>Subclasses are not sharable (one instance per channel, as for any {@code
 * ByteToMessageDecoder}); {@link PlainInboundHandler} is the same for plain inbound handlers.
 */
public abstract class PlainDecoder extends ByteToMessageDecoder {
  /** For subclasses. */
  protected PlainDecoder() {}

  /** Never: a decoder keeps the state of one stream. */
  @Override
  public final boolean isSharable() {
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
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    ctx.fireExceptionCaught(cause);
  }
}
