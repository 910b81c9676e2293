package io.pmix.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.unix.UnixChannel;
import io.pmix.common.codec.WireBuffer;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Puts an encoded frame on a peer's socket: with one {@code write(2)} of the progress thread when
 * nothing is queued on the channel before it, else (and for what the socket does not take at
 * once) through Netty's outbound path, which then keeps the order.
 *
 * <p>Why: a fresh server runs its first hundreds of replies interpreted, and Netty's path for one
 * small frame (a pooled direct buffer allocated and filled, the pipeline's write and flush, the
 * outbound buffer's bookkeeping) was ~15% of the progress thread's time in a fence-heavy job
 * (`-Xint` profile, docs/architecture.md "Replies straight to the socket"); one copy into a
 * per-thread direct buffer and the native write replace it. The bytes, their order and the
 * failure handling are Netty's: a write the socket refuses with an error is handed to Netty, which
 * meets the same error and closes the channel as it always did.
 *
 * <p>Progress thread only (the channel's event loop); a call from elsewhere, a channel that is not
 * a native one (NIO, embedded) and a frame larger than the direct buffer take Netty's path.
 */
final class SocketSender {
  /** The largest frame sent straight; larger ones are rare and dominated by their copy anyway. */
  static final int DIRECT_LIMIT = 16 * 1024;

  /** One direct buffer per progress thread (several servers in one JVM have one each). */
  private static final ThreadLocal<ByteBuffer> SCRATCH =
      new ThreadLocal<ByteBuffer>() {
        @Override
        protected ByteBuffer initialValue() {
          return ByteBuffer.allocateDirect(DIRECT_LIMIT);
        }
      };

  private SocketSender() {}

  /** Sends the first {@code length} bytes of {@code frame} (written from index 0) to {@code ch}. */
  static void send(Channel ch, WireBuffer frame, int length) {
    if (length <= DIRECT_LIMIT
        && ch instanceof UnixChannel unix
        && ch.eventLoop().inEventLoop()
        && nothingQueued(ch)) {
      ByteBuffer scratch = SCRATCH.get();
      scratch.clear();
      scratch.limit(length);
      frame.getBytes(0, scratch);
      int written;
      try {
        written = unix.fd().write(scratch, 0, length);
      } catch (IOException e) {
        written = 0; // Netty's write below meets the error and handles it as for any write
      }
      if (written == length) {
        return;
      }
      scratch.limit(length).position(written);
      ByteBuf rest = ch.alloc().directBuffer(length - written);
      rest.writeBytes(scratch);
      ChannelFuture unused = ch.writeAndFlush(rest);
      return;
    }
    ByteBuf out = ch.alloc().directBuffer(length);
    out.writeBytes(frame.nioBuffer(0, length));
    ChannelFuture unused = ch.writeAndFlush(out);
  }

  /**
   * The channel is open (its descriptor is still its socket: a closed one's number may already
   * name another file) and no byte written through Netty is waiting, flushed or not, so a direct
   * write keeps the order. On the event loop nothing changes either between this and the write.
   */
  private static boolean nothingQueued(Channel ch) {
    if (!ch.isActive()) {
      return false;
    }
    ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
    return out != null && out.isEmpty() && out.totalPendingWriteBytes() == 0;
  }
}
