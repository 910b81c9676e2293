package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.internal.PmixNativeLibrary;
import io.pmix.common.testing.ProcessResources;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The connector's progress thread: order, timers, sockets and its end, on each poller (the native
 * one and NIO's hold the same contract).
 */
@Timeout(30)
class ProgressLoopTest {
  /** The poller a new loop would open now is a {@code kind}. */
  private static void assertOpens(Class<? extends Poller> kind) throws IOException {
    Poller p = Poller.open();
    try {
      assertInstanceOf(kind, p);
    } finally {
      p.close();
    }
  }

  @Test
  void thisBuildPollsThroughItsOwnLibrary() throws IOException {
    assertTrue(PmixNativeLibrary.load(), PmixNativeLibrary.failure());
    assertOpens(NativePoller.class);
  }

  @Test
  void thePropertyChoosesNioOrRefusesWhatItDoesNotKnow() throws IOException {
    try {
      System.setProperty(Poller.PROPERTY, "nio");
      assertOpens(NioPoller.class);
      System.setProperty(Poller.PROPERTY, "epoll");
      var e = assertThrows(IllegalArgumentException.class, Poller::open);
      assertTrue(e.getMessage().contains("io.pmix.connector.poller=epoll"), e.getMessage());
      System.setProperty(Poller.PROPERTY, "auto");
      assertOpens(NativePoller.class);
    } finally {
      System.clearProperty(Poller.PROPERTY);
    }
  }

  @Nested
  class OnNativePoller extends Contract {
    @Override
    ProgressLoop.PollerOpener opener() {
      return NativePoller::open;
    }
  }

  @Nested
  class OnNioPoller extends Contract {
    @Override
    ProgressLoop.PollerOpener opener() {
      return NioPoller::open;
    }
  }

  /** What both pollers do. */
  abstract static class Contract {

    final List<Thread> started = new CopyOnWriteArrayList<>();
    final ProgressLoop loop =
        new ProgressLoop(
            r -> {
              Thread t = new Thread(r, "test-progress");
              t.setDaemon(true);
              started.add(t);
              return t;
            },
            opener());

    /** The poller under test. */
    abstract ProgressLoop.PollerOpener opener();

    @AfterEach
    void stop() throws InterruptedException {
      loop.shutdown();
      assertTrue(loop.awaitTermination(10_000));
    }

    @Test
    void theThreadStartsWithTheFirstTaskAndRunsTasksInOrder() throws Exception {
      assertTrue(started.isEmpty());
      List<Integer> seen = new CopyOnWriteArrayList<>();
      CountDownLatch done = new CountDownLatch(1);
      for (int i = 0; i < 1000; i++) {
        int n = i;
        loop.execute(() -> seen.add(n));
      }
      loop.execute(done::countDown);
      assertTrue(done.await(10, TimeUnit.SECONDS));
      assertEquals(1, started.size());
      for (int i = 0; i < 1000; i++) {
        assertEquals(i, seen.get(i));
      }
    }

    @Test
    void timersRunInDeadlineOrderAndACancelledOneNever() throws Exception {
      List<String> seen = new CopyOnWriteArrayList<>();
      CountDownLatch done = new CountDownLatch(1);
      loop.execute(
          () -> {
            loop.schedule(() -> seen.add("late"), 60);
            ProgressLoop.Timer t = loop.schedule(() -> seen.add("cancelled"), 10);
            loop.schedule(() -> seen.add("early"), 20);
            t.cancel();
            loop.schedule(done::countDown, 100);
          });
      assertTrue(done.await(10, TimeUnit.SECONDS));
      assertEquals(List.of("early", "late"), seen);
    }

    @Test
    void schedulingOffTheLoopIsRefused() {
      assertThrows(IllegalStateException.class, () -> loop.schedule(() -> {}, 1));
    }

    @Test
    void aTaskThatThrowsDoesNotStopTheLoop() throws Exception {
      CountDownLatch done = new CountDownLatch(1);
      loop.execute(
          () -> {
            throw new IllegalStateException("expected by the test");
          });
      loop.execute(done::countDown);
      assertTrue(done.await(10, TimeUnit.SECONDS));
    }

    @Test
    void aLoopShutDownBeforeItRanStartsNoThread() throws Exception {
      loop.shutdown();
      assertTrue(loop.awaitTermination(1_000));
      assertTrue(started.isEmpty());
      assertThrows(RejectedExecutionException.class, () -> loop.execute(() -> {}));
    }

