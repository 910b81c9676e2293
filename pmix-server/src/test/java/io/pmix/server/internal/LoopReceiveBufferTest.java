package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link LoopReceiveBuffer} over real sockets, with the server's frame decoder: reads of several
 * connections reuse the loop's one buffer while nobody holds it; a frame not complete yet keeps
 * it (as the decoder's cumulation), and reads made meanwhile, of that connection or another, get
 * buffers of their own, so no byte held is overwritten; every frame arrives whole; the loop's
 * end releases the buffer.
 */
@Timeout(60)
class LoopReceiveBufferTest {
  private EventLoopGroup group;
  private Channel listener;
  private final List<Socket> peers = new ArrayList<>();

  /** What the loop read, in order: the buffer of each read, then the frames decoded. */
  private final BlockingQueue<ByteBuf> reads = new LinkedBlockingQueue<>();
  private final BlockingQueue<byte[]> frames = new LinkedBlockingQueue<>();

  @AfterEach
  void close() throws Exception {
    for (Socket s : peers) {
      s.close();
    }
    if (listener != null) {
      listener.close().sync();
    }
    if (group != null) {
      group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }
  }

  private LoopReceiveBuffer start(boolean epoll) throws Exception {
    if (epoll) {
      assumeTrue(Epoll.isAvailable(), "no native epoll transport here");
    }
    group =
        new MultiThreadIoEventLoopGroup(
            1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    EventLoop loop = group.next();
    LoopReceiveBuffer receive = LoopReceiveBuffer.of(loop);
    listener =
        new ServerBootstrap()
            .group(loop)
            .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    var unused = ch.config().setRecvByteBufAllocator(receive);
                    ch.pipeline()
                        .addLast(new ReadRecorder())
                        .addLast(new FrameDecoder(1 << 20))
                        .addLast(new FrameRecorder());
                  }
                })
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .sync()
            .channel();
    return receive;
  }

  /** Notes each read's buffer (the identity only) and passes it on. */
  private final class ReadRecorder extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      reads.add((ByteBuf) msg);
      ctx.fireChannelRead(msg);
    }
  }

  /** Copies each frame's payload out and releases the frame, as the server's dispatch does. */
  private final class FrameRecorder extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Frame f = (Frame) msg;
      try {
        byte[] b = new byte[f.payload().readableBytes()];
        f.payload().readBytes(b);
        frames.add(b);
      } finally {
        f.release();
      }
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket();
    peers.add(s);
    s.setTcpNoDelay(true);
    s.connect(listener.localAddress());
    return s;
  }

  /** A frame of {@code length} payload bytes, each derived from {@code seed} and its place. */
  private static byte[] frame(int seed, int length) {
    ByteBuffer b = ByteBuffer.allocate(FrameDecoder.HEADER_LENGTH + length);
    b.putInt(0).putInt(seed).putInt(length).putInt(0);
    for (int k = 0; k < length; k++) {
      b.put((byte) (seed * 31 + k));
    }
    return b.array();
  }

  private static byte[] payload(int seed, int length) {
    byte[] f = frame(seed, length);
    byte[] p = new byte[length];
    System.arraycopy(f, FrameDecoder.HEADER_LENGTH, p, 0, length);
    return p;
  }

  private ByteBuf nextRead() throws InterruptedException {
    ByteBuf b = reads.poll(10, TimeUnit.SECONDS);
    if (b == null) {
      throw new AssertionError("no read within 10 s");
    }
    return b;
  }

  private byte[] nextFrame() throws InterruptedException {
    byte[] b = frames.poll(10, TimeUnit.SECONDS);
    if (b == null) {
      throw new AssertionError("no frame within 10 s");
    }
    return b;
  }

  /** The buffer's reference count as the loop sees it once it has handled what came before. */
  private int refCntOnLoop(LoopReceiveBuffer receive) throws Exception {
    return listener.eventLoop().submit(() -> receive.buffer().refCnt()).get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest(name = "epoll={0}")
  @ValueSource(booleans = {true, false})
  void readsOfSeveralConnectionsReuseTheLoopsBuffer(boolean epoll) throws Exception {
    LoopReceiveBuffer receive = start(epoll);
    Socket a = connect();
    Socket b = connect();
    for (int i = 0; i < 6; i++) {
      Socket s = i % 2 == 0 ? a : b;
      s.getOutputStream().write(frame(i, 100 + i));
      // One frame at a time: each read is handled before the next one's bytes are sent.
      assertArrayEquals(payload(i, 100 + i), nextFrame(), "frame " + i);
      assertSame(receive.buffer(), nextRead(), "read " + i + " in the loop's buffer");
    }
    assertEquals(1, refCntOnLoop(receive), "nobody holds the buffer between reads");
  }

  @ParameterizedTest(name = "epoll={0}")
  @ValueSource(booleans = {true, false})
  void aFrameNotCompleteKeepsTheBufferAndOtherReadsGetTheirOwn(boolean epoll) throws Exception {
    LoopReceiveBuffer receive = start(epoll);
    Socket a = connect();
    Socket b = connect();
    byte[] big = frame(7, 3000);
    OutputStream out = a.getOutputStream();
    out.write(big, 0, 1000);
    out.flush();
    // The first part sits in the decoder's cumulation, which is the loop's buffer.
    assertSame(receive.buffer(), nextRead());
    assertEquals(2, refCntOnLoop(receive), "the partial frame holds the buffer");

    // Another connection's read meanwhile: a buffer of its own, its frame whole.
    b.getOutputStream().write(frame(8, 200));
    assertArrayEquals(payload(8, 200), nextFrame());
    assertNotSame(receive.buffer(), nextRead(), "a read while the buffer is held");

    // The rest of the first frame: what was held was not overwritten.
    out.write(big, 1000, big.length - 1000);
    out.flush();
    assertArrayEquals(payload(7, 3000), nextFrame());
    assertNotSame(receive.buffer(), nextRead());
    assertEquals(1, refCntOnLoop(receive), "the completed frame let the buffer go");

    // And the next read reuses it again.
    b.getOutputStream().write(frame(9, 50));
    assertArrayEquals(payload(9, 50), nextFrame());
    assertSame(receive.buffer(), nextRead());
  }

  @ParameterizedTest(name = "epoll={0}")
  @ValueSource(booleans = {true, false})
  void framesLargerThanTheBufferArriveWhole(boolean epoll) throws Exception {
    LoopReceiveBuffer receive = start(epoll);
    Socket a = connect();
    Socket b = connect();
    int large = 3 * LoopReceiveBuffer.CAPACITY + 123;
    // Both connections' bytes interleave at the loop; each frame must come out whole.
    CompletableFuture<Void> sent =
        CompletableFuture.runAsync(
            () -> {
              try {
                a.getOutputStream().write(frame(1, large));
                a.getOutputStream().write(frame(2, 10));
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    b.getOutputStream().write(frame(3, large));
    sent.get(10, TimeUnit.SECONDS);
    List<byte[]> got = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      got.add(nextFrame());
    }
    int seen = 0;
    for (byte[] g : got) {
      int seed = g.length == 10 ? 2 : (g[0] == (byte) (1 * 31) ? 1 : 3);
      assertArrayEquals(payload(seed, g.length), g, "frame " + seed);
      seen |= 1 << seed;
    }
    assertEquals(0b1110, seen, "frames 1, 2 and 3");
    assertEquals(1, refCntOnLoop(receive));
  }

  @ParameterizedTest(name = "epoll={0}")
  @ValueSource(booleans = {true, false})
  void theLoopsEndReleasesTheBuffer(boolean epoll) throws Exception {
    LoopReceiveBuffer receive = start(epoll);
    Socket a = connect();
    a.getOutputStream().write(frame(1, 10));
    assertArrayEquals(payload(1, 10), nextFrame());
    // Listeners are told in the order they were added: this one after the buffer's own.
    CompletableFuture<Void> told = new CompletableFuture<>();
    var unused = listener.eventLoop().terminationFuture().addListener(f -> told.complete(null));
    listener.close().sync();
    listener = null;
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    group = null;
    told.get(10, TimeUnit.SECONDS);
    assertEquals(0, receive.buffer().refCnt());
  }
}
