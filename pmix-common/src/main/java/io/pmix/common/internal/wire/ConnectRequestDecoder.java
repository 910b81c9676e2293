package io.pmix.common.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.pmix.common.PmixException;
import io.pmix.common.codec.WireBuffer;
import java.util.List;

/**
 * The server side's first handler on an accepted connection: reads exactly one connect request,
 * emits it as a {@link ConnectRequest}, and removes itself from the pipeline, like Netty's {@code
 * HAProxyMessageDecoder}. Bytes that arrived behind the request are handed to the next handler,
 * normally a {@link FrameDecoder}, since the rest of the stream is framed differently.
 *
 * <p>The header's {@code nbytes} is read as little-endian (see {@link ConnectRequestCodec}) and
 * checked against the limit given at construction before anything is buffered. A request that is
 * too long (including one whose length was written big-endian by mistake, which turns any plausible
 * length into hundreds of megabytes) or malformed fires a {@link PmixException} down the pipeline,
 * and every later byte is discarded: {@code ERR_OUT_OF_RESOURCE} for the length, else the status of
 * {@link ConnectRequestCodec#decodePayload}. The decoder does not close the channel; the server
 * must, without replying: a closed socket is the only rejection every C connector understands
 * (docs/transport.md §7.1).
 *
 * <p>Every received buffer is released once read: a request that has come only in part is copied
 * into a buffer of the decoder's own, never kept as it arrived, since the server's reads share one
 * receive buffer per loop ({@code LoopReceiveBuffer}), which a held buffer would take from every
 * other connection of the loop until the request completed or the handshake timed out.
 *
 * <p>One instance per channel.
 */
public final class ConnectRequestDecoder extends PlainDecoder {
  private final int maxPayloadLength;
  private boolean failed;

  /** A decoder with the C server's limit, {@link ConnectRequestCodec#DEFAULT_MAX_PAYLOAD}. */
  public ConnectRequestDecoder() {
    this(ConnectRequestCodec.DEFAULT_MAX_PAYLOAD);
  }

  /**
   * A decoder refusing requests whose payload exceeds {@code maxPayloadLength} bytes.
   *
   * @throws IllegalArgumentException if the limit is negative
   */
  public ConnectRequestDecoder(int maxPayloadLength) {
    if (maxPayloadLength < 0) {
      throw new IllegalArgumentException("maxPayloadLength < 0: " + maxPayloadLength);
    }
    this.maxPayloadLength = maxPayloadLength;
    setCumulator(COPY_FIRST);
  }

  /**
   * {@code ByteToMessageDecoder}'s merging cumulator, but a first read is copied instead of kept
   * as the cumulation (which the merging one does when nothing is cumulated yet): a connect
   * request is a few hundred bytes, read once per connection.
   */
  private static final Cumulator COPY_FIRST =
      new Cumulator() {
        @Override
        public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
          if (cumulation.isReadable()) {
            return MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
          }
          try {
            ByteBuf copy = alloc.heapBuffer(in.readableBytes());
            copy.writeBytes(in);
            cumulation.release();
            return copy;
          } finally {
            in.release();
          }
        }
      };

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (in.readableBytes() < ConnectRequestCodec.HEADER_LENGTH) {
      return;
    }
    long nbytes = ConnectRequestCodec.peekPayloadLength(in);
    if (nbytes > maxPayloadLength) {
      fail(ctx, in, ConnectRequestCodec.tooLong(nbytes, maxPayloadLength));
      return;
    }
    if (in.readableBytes() - ConnectRequestCodec.HEADER_LENGTH < nbytes) {
      return;
    }
    in.skipBytes(ConnectRequestCodec.HEADER_LENGTH);
    // Copied once and decoded from the array: through the ByteBuf every field costs a fresh
    // server several interpreted calls per byte (docs/architecture.md, "The handshake's strings").
    byte[] payload = new byte[(int) nbytes];
    in.readBytes(payload);
    ConnectRequest request;
    try {
      request = ConnectRequestCodec.decodePayload(WireBuffer.wrap(payload));
    } catch (PmixException e) {
      fail(ctx, in, e);
      return;
    }
    out.add(request);
    // Removal from inside decode() is deferred by ByteToMessageDecoder until `out` has been
    // fired, so the request reaches the next handler before the bytes that followed it.
    ctx.pipeline().remove(this);
  }


  private void fail(ChannelHandlerContext ctx, ByteBuf in, PmixException e) {
    failed = true;
    in.skipBytes(in.readableBytes());
    ctx.fireExceptionCaught(e);
  }
}