    @Test
    void whatRunsAfterTerminationRunsOnceOnTheLoopsThreadAfterItsLastTask() throws Exception {
      List<String> seen = new CopyOnWriteArrayList<>();
      CountDownLatch after = new CountDownLatch(1);
      loop.whenTerminated(
          () -> {
            seen.add("after " + loop.isTerminated() + " " + Thread.currentThread().getName());
            after.countDown();
          });
      loop.execute(() -> seen.add("task"));
      loop.shutdown();
      assertTrue(after.await(10, TimeUnit.SECONDS));
      loop.shutdown(); // again: nothing more runs
      assertTrue(loop.awaitTermination(10_000));
      assertEquals(List.of("task", "after true test-progress"), seen);
    }

    @Test
    void whatRunsAfterTerminationRunsInTheCallerWhenNoThreadStarted() {
      List<String> seen = new CopyOnWriteArrayList<>();
      loop.whenTerminated(() -> seen.add(Thread.currentThread().getName()));
      loop.shutdown();
      loop.shutdown();
      assertEquals(List.of(Thread.currentThread().getName()), seen);
      assertTrue(started.isEmpty());
    }

    @Test
    void tasksHandedInBeforeShutdownStillRun() throws Exception {
      CountDownLatch ran = new CountDownLatch(100);
      CountDownLatch gate = new CountDownLatch(1);
      loop.execute(
          () -> {
            try {
              gate.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      for (int i = 0; i < 100; i++) {
        loop.execute(ran::countDown);
      }
      loop.shutdown();
      gate.countDown();
      assertTrue(loop.awaitTermination(10_000));
      assertEquals(0, ran.getCount());
    }

    /**
     * A loop socket connected to a listener of the test's, and the listener's end; closing it
     * closes the listener.
     */
    private final class Pair implements AutoCloseable {
      final ServerSocketChannel server;
      final CompletableFuture<StreamSocket> socket = new CompletableFuture<>();
      final CompletableFuture<Void> connected = new CompletableFuture<>();
      final ByteArrayOutputStream received = new ByteArrayOutputStream();
      final CompletableFuture<Integer> ended = new CompletableFuture<>();
      final CompletableFuture<Void> toldOfShutdown = new CompletableFuture<>();
      volatile int expect = Integer.MAX_VALUE;
      final CompletableFuture<byte[]> got = new CompletableFuture<>();

      Pair() throws IOException {
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      }

      int port() throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
      }

      @Override
      public void close() throws IOException {
        server.close();
      }

      /**
       * Connects from the loop to the listener at 127.0.0.1 and returns the listener's end, once
       * the loop's socket has its connect's outcome.
       */
      SocketChannel connectedPeer() throws Exception {
        connect("127.0.0.1", port());
        SocketChannel peer = server.accept();
        try {
          connected.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
          peer.close();
          throw e;
        }
        return peer;
      }

      /** Connects from the loop, reading whatever comes into {@link #received}. */
      void connect(String host, int port) {
        loop.execute(
            () -> {
              try {
                StreamSocket s = loop.socket(registrant());
                socket.complete(s);
                if (s.connect(host, port)) {
                  s.interest(Poller.OP_READ);
                  connected.complete(null);
                } else {
                  s.interest(Poller.OP_CONNECT);
                }
              } catch (IOException e) {
                connected.completeExceptionally(e);
              }
            });
      }

      private ProgressLoop.Registrant registrant() {
        return new ProgressLoop.Registrant() {
          @Override
          public void ready(int ops) {
            StreamSocket s = socket.join();
            try {
              if ((ops & Poller.OP_CONNECT) != 0) {
                assertTrue(s.finishConnect());
                s.interest(Poller.OP_READ);
                connected.complete(null);
                return;
              }
              if ((ops & Poller.OP_WRITE) != 0) {
                flush(s);
              }
              if ((ops & Poller.OP_READ) != 0) {
                byte[] b = new byte[7];
                int n;
                while ((n = s.read(b, 0, b.length)) > 0) {
                  received.write(b, 0, n);
                }
                if (received.size() >= expect) {
                  got.complete(received.toByteArray());
                }
                if (n < 0) {
                  s.close();
                  ended.complete(received.size());
                }
              }
            } catch (IOException e) {
              connected.completeExceptionally(e);
              ended.completeExceptionally(e);
              try {
                s.close();
              } catch (IOException e2) {
                e.addSuppressed(e2);
              }
            }
          }

          @Override
          public void shutdown() {
            try {
              socket.join().close();
              toldOfShutdown.complete(null);
            } catch (IOException e) {
              toldOfShutdown.completeExceptionally(e);
            }
          }
        };
      }

      byte[] outgoing = new byte[0];
      int sent;

      /** Writes {@code data} from the loop, the rest as the socket takes it. */
      void send(byte[] data) {
        loop.execute(
            () -> {
              outgoing = data;
              sent = 0;
              try {
                flush(socket.join());
              } catch (IOException e) {
                ended.completeExceptionally(e);
              }
            });
      }

      private void flush(StreamSocket s) throws IOException {
        while (sent < outgoing.length) {
          int n = s.write(outgoing, sent, outgoing.length - sent);
          if (n == 0) {
            s.interest(s.interest() | Poller.OP_WRITE);
            return;
          }
          sent += n;
        }
        s.interest(s.interest() & ~Poller.OP_WRITE);
      }
    }

    @Test
    void aSocketConnectsReadsWritesAndIsClosedAtShutdownWithItsRegistrantTold() throws Exception {
      List<String> fds = ProcessResources.openFds();
      try (Pair p = new Pair()) {
        try (SocketChannel peer = p.connectedPeer()) {
          p.expect = 4;
          peer.write(ByteBuffer.wrap("ping".getBytes(StandardCharsets.US_ASCII)));
          assertEquals("ping", new String(p.got.get(10, TimeUnit.SECONDS), StandardCharsets.US_ASCII));
          p.send("pong".getBytes(StandardCharsets.US_ASCII));
          ByteBuffer b = ByteBuffer.allocate(4);
          while (b.hasRemaining()) {
            assertTrue(peer.read(b) > 0);
          }
          assertEquals("pong", new String(b.array(), StandardCharsets.US_ASCII));
          loop.shutdown();
          p.toldOfShutdown.get(10, TimeUnit.SECONDS);
          assertTrue(loop.awaitTermination(10_000));
          assertFalse(p.socket.join().isOpen());
          // The peer sees the close.
          assertEquals(-1, peer.read(ByteBuffer.allocate(4)));
        }
      }
      assertTrue(loop.isTerminated());
      assertThrows(RejectedExecutionException.class, () -> loop.execute(() -> {}));
      // The socket and the poller's own descriptors are gone.
      ProcessResources.assertNoFdsBeyond(fds);
    }

    @Test
    void whatTheSocketCannotTakeAtOnceGoesWhenItCan() throws Exception {
      try (Pair p = new Pair();
          SocketChannel peer = p.connectedPeer()) {
        // Far more than the two sockets' buffers hold while the peer does not read.
        byte[] data = new byte[32 << 20];
        for (int i = 0; i < data.length; i++) {
          data[i] = (byte) (i * 31 + (i >>> 11));
        }
        p.send(data);
        ByteBuffer in = ByteBuffer.allocate(data.length);
        while (in.hasRemaining()) {
          assertTrue(peer.read(in) > 0);
        }
        assertTrue(Arrays.equals(data, in.array()));
      }
    }

    @Test
    void thePeersCloseIsTheEndOfTheStream() throws Exception {
      try (Pair p = new Pair()) {
        try (SocketChannel peer = p.connectedPeer()) {
          peer.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        }
        assertEquals(3, p.ended.get(10, TimeUnit.SECONDS));
        assertFalse(p.socket.join().isOpen());
      }
    }

    @Test
    void aConnectNobodyAcceptsFails() throws Exception {
      int port;
      try (ServerSocketChannel gone = ServerSocketChannel.open()) {
        gone.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        port = ((InetSocketAddress) gone.getLocalAddress()).getPort();
      }
      try (Pair p = new Pair()) {
        p.connect("127.0.0.1", port);
        // Refused at once or through the connect's outcome, depending on the kernel's timing.
        var e = assertThrows(Exception.class, () -> p.connected.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, e.getCause(), e.toString());
      }
    }

    @Test
    void aHostThatDoesNotResolveFailsTheConnect() throws Exception {
      try (Pair p = new Pair()) {
        p.connect("no-such-host.invalid", p.port());
        var e = assertThrows(Exception.class, () -> p.connected.get(30, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, e.getCause(), e.toString());
      }
    }

    @Test
    void anIpv6LoopbackConnects() throws Exception {
      try (ServerSocketChannel server = ServerSocketChannel.open()) {
        try {
          byte[] loopback6 = new byte[16];
          loopback6[15] = 1; // ::1
          server.bind(new InetSocketAddress(InetAddress.getByAddress(loopback6), 0));
        } catch (IOException e) {
          org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback here: " + e);
        }
        try (Pair p = new Pair()) {
          p.connect("::1", ((InetSocketAddress) server.getLocalAddress()).getPort());
          try (SocketChannel peer = server.accept()) {
            p.connected.get(10, TimeUnit.SECONDS);
            assertTrue(peer.isConnected());
          }
        }
      }
    }
  }
}
