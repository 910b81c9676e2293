package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The connector's progress thread: order, timers, sockets and its end. */
@Timeout(30)
class ProgressLoopTest {
  private final List<Thread> started = new CopyOnWriteArrayList<>();
  private final ProgressLoop loop =
      new ProgressLoop(
          r -> {
            Thread t = new Thread(r, "test-progress");
            t.setDaemon(true);
            started.add(t);
            return t;
          });

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
  void aSocketIsReadWhenReadyAndClosedAtShutdownWithItsRegistrantTold() throws Exception {
    try (ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      SocketChannel client = SocketChannel.open(server.getLocalAddress());
      client.configureBlocking(false);
      CompletableFuture<String> read = new CompletableFuture<>();
      CompletableFuture<Void> toldOfShutdown = new CompletableFuture<>();
      loop.execute(
          () -> {
            try {
              loop.register(
                  client,
                  SelectionKey.OP_READ,
                  new ProgressLoop.Registrant() {
                    @Override
                    public void ready(SelectionKey key) {
                      ByteBuffer b = ByteBuffer.allocate(16);
                      try {
                        int n = client.read(b);
                        read.complete(new String(b.array(), 0, Math.max(n, 0), "US-ASCII"));
                      } catch (IOException e) {
                        read.completeExceptionally(e);
                      }
                    }

                    @Override
                    public void shutdown() {
                      try {
                        client.close();
                      } catch (IOException e) {
                        toldOfShutdown.completeExceptionally(e);
                      }
                      toldOfShutdown.complete(null);
                    }
                  });
            } catch (IOException e) {
              read.completeExceptionally(e);
            }
          });
      try (SocketChannel peer = server.accept()) {
        peer.write(ByteBuffer.wrap("ping".getBytes("US-ASCII")));
        assertEquals("ping", read.get(10, TimeUnit.SECONDS));
        loop.shutdown();
        toldOfShutdown.get(10, TimeUnit.SECONDS);
        assertTrue(loop.awaitTermination(10_000));
        assertFalse(client.isOpen());
        // The peer sees the close.
        assertEquals(-1, peer.read(ByteBuffer.allocate(4)));
      }
    }
    assertTrue(loop.isTerminated());
    assertThrows(RejectedExecutionException.class, () -> loop.execute(() -> {}));
  }

  @Test
  void aLoopShutDownBeforeItRanStartsNoThread() throws Exception {
    loop.shutdown();
    assertTrue(loop.awaitTermination(1_000));
    assertTrue(started.isEmpty());
    assertThrows(RejectedExecutionException.class, () -> loop.execute(() -> {}));
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
}
