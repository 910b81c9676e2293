package io.pmix.dataserver;

import static io.pmix.dataserver.Futures.eventually;
import static io.pmix.dataserver.Futures.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Retention;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The embedded store behind its own thread, or on an executor it borrows. */
class LocalDataServiceTest {
  private static final Identity ALICE = Identity.of(Proc.of("job", 0), 1000, 100);
  private static final Info WAIT = Info.of(Keys.WAIT, Value.of(0));
  private LocalDataService service =
      LocalDataService.create(DataStoreOptions.builder().idleTimeout(Duration.ofMillis(200)).build());

  @AfterEach
  void close() {
    service.close();
  }

  @Test
  void servesTheStore() {
    assertEquals(Status.SUCCESS, get(service.publish(ALICE, List.of(Info.of("k", "v")))));
    assertEquals("v", get(service.lookup(ALICE, List.of("k"), List.of())).data().get(0).value().asString());
    assertEquals(Status.SUCCESS, get(service.unpublish(ALICE, List.of("k"), List.of())));
    assertEquals(Status.ERR_NOT_FOUND, get(service.lookup(ALICE, List.of("k"), List.of())).status());
  }

  @Test
  void aWaitingLookupCompletesWhenTheDataArrives() {
    CompletableFuture<LookupResult> w =
        service.lookup(ALICE, List.of("k"), List.of(WAIT)).toCompletableFuture();
    assertEquals(1, get(service.inspect(DataStore::pendingLookupCount)));
    assertFalse(w.isDone());
    assertEquals(Status.SUCCESS, get(service.publish(ALICE.withProc(Proc.of("s", 0)), List.of(Info.of("k", "v")))));
    assertEquals(Status.SUCCESS, get(w).status());
  }

  @Test
  void cancellingTheStageCancelsTheLookup() {
    CompletableFuture<LookupResult> w =
        service.lookup(ALICE, List.of("k"), List.of(WAIT)).toCompletableFuture();
    assertEquals(1, get(service.inspect(DataStore::pendingLookupCount)));
    assertTrue(w.cancel(false));
    eventually("forgotten", () -> get(service.inspect(DataStore::pendingLookupCount)) == 0);
  }

  @Test
  void theStoresTimerRunsByItself() {
    Info indef = Info.of(Keys.PERSISTENCE, Value.unsigned(DataType.PERSIST, Retention.INDEF.code()));
    assertEquals(Status.SUCCESS, get(service.publish(ALICE, List.of(Info.of("k", "v"), indef))));
    eventually("expired", () -> get(service.inspect(DataStore::itemCount)) == 0);
  }

  @Test
  void lifetimesApply() {
    assertEquals(Status.SUCCESS, get(service.publish(ALICE, List.of(Info.of("k", "v")))));
    assertEquals(Status.SUCCESS, get(service.procEnded(ALICE.proc())));
    assertEquals(Status.SUCCESS, get(service.appEnded("job", 0)));
    assertEquals(1, get(service.inspect(DataStore::itemCount)));
    assertEquals(Status.SUCCESS, get(service.namespaceEnded("job")));
    assertEquals(0, get(service.inspect(DataStore::itemCount)));
    assertEquals(Status.SUCCESS, get(service.sessionEnded(3)));
  }

  @Test
  void closingFailsWhatWaitsAndWhatComesLater() {
    CompletableFuture<LookupResult> w =
        service.lookup(ALICE, List.of("k"), List.of(WAIT)).toCompletableFuture();
    assertEquals(1, get(service.inspect(DataStore::pendingLookupCount)));
    service.close();
    assertEquals(Status.ERR_NOT_AVAILABLE, get(w).status());
    assertEquals(Status.ERR_NOT_AVAILABLE, get(service.publish(ALICE, List.of(Info.of("k", "v")))));
    assertEquals(Status.ERR_NOT_AVAILABLE, get(service.lookup(ALICE, List.of("k"), List.of())).status());
    service.close(); // idempotent
  }

