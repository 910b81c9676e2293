package io.pmix.server.internal.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server's own progress thread: tasks in the order handed in, timers (one-shot, periodic,
 * cancelled from another thread), descriptors' readiness told to their handlers, and a shutdown
 * that runs what was handed in, refuses the rest and leaves no descriptor open.
 */
@Timeout(60)
class ServerLoopTest {
  private ServerLoop loop;

  @BeforeAll
  static void nativeLibrary() {
    assertTrue(Epoll.available(), "libpmixjava with its Epoll functions must load here");
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (loop != null) {
      loop.shutdown();
      assertTrue(loop.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  private ServerLoop start() throws IOException {
    loop = new ServerLoop(r -> new Thread(r, "test-loop"));
    return loop;
  }

  @Test
  void tasksRunOnTheLoopInTheOrderHandedIn() throws Exception {
    ServerLoop l = start();
    List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Boolean> inLoop = new CompletableFuture<>();
    for (int i = 0; i < 5_000; i++) {
      int n = i;
      l.execute(() -> seen.add(n));
    }
    l.execute(() -> inLoop.complete(l.inLoop()));
    assertTrue(inLoop.get(10, TimeUnit.SECONDS));
    assertFalse(l.inLoop());
    assertEquals(5_000, seen.size());
    for (int i = 0; i < seen.size(); i++) {
      assertEquals(i, seen.get(i));
    }
  }

  @Test
  void timersRunInDeadlineOrderAndACancelledOneNever() throws Exception {
    ServerLoop l = start();
    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch done = new CountDownLatch(1);
    ScheduledFuture<?> cancelled = l.schedule(() -> seen.add("cancelled"), 50, TimeUnit.MILLISECONDS);
    var unused1 = l.schedule(() -> seen.add("later"), 100, TimeUnit.MILLISECONDS);
    var unused2 = l.schedule(() -> seen.add("sooner"), 20, TimeUnit.MILLISECONDS);
    var unused3 = l.schedule(done::countDown, 150, TimeUnit.MILLISECONDS);
    assertTrue(cancelled.cancel(false));
    assertTrue(done.await(10, TimeUnit.SECONDS));
    assertEquals(List.of("sooner", "later"), seen);
    assertEquals("value", l.schedule(() -> "value", 1, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS));
  }

  @Test
  void aPeriodicTimerRepeatsUntilCancelled() throws Exception {
    ServerLoop l = start();
    CountDownLatch three = new CountDownLatch(3);
    ScheduledFuture<?> t = l.scheduleAtFixedRate(three::countDown, 1, 5, TimeUnit.MILLISECONDS);
    assertTrue(three.await(10, TimeUnit.SECONDS));
    assertTrue(t.cancel(false));
    assertTrue(t.isCancelled());
    CountDownLatch again = new CountDownLatch(2);
    ScheduledFuture<?> d = l.scheduleWithFixedDelay(again::countDown, 1, 5, TimeUnit.MILLISECONDS);
    assertTrue(again.await(10, TimeUnit.SECONDS));
    assertTrue(d.cancel(false));
  }

  @Test
  void aListenerIsToldOfAConnectionAndAcceptsItWithBothAddresses() throws Exception {
    ServerLoop l = start();
    int[] port = new int[1];
    int lfd = l.submit(() -> Epoll.listen0(16, port)).get(10, TimeUnit.SECONDS);
    assertTrue(lfd >= 0, "listen0: " + lfd);
    CompletableFuture<int[]> accepted = new CompletableFuture<>();
    l.submit(
            () -> {
              l.register(
                  lfd,
                  Epoll.EPOLLIN,
                  events -> {
                    int[] out = new int[4];
                    int fd = Epoll.accept0(lfd, out);
                    if (fd >= 0) {
                      int unused = Epoll.close0(fd);
                      accepted.complete(out);
                    }
                  });
              return null;
            })
        .get(10, TimeUnit.SECONDS);
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port[0])) {
      int[] out = accepted.get(10, TimeUnit.SECONDS);
      assertEquals(0x7f000001, out[0]);
      assertEquals(s.getLocalPort(), out[1]);
      assertEquals(0x7f000001, out[2]);
      assertEquals(port[0], out[3]);
    } finally {
      l.submit(
              () -> {
                l.deregister(lfd);
                return Epoll.close0(lfd);
              })
          .get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void theShutdownRunsWhatWasHandedInRefusesTheRestAndClosesItsEpollAndEventfd() throws Exception {
    long before = openDescriptors();
    ServerLoop l = start();
    CountDownLatch blocker = new CountDownLatch(1);
    CountDownLatch ran = new CountDownLatch(1);
    CountDownLatch after = new CountDownLatch(1);
    l.execute(
        () -> {
          try {
            blocker.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    l.execute(ran::countDown);
    l.whenTerminated(after::countDown);
    l.shutdown();
    assertTrue(l.isShutdown());
    blocker.countDown();
    assertTrue(l.awaitTermination(10, TimeUnit.SECONDS));
    assertEquals(0, ran.getCount());
    assertTrue(after.await(10, TimeUnit.SECONDS));
    assertTrue(l.isTerminated());
    assertThrows(RejectedExecutionException.class, () -> l.execute(() -> {}));
    assertEquals(before, openDescriptors());
    loop = null;
  }

  /** The process's epoll and eventfd descriptors (what a loop opens). */
  private static long openDescriptors() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(
              fd -> {
                try {
                  String target = Files.readSymbolicLink(fd).toString();
                  return target.contains("[eventpoll]") || target.contains("[eventfd]");
                } catch (IOException e) {
                  return false; // the listing's own descriptor, closed by now
                }
              })
          .count();
    }
  }
}
