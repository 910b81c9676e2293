package io.pmix.common.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.pmix.common.PmixException;
import java.util.List;

/**
 * Splits the steady-state byte stream into {@link Frame}s (docs/transport.md §5.1): a 16-byte
 * header of big-endian pindex (i32), tag (u32), nbytes (u32) and a padding word that is ignored,
 * then nbytes of payload. {@code nbytes = 0} is a frame with an empty payload.
 *
 * <p>A header announcing more than the limit given at construction fires a {@link PmixException}
 * with {@code ERR_OUT_OF_RESOURCE} down the pipeline before any of that payload is buffered; from
 * then on every inbound byte is discarded, since the stream can no longer be framed. The decoder
 * does not close the channel: the handler that owns the connection does (as a C peer drops a
 * connection whose message exceeds its size limit).
 *
 * <p>With a {@link FrameBudget}, a frame whose payload is not complete yet reserves its announced
 * length from the budget until it is complete or the channel goes; if the budget cannot take it,
 * the same {@code ERR_OUT_OF_RESOURCE} failure is fired (and the stream discarded) before the
 * payload is buffered.
 *
 * <p>Placed after a {@link ConnectRequestDecoder} or {@link ConnectReplyDecoder}, it receives the
 * bytes those leave behind when they remove themselves, and passes their decoded message through
 * untouched. One instance per channel.
 */
public final class FrameDecoder extends PlainDecoder {
  /** The size of every header: pindex, tag, nbytes and the C struct's padding word. */
  public static final int HEADER_LENGTH = 16;

  private final int maxPayloadLength;
  private final FrameBudget budget;
  private boolean failed;
  /** What the frame being accumulated holds of {@link #budget}. */
  private long reserved;

  /**
   * A decoder refusing payloads longer than {@code maxPayloadLength} bytes.
   *
   * @throws IllegalArgumentException if the limit is negative
   */
  public FrameDecoder(int maxPayloadLength) {
    this(maxPayloadLength, FrameBudget.UNLIMITED);
  }

  /**
   * A decoder refusing payloads longer than {@code maxPayloadLength} bytes, and partial frames
   * that {@code budget} cannot hold.
   *
   * @throws IllegalArgumentException if the limit is negative
   */
  public FrameDecoder(int maxPayloadLength, FrameBudget budget) {
    if (maxPayloadLength < 0) {
      throw new IllegalArgumentException("maxPayloadLength < 0: " + maxPayloadLength);
    }
    this.maxPayloadLength = maxPayloadLength;
    this.budget = budget;
  }

  /** The largest payload this decoder accepts. */
  public int maxPayloadLength() {
    return maxPayloadLength;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (in.readableBytes() < HEADER_LENGTH) {
      return;
    }
    int start = in.readerIndex();
    long nbytes = in.getUnsignedInt(start + 8);
    if (nbytes > maxPayloadLength) {
      failed = true;
      in.skipBytes(in.readableBytes());
      ctx.fireExceptionCaught(FrameLimits.tooLong(nbytes, in.getInt(start + 4), maxPayloadLength));
      return;
    }
    if (in.readableBytes() - HEADER_LENGTH < nbytes) {
      if (reserved == 0 && !budget.tryReserve(nbytes)) {
        failed = true;
        in.skipBytes(in.readableBytes());
        ctx.fireExceptionCaught(FrameLimits.overBudget(nbytes, budget));
        return;
      }
      reserved = nbytes;
      return;
    }
    giveBack();
    int pindex = in.getInt(start);
    int tag = in.getInt(start + 4);
    in.skipBytes(HEADER_LENGTH);
    ByteBuf payload = nbytes == 0 ? Unpooled.EMPTY_BUFFER : in.readRetainedSlice((int) nbytes);
    out.add(new Frame(pindex, tag, payload));
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    giveBack();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    try {
      super.channelInactive(ctx); // may decode what is left, and so reserve once more
    } finally {
      // A partial frame of a closed connection will never complete.
      giveBack();
    }
  }

  private void giveBack() {
    if (reserved != 0) {
      budget.release(reserved);
      reserved = 0;
    }
  }
}
