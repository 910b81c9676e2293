package io.pmix.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;

/**
 * Where the connections of one event loop read their bytes: one direct buffer, reused by every
 * read of every connection while nobody else holds it, instead of a fresh buffer from Netty's
 * allocator per read.
 *
 * <p>Why: Netty's default receive path asks its adaptive pooling allocator for a buffer at every
 * read, and that allocator keeps making new direct chunks (zeroed and faulted in by the kernel) in
 * a young server: 9% of a fresh pmixrun's progress-thread time in a one-process job
 * (docs/architecture.md, "One receive buffer per loop"). The server's readers copy what they keep
 * ({@code FrameReader} copies each payload into an array), so the buffer is free again as soon as
 * the pipeline has handled a read.
 *
 * <p>Reference counts decide: the buffer keeps one reference of its own; a read gets it (one more
 * reference, released by the pipeline as any received buffer) only when that is the only one left.
 * When a handler still holds it (none of the server's does: {@code FrameReader} and {@code
 * ConnectRequestDecoder} copy what has come of a message not complete yet), or the read runs on
 * another thread than the loop's, the read gets a buffer of its own from the channel's allocator,
 * as before. The loop's termination releases the buffer's own reference.
 */
public final class LoopReceiveBuffer extends DefaultMaxMessagesRecvByteBufAllocator {
  /** The buffer's size: the largest read, as Netty's adaptive guess allows by default. */
  static final int CAPACITY = 64 * 1024;

  /** Reads per readiness event, as Netty's epoll and NIO stream channels default to. */
  private static final int MAX_MESSAGES_PER_READ = 16;

  private final EventLoop loop;
  private final ByteBuf shared;

  private LoopReceiveBuffer(EventLoop loop, ByteBuf shared) {
    super(MAX_MESSAGES_PER_READ);
    this.loop = loop;
    this.shared = shared;
  }

  /** The receive buffer of {@code loop}'s connections, released when the loop terminates. */
  public static LoopReceiveBuffer of(EventLoop loop) {
    ByteBuf b = UnpooledByteBufAllocator.DEFAULT.directBuffer(CAPACITY, CAPACITY);
    LoopReceiveBuffer r = new LoopReceiveBuffer(loop, b);
    var unused = loop.terminationFuture().addListener(new Release(b));
    return r;
  }

  /** The buffer itself (for tests: its reference count tells who holds it). */
  ByteBuf buffer() {
    return shared;
  }

  @Override
  public Handle newHandle() {
    return new Handle();
  }

  /** One connection's reads. */
  private final class Handle extends MaxMessageHandle {
    @Override
    public ByteBuf allocate(ByteBufAllocator alloc) {
      if (shared.refCnt() == 1 && loop.inEventLoop()) {
        return shared.retain().clear();
      }
      return alloc.ioBuffer(CAPACITY);
    }

    @Override
    public int guess() {
      return CAPACITY;
    }
  }

  /** Drops the buffer's own reference. A class, not a lambda: every server start adds one. */
  private static final class Release implements GenericFutureListener<Future<Object>> {
    private final ByteBuf b;

    Release(ByteBuf b) {
      this.b = b;
    }

    @Override
    public void operationComplete(Future<Object> f) {
      if (b.refCnt() > 0) {
        boolean unused = b.release();
      }
    }
  }
}