  // On an executor the service borrows (pmixrun lends it its server's progress thread).

  private static ScheduledExecutorService lender() {
    return Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, "lender");
          t.setDaemon(true);
          return t;
        });
  }

  @Test
  void onABorrowedExecutorTheStoreAndItsTimerRunThereAndTheExecutorOutlivesTheService()
      throws Exception {
    ScheduledExecutorService lender = lender();
    try {
      LocalDataService borrowed =
          LocalDataService.create(
              DataStoreOptions.builder().idleTimeout(Duration.ofMillis(200)).build(), lender);
      assertEquals("lender", get(borrowed.inspect(store -> Thread.currentThread().getName())));
      assertEquals(Status.SUCCESS, get(borrowed.publish(ALICE, List.of(Info.of("k", "v")))));
      assertEquals(
          "v", get(borrowed.lookup(ALICE, List.of("k"), List.of())).data().get(0).value().asString());
      assertEquals(Status.SUCCESS, get(borrowed.unpublish(ALICE, List.of("k"), List.of())));
      Info indef =
          Info.of(Keys.PERSISTENCE, Value.unsigned(DataType.PERSIST, Retention.INDEF.code()));
      assertEquals(Status.SUCCESS, get(borrowed.publish(ALICE, List.of(Info.of("k", "v"), indef))));
      eventually("expired", () -> get(borrowed.inspect(DataStore::itemCount)) == 0);
      CompletableFuture<LookupResult> w =
          borrowed.lookup(ALICE, List.of("w"), List.of(WAIT)).toCompletableFuture();
      assertEquals(1, get(borrowed.inspect(DataStore::pendingLookupCount)));
      borrowed.close();
      assertEquals(Status.ERR_NOT_AVAILABLE, get(w).status());
      assertEquals(
          Status.ERR_NOT_AVAILABLE, get(borrowed.publish(ALICE, List.of(Info.of("k", "v")))));
      assertEquals(
          Status.ERR_NOT_AVAILABLE, get(borrowed.lookup(ALICE, List.of("k"), List.of())).status());
      assertFalse(lender.isShutdown());
      assertEquals("still here", lender.submit(() -> "still here").get(5, TimeUnit.SECONDS));
      borrowed.close(); // idempotent
    } finally {
      lender.shutdownNow();
    }
  }

  @Test
  void closingOnTheBorrowedThreadClosesThere() throws Exception {
    ScheduledExecutorService lender = lender();
    try {
      LocalDataService borrowed = LocalDataService.create(DataStoreOptions.defaults(), lender);
      CompletableFuture<LookupResult> w =
          borrowed.lookup(ALICE, List.of("w"), List.of(WAIT)).toCompletableFuture();
      assertEquals(1, get(borrowed.inspect(DataStore::pendingLookupCount)));
      lender.submit(borrowed::close).get(5, TimeUnit.SECONDS); // would deadlock if it waited
      assertEquals(Status.ERR_NOT_AVAILABLE, get(w).status());
    } finally {
      lender.shutdownNow();
    }
  }

  @Test
  void closingAfterTheLenderStoppedStillFailsWhatWaits() throws Exception {
    ScheduledExecutorService lender = lender();
    LocalDataService borrowed = LocalDataService.create(DataStoreOptions.defaults(), lender);
    CompletableFuture<LookupResult> w =
        borrowed.lookup(ALICE, List.of("w"), List.of(WAIT)).toCompletableFuture();
    assertEquals(1, get(borrowed.inspect(DataStore::pendingLookupCount)));
    lender.shutdown(); // as a server's progress thread stops before its host closes the store
    assertTrue(lender.awaitTermination(5, TimeUnit.SECONDS));
    borrowed.close();
    assertEquals(Status.ERR_NOT_AVAILABLE, get(w).status());
    assertEquals(
        Status.ERR_NOT_AVAILABLE, get(borrowed.publish(ALICE, List.of(Info.of("k", "v")))));
  }
}
