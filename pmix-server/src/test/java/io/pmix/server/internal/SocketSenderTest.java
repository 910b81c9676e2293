package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.pmix.common.codec.WireBuffer;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link SocketSender} puts frames on a real socket in the order they were sent, whichever way each
 * one leaves: straight through the descriptor while nothing is queued, through Netty once the peer
 * stops reading and the socket fills (a partial write's rest, the frames after it, frames too large
 * for the direct buffer), and straight again once Netty's queue has drained.
 */
@Timeout(60)
class SocketSenderTest {
  private EventLoopGroup group;
  private Channel listener;
  private Socket peer;

  @AfterEach
  void close() throws Exception {
    if (peer != null) {
      peer.close();
    }
    if (listener != null) {
      listener.close().sync();
    }
    if (group != null) {
      group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }
  }

  /** A connected pair: the server side's channel and a blocking client socket. */
  private Channel connect(boolean epoll) throws Exception {
    group =
        new MultiThreadIoEventLoopGroup(
            1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    CompletableFuture<Channel> accepted = new CompletableFuture<>();
    listener =
        new ServerBootstrap()
            .group(group)
            .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
            // Small, so that the socket fills after a few frames (loopback buffers autotune to MiBs).
            .childOption(ChannelOption.SO_SNDBUF, 8192)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new ChannelInboundHandlerAdapter());
                    accepted.complete(ch);
                  }
                })
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .sync()
            .channel();
    peer = new Socket();
    peer.setReceiveBufferSize(4096);
    peer.connect(listener.localAddress());
    return accepted.get(10, TimeUnit.SECONDS);
  }

  /** Frame {@code i}: its length (4 bytes), its number, then filler derived from both. */
  private static WireBuffer frame(int i, int length) {
    WireBuffer w = WireBuffer.allocate(length);
    w.writeInt(length);
    w.writeInt(i);
    for (int k = 8; k < length; k++) {
      w.writeByte(i * 31 + k);
    }
    return w;
  }

  private static int lengthOf(int i) {
    // Mostly small, as replies are; every 50th larger than the direct buffer.
    return i % 50 == 49 ? SocketSender.DIRECT_LIMIT + 1 + i : 8 + (i * 37) % 3000;
  }

  /** Reads {@code n} frames and checks each is frame {@code from + k}, whole. */
  private void expect(int from, int n) throws IOException {
    DataInputStream in = new DataInputStream(peer.getInputStream());
    for (int i = from; i < from + n; i++) {
      int length = in.readInt();
      assertEquals(lengthOf(i), length, "length of frame " + i);
      assertEquals(i, in.readInt(), "frame " + i + " in its place");
      byte[] rest = new byte[length - 8];
      in.readFully(rest);
      byte[] want = new byte[length];
      frame(i, length).getBytes(0, ByteBuffer.wrap(want));
      assertArrayEquals(Arrays.copyOfRange(want, 8, length), rest, "frame " + i);
    }
  }

  private static void sendOnLoop(Channel ch, int from, int n) throws Exception {
    ch.eventLoop()
        .submit(
            () -> {
              for (int i = from; i < from + n; i++) {
                WireBuffer f = frame(i, lengthOf(i));
                SocketSender.send(ch, f, f.writerIndex());
              }
            })
        .get(30, TimeUnit.SECONDS);
  }

  @ParameterizedTest(name = "epoll={0}")
  @ValueSource(booleans = {true, false})
  @Timeout(60)
  void framesArriveWholeAndInOrderThroughAFullSocket(boolean epoll) throws Exception {
    if (epoll) {
      assumeTrue(Epoll.isAvailable(), "no native epoll transport here");
    }
    Channel ch = connect(epoll);
    // Far more than the socket holds while nobody reads: the later frames queue in Netty.
    sendOnLoop(ch, 0, 600);
    int pending =
        ch.eventLoop()
            .submit(() -> (int) ch.unsafe().outboundBuffer().totalPendingWriteBytes())
            .get(10, TimeUnit.SECONDS);
    assertTrue(pending > 0, "the socket filled and Netty holds the rest");
    // Sent while Netty still holds bytes: these must queue behind them, not jump ahead.
    sendOnLoop(ch, 600, 20);
    expect(0, 620);
    // Drained: frames may go straight to the socket again, still in order.
    waitDrained(ch);
    sendOnLoop(ch, 620, 30);
    expect(620, 30);
  }

  @Test
  void aClosedChannelGetsNothingAndTheCallerNoFailure() throws Exception {
    assumeTrue(Epoll.isAvailable(), "no native epoll transport here");
    Channel ch = connect(true);
    ch.close().sync();
    sendOnLoop(ch, 0, 3); // no exception on the loop (get() would rethrow it)
    InputStream in = peer.getInputStream();
    assertEquals(-1, in.read(), "the peer sees the end of the stream and no frame");
  }

  private static void waitDrained(Channel ch) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (ch.eventLoop()
            .submit(() -> ch.unsafe().outboundBuffer().totalPendingWriteBytes())
            .get(10, TimeUnit.SECONDS)
        > 0) {
      assertTrue(System.nanoTime() < deadline, "Netty's queue never drained");
      Thread.onSpinWait();
    }
  }
}
