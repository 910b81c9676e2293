package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.pmix.common.PmixException;
import java.util.List;
import java.util.Optional;

/**
 * The connector side's first inbound handler: waits for the whole handshake reply in the layout
 * given at construction, emits it as a {@link ConnectReply} and removes itself, handing any bytes
 * behind it to the next handler (normally a {@link FrameDecoder}): a server may send a tag-0
 * notification right after the reply, in the same segment (docs/transport.md §11.9).
 *
 * <p>EOF before the reply is complete is not reported here: the channel's inactivity reaches the
 * next handler, which fails the connect attempt (C connectors report {@code ERR_UNREACH}). A
 * malformed nspace field fires a {@link PmixException} and every later byte is discarded. The
 * decoder does not close the channel. One instance per channel.
 */
public final class ConnectReplyDecoder extends PlainDecoder {
  private final ReplyLayout layout;
  private boolean failed;

  /** A decoder for a reply in {@code layout}, from {@link ReplyLayout#forConnector}. */
  public ConnectReplyDecoder(ReplyLayout layout) {
    this.layout = requireNonNull(layout, "layout");
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    Optional<ConnectReply> reply;
    try {
      reply = ConnectReply.tryDecode(in, layout);
    } catch (PmixException e) {
      failed = true;
      in.skipBytes(in.readableBytes());
      ctx.fireExceptionCaught(e);
      return;
    }
    if (reply.isPresent()) {
      out.add(reply.get());
      // Deferred by ByteToMessageDecoder until the reply has been fired: see ConnectRequestDecoder.
      ctx.pipeline().remove(this);
    }
  }
}
