package io.pmix.common.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.pmix.common.PmixException;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Splits the steady-state byte stream into {@link ArrayFrame}s: the framing of {@link
 * FrameDecoder} (a 16-byte header of big-endian pindex, tag, nbytes and an ignored padding word,
 * then nbytes of payload; docs/transport.md §5.1), with each payload copied once into an array of
 * its own as the bytes arrive, and every received buffer released as soon as it is read.
 *
 * <p>Why not {@link FrameDecoder}: the server decodes every request from an array anyway, so a
 * frame's retained slice of the received buffer, the decoder base class's cumulation and its
 * output list were work per message (~10% of a fresh server's progress thread at {@code -n 8},
 * interpreted; docs/architecture.md, "The server's own frame reader"), and a buffer kept by a
 * partial frame is one a {@code LoopReceiveBuffer} cannot reuse.
 *
 * <p>The same limits as {@link FrameDecoder}: a header announcing more than {@code
 * maxPayloadLength} fires a {@link PmixException} with {@code ERR_OUT_OF_RESOURCE} down the
 * pipeline before any of that payload is kept, and every later byte is discarded (the stream can
 * no longer be framed; the handler owning the connection closes it). A frame whose payload is not
 * all there reserves its length from {@code budget} before its array is made, until it completes
 * or the channel goes; when the budget cannot take it, the same failure. Other messages (a
 * decoded connect request ahead of it) pass through untouched. One instance per channel.
 */
public final class FrameReader extends PlainInboundHandler {
  private final int maxPayloadLength;
  private final FrameBudget budget;

  /** The header being received when it arrived split, and how much of it is here. */
  private final byte[] header = new byte[FrameDecoder.HEADER_LENGTH];

  private int headerHave;

  /**
   * Where the payload of the frame being received goes (its header known; as long as the frame
   * once it is all here, less before), and how much of it is here.
   */
  private byte @Nullable [] payload;

  private int payloadHave;

  /** The length the frame being received announced. */
  private int expected;

  private int pindex;
  private int tag;

  /** What the frame being received holds of {@link #budget}. */
  private long reserved;

  private boolean failed;

  /**
   * A reader refusing payloads longer than {@code maxPayloadLength} bytes, and partial frames that
   * {@code budget} cannot hold.
   *
   * @throws IllegalArgumentException if the limit is negative
   */
  public FrameReader(int maxPayloadLength, FrameBudget budget) {
    if (maxPayloadLength < 0) {
      throw new IllegalArgumentException("maxPayloadLength < 0: " + maxPayloadLength);
    }
    this.maxPayloadLength = maxPayloadLength;
    this.budget = budget;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ctx.fireChannelRead(msg);
      return;
    }
    try {
      if (!failed) {
        read(ctx, in);
      }
    } finally {
      boolean unused = in.release();
    }
  }

  private void read(ChannelHandlerContext ctx, ByteBuf in) {
    while (in.isReadable()) {
      byte[] p = payload;
      if (p == null) {
        long nbytes;
        if (headerHave == 0 && in.readableBytes() >= FrameDecoder.HEADER_LENGTH) {
          int at = in.readerIndex();
          pindex = in.getInt(at);
          tag = in.getInt(at + 4);
          nbytes = in.getUnsignedInt(at + 8);
          in.skipBytes(FrameDecoder.HEADER_LENGTH);
        } else {
          int n = Math.min(FrameDecoder.HEADER_LENGTH - headerHave, in.readableBytes());
          in.readBytes(header, headerHave, n);
          headerHave += n;
          if (headerHave < FrameDecoder.HEADER_LENGTH) {
            return;
          }
          headerHave = 0;
          pindex = intAt(0);
          tag = intAt(4);
          nbytes = intAt(8) & 0xffffffffL;
        }
        p = begin(ctx, nbytes, in.readableBytes());
        if (p == null) {
          in.skipBytes(in.readableBytes());
          return;
        }
      }
      int n = Math.min(expected - payloadHave, in.readableBytes());
      if (payloadHave + n > p.length) {
        p = Arrays.copyOf(p, Math.min(expected, Math.max(payloadHave + n, 2 * p.length)));
        payload = p;
      }
      in.readBytes(p, payloadHave, n);
      payloadHave += n;
      if (payloadHave == expected) {
        payload = null;
        giveBack();
        ctx.fireChannelRead(new ArrayFrame(pindex, tag, p));
      }
    }
  }

  /** The new frame's payload array, or null after failing the stream. */
  private byte @Nullable [] begin(ChannelHandlerContext ctx, long nbytes, int available) {
    PmixException refused = FrameLimits.admit(nbytes, tag, maxPayloadLength, available, budget);
    if (refused != null) {
      fail(ctx, refused);
      return null;
    }
    reserved = FrameLimits.held(nbytes, available);
    // A frame all here gets its array at once; a partial one an array for what has come, grown
    // as the rest arrives: a peer that announces a large frame and stalls holds its budget, not
    // that much memory (as the cumulation of FrameDecoder held only what had come).
    expected = (int) nbytes;
    byte[] p = FrameLimits.payloadArray(expected, available);
    payload = p;
    payloadHave = 0;
    return p;
  }

  /** The bytes this reader holds for the frame being received (for tests). */
  int held() {
    byte[] p = payload;
    return p == null ? 0 : p.length;
  }

  private int intAt(int i) {
    return (header[i] & 0xff) << 24
        | (header[i + 1] & 0xff) << 16
        | (header[i + 2] & 0xff) << 8
        | (header[i + 3] & 0xff);
  }

  private void fail(ChannelHandlerContext ctx, PmixException e) {
    failed = true;
    payload = null;
    giveBack();
    ctx.fireExceptionCaught(e);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    // A partial frame of a closed connection will never complete.
    payload = null;
    giveBack();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    payload = null;
    giveBack();
  }

  private void giveBack() {
    if (reserved != 0) {
      budget.release(reserved);
      reserved = 0;
    }
  }
}
