package io.pmix.common.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes a {@link Frame} as its big-endian 16-byte header followed by its payload, as one buffer so
 * the two leave in a single write, as C peers send them (docs/transport.md §5.1). The payload is
 * not copied: it becomes a component of a composite buffer, and the frame's reference passes to it.
 * Stateless and {@link Sharable}.
 */
@Sharable
public final class FrameEncoder extends MessageToMessageEncoder<Frame> {
  /** The one instance; the encoder has no state. */
  public static final FrameEncoder INSTANCE = new FrameEncoder();

  private FrameEncoder() {
    super(Frame.class);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, Frame frame, List<Object> out) {
    ByteBuf payload = frame.content();
    ByteBuf header = ctx.alloc().buffer(FrameDecoder.HEADER_LENGTH);
    header.writeInt(frame.pindex());
    header.writeInt(frame.tag());
    header.writeInt(payload.readableBytes());
    header.writeInt(0);
    if (!payload.isReadable()) {
      out.add(header);
      return;
    }
    CompositeByteBuf message = ctx.alloc().compositeBuffer(2);
    // The encoder base class releases the frame after encode(); retain the payload for the message.
    message.addComponents(true, header, payload.retain());
    out.add(message);
  }
}
