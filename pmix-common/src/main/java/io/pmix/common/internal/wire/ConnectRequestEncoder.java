package io.pmix.common.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

/**
 * The connector side's writer of its {@link ConnectRequest}: header and payload in one buffer, so
 * the request leaves in one write as C connectors send it. It uses {@link ConnectRequestCodec}, the
 * same code the server's {@link ConnectRequestDecoder} reads with. Stateless and {@link Sharable};
 * it may stay in the pipeline after the handshake, since it only handles {@code ConnectRequest}s.
 */
@Sharable
public final class ConnectRequestEncoder extends MessageToByteEncoder<ConnectRequest> {
  /** The one instance; the encoder has no state. */
  public static final ConnectRequestEncoder INSTANCE = new ConnectRequestEncoder();

  private ConnectRequestEncoder() {
    super(ConnectRequest.class);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, ConnectRequest request, ByteBuf out) {
    ConnectRequestCodec.encode(request, out);
  }
}
