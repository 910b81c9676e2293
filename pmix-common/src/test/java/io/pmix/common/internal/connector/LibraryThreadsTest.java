package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link LibraryThreads} hands completions over: a future only a blocking call waits on is
 * completed by the progress thread itself, but never before an event handler delivered earlier
 * has returned; every other future completes on the callback thread; and a blocking call on the
 * library's own threads still fails fast.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LibraryThreadsTest {
  private static final Role ROLE = new Role("threads-test", "ThreadsTest");

  private final LibraryThreads threads = new LibraryThreads(ROLE);

  @AfterEach
  void stop() {
    var unused = threads.stop();
  }

  @Test
  void aBlockingCallReturnsOnlyAfterTheHandlersDeliveredBeforeItsReply() throws Exception {
    CountDownLatch handlerEntered = new CountDownLatch(1);
    CountDownLatch releaseHandler = new CountDownLatch(1);
    AtomicBoolean handlerDone = new AtomicBoolean();
    CompletableFuture<String> f = new CompletableFuture<>();
    AtomicReference<String> got = new AtomicReference<>();
    AtomicBoolean doneAtReturn = new AtomicBoolean();
    Thread caller =
        new Thread(
            () -> {
              got.set(ConnectorSession.await(f, ROLE, "test"));
              doneAtReturn.set(handlerDone.get());
            });
    caller.start();
    // The reply arrives while an event handler delivered before it is still running.
    threads.execute(
        () -> {
          threads.deliver(
              "handler",
              List.of(
                  () -> {
                    handlerEntered.countDown();
                    try {
                      releaseHandler.await();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                    handlerDone.set(true);
                  }));
          threads.complete(f, "reply");
        });
    assertTrue(handlerEntered.await(30, TimeUnit.SECONDS));
    caller.join(200);
    assertTrue(caller.isAlive(), "the blocking call returned while an earlier handler ran");
    releaseHandler.countDown();
    caller.join(TimeUnit.SECONDS.toMillis(30));
    assertFalse(caller.isAlive());
    assertEquals("reply", got.get());
    assertTrue(doneAtReturn.get(), "the earlier handler had not returned");
  }

  @Test
  void anIdleLibraryWakesABlockingCallFromTheProgressThread() throws Exception {
    // An initialized library: its callback thread has started (init's completion starts it).
    CountDownLatch started = new CountDownLatch(1);
    threads.execute(() -> threads.deliver("start", List.of(started::countDown)));
    assertTrue(started.await(30, TimeUnit.SECONDS));
    while (threads.bookkeeping().get("session.callbacksPending") != 0) {
      Thread.onSpinWait();
    }
    CompletableFuture<String> f = new CompletableFuture<>();
    CountDownLatch waiting = new CountDownLatch(1);
    AtomicReference<String> got = new AtomicReference<>();
    Thread caller =
        new Thread(
            () -> {
              waiting.countDown();
              got.set(ConnectorSession.await(f, ROLE, "test"));
            });
    caller.start();
    assertTrue(waiting.await(30, TimeUnit.SECONDS));
    // Wait until the caller is parked in await (its future then has the waiter as dependent).
    while (f.getNumberOfDependents() == 0 && caller.isAlive()) {
      Thread.onSpinWait();
    }
    AtomicBoolean doneOnProgressThread = new AtomicBoolean();
    CountDownLatch completed = new CountDownLatch(1);
    threads.execute(
        () -> {
          threads.complete(f, "reply");
          doneOnProgressThread.set(f.isDone());
          completed.countDown();
        });
    assertTrue(completed.await(30, TimeUnit.SECONDS));
    assertTrue(doneOnProgressThread.get(), "not completed by the progress thread itself");
    caller.join(TimeUnit.SECONDS.toMillis(30));
    assertEquals("reply", got.get());
  }

  @Test
  void aFutureNobodyBlocksOnCompletesOnTheCallbackThread() throws Exception {
    CompletableFuture<String> f = new CompletableFuture<>();
    AtomicReference<String> thread = new AtomicReference<>();
    CompletableFuture<Void> seen = f.thenAccept(v -> thread.set(Thread.currentThread().getName()));
    threads.execute(() -> threads.complete(f, "reply"));
    seen.get(30, TimeUnit.SECONDS);
    assertEquals(ROLE.callbackThread(), thread.get());
  }

  @Test
  void aBlockingCallOnTheCallbackThreadStillFailsFast() throws Exception {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    threads.execute(
        () ->
            threads.deliver(
                "handler",
                List.of(
                    () ->
                        thrown.complete(
                            assertThrows(
                                IllegalStateException.class,
                                () ->
                                    ConnectorSession.await(
                                        new CompletableFuture<>(), ROLE, "test"))))));
    assertTrue(thrown.get(30, TimeUnit.SECONDS) instanceof IllegalStateException);
  }

  @Test
  void noCallbackIsCountedPendingOnceStopped() throws Exception {
    CompletableFuture<String> f = new CompletableFuture<>();
    threads.execute(() -> threads.complete(f, "reply"));
    assertEquals("reply", f.get(30, TimeUnit.SECONDS));
    var unused = threads.stop();
    assertEquals(0L, threads.bookkeeping().get("session.callbacksPending"));
  }
}
