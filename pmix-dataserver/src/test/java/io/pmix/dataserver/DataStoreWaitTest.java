package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Retention;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Waiting lookups (PMIX_WAIT, PMIX_TIMEOUT): answered by a publish, timed out, cancelled. */
class DataStoreWaitTest extends StoreFixture {
  private final Identity waiter = alice("client", 0);
  private final Identity pub = alice("server", 0);

  /** A lookup's results, in order; a lookup completes exactly once, so at most one. */
  private final class Results {
    final List<LookupResult> got = new ArrayList<>();
    DataStore.PendingLookup handle;

    Results(Identity who, List<String> keys, Info... directives) {
      handle = store.lookup(who, keys, Arrays.asList(directives), got::add);
    }

    LookupResult only() {
      assertEquals(1, got.size(), "completed exactly once: " + got);
      return got.get(0);
    }
  }

  @Test
  void aWaitingLookupIsAnsweredByTheMatchingPublish() {
    Results r = new Results(waiter, List.of("svc"), waitAll());
    assertTrue(r.got.isEmpty());
    assertFalse(r.handle.isDone());
    assertEquals(1, store.pendingLookupCount());
    published(pub, "other", "x");
    assertTrue(r.got.isEmpty());
    published(pub, "svc", "port");
    assertEquals(Status.SUCCESS, r.only().status());
    assertEquals("port", r.only().data().get(0).value().asString());
    assertEquals(pub.proc(), r.only().data().get(0).proc());
    assertTrue(r.handle.isDone());
    assertEquals(0, store.pendingLookupCount());
  }

  @Test
  void whatIsAlreadyThereAnswersAtOnce() {
    published(pub, "svc", "port");
    Results r = new Results(waiter, List.of("svc"), waitAll());
    assertEquals(Status.SUCCESS, r.only().status());
    assertEquals(0, store.pendingLookupCount());
  }

  @Test
  void byDefaultItWaitsForEveryKey() {
    Results r = new Results(waiter, List.of("a", "b"), waitAll());
    published(pub, "a", "1");
    assertTrue(r.got.isEmpty());
    published(pub, "b", "2");
    assertEquals(Status.SUCCESS, r.only().status());
    assertEquals(2, r.only().data().size());
  }

  @Test
  void aCountWaitsForThatManyKeys() {
    Results r = new Results(waiter, List.of("a", "b", "c"), waitFor(2));
    published(pub, "b", "2");
    assertTrue(r.got.isEmpty());
    published(pub, "c", "3");
    assertEquals(Status.ERR_PARTIAL_SUCCESS, r.only().status());
    assertEquals(2, r.only().data().size());
  }

  @Test
  void aBooleanWaitWaitsForAllAndFalseDoesNotWait() {
    Results r = new Results(waiter, List.of("a"), Info.of(Keys.WAIT, Value.of(true)));
    assertTrue(r.got.isEmpty());
    Results now = new Results(waiter, List.of("a"), Info.of(Keys.WAIT, Value.of(false)));
    assertEquals(Status.ERR_NOT_FOUND, now.only().status());
    published(pub, "a", "1");
    assertEquals(Status.SUCCESS, r.only().status());
  }

  @Test
  void aWaitingLookupTimesOut() {
    Results r = new Results(waiter, List.of("svc"), waitAll(), timeout(5));
    assertEquals(Optional.of(Duration.ofSeconds(5)), store.untilNextDeadline());
    clock.advance(Duration.ofSeconds(4));
    store.advance();
    assertTrue(r.got.isEmpty());
    clock.advance(Duration.ofSeconds(1));
    store.advance();
    assertEquals(Status.ERR_TIMEOUT, r.only().status());
    assertEquals(0, store.pendingLookupCount());
    // A publish after the timeout answers nobody a second time.
    published(pub, "svc", "late");
    assertEquals(1, r.got.size());
  }

  @Test
  void aZeroTimeoutWaitsForEver() {
    Results r = new Results(waiter, List.of("svc"), waitAll(), timeout(0));
    assertEquals(Optional.empty(), store.untilNextDeadline());
    clock.advance(Duration.ofDays(10));
    store.advance();
    assertTrue(r.got.isEmpty());
  }

  @Test
  void theRequesterLeavingCancelsItsWaitingLookupsCleanly() {
    Results r = new Results(waiter, List.of("svc"), waitAll(), timeout(60));
    Results other = new Results(alice("client", 1), List.of("svc"), waitAll());
    store.procEnded(waiter.proc());
    assertEquals(Status.ERR_LOST_CONNECTION, r.only().status());
    assertEquals(1, store.pendingLookupCount());
    assertEquals(Optional.empty(), store.untilNextDeadline(), "its deadline went with it");
    published(pub, "svc", "v");
    assertEquals(1, r.got.size());
    assertEquals(Status.SUCCESS, other.only().status());
  }

  @Test
  void theRequestersJobOrSessionEndingCancelsToo() {
    Results inJob = new Results(alice("client", 3), List.of("x"), waitAll());
    Results inSession = new Results(alice("job2", 0).withSessionId(4), List.of("x"), waitAll());
    store.namespaceEnded("client");
    assertEquals(Status.ERR_LOST_CONNECTION, inJob.only().status());
    assertTrue(inSession.got.isEmpty());
    store.sessionEnded(4);
    assertEquals(Status.ERR_LOST_CONNECTION, inSession.only().status());
  }

  @Test
  void aCancelCompletesTheLookupOnce() {
    Results r = new Results(waiter, List.of("svc"), waitAll());
    assertTrue(r.handle.cancel(Status.ERR_LOST_CONNECTION));
    assertFalse(r.handle.cancel(Status.ERR_TIMEOUT));
    assertEquals(Status.ERR_LOST_CONNECTION, r.only().status());
    assertEquals(0, store.pendingLookupCount());
  }

  @Test
  void aPublishTheRequesterMayNotReadDoesNotAnswerIt() {
    Results r = new Results(waiter, List.of("svc"), waitAll());
    published(bob("bjob", 0), "svc", "bobs");
    assertTrue(r.got.isEmpty());
    published(pub, "svc", "alices");
    assertEquals("alices", r.only().data().get(0).value().asString());
  }

  @Test
  void aFirstReadValueGoesToOneWaiterOnly() {
    Results first = new Results(waiter, List.of("f"), waitAll());
    Results second = new Results(alice("client", 1), List.of("f"), waitAll());
    published(pub, "f", "once", persist(Retention.FIRST_READ));
    assertEquals(Status.SUCCESS, first.only().status());
    assertTrue(second.got.isEmpty(), "the value was consumed by the first waiter");
    assertEquals(0, store.itemCount());
  }

  @Test
  void tooManyWaitingLookupsAreRefused() {
    rebuild(options().maxPendingLookups(2));
    Results a = new Results(waiter, List.of("a"), waitAll());
    Results b = new Results(waiter, List.of("b"), waitAll());
    Results c = new Results(waiter, List.of("c"), waitAll());
    assertEquals(Status.ERR_OUT_OF_RESOURCE, c.only().status());
    assertTrue(a.got.isEmpty());
    assertTrue(b.got.isEmpty());
  }

  @Test
  void aCompletionMayCallBackIntoTheStore() {
    List<LookupResult> chained = new ArrayList<>();
    DataStore.PendingLookup unused =
        store.lookup(
            waiter,
            List.of("a"),
            List.of(waitAll()),
            r -> {
              assertEquals(Status.SUCCESS, r.status());
              assertEquals(Status.SUCCESS, store.publish(waiter, List.of(datum("b", "chained"))));
            });
    DataStore.PendingLookup unused2 =
        store.lookup(alice("client", 2), List.of("b"), List.of(waitAll()), chained::add);
    published(pub, "a", "1");
    assertEquals(1, chained.size());
    assertEquals("chained", chained.get(0).data().get(0).value().asString());
  }

  @Test
  void aFailingCompletionDoesNotStopTheOthers() {
    DataStore.PendingLookup unused =
        store.lookup(
            waiter,
            List.of("a"),
            List.of(waitAll()),
            r -> {
              throw new IllegalStateException("broken callback");
            });
    Results ok = new Results(alice("client", 1), List.of("a"), waitAll());
    published(pub, "a", "1");
    assertEquals(Status.SUCCESS, ok.only().status());
    assertEquals(0, store.pendingLookupCount());
  }

  @Test
  void badWaitDirectivesAreRefused() {
    Results neg = new Results(waiter, List.of("a"), Info.of(Keys.WAIT, Value.of(-1)));
    assertEquals(Status.ERR_BAD_PARAM, neg.only().status());
    Results negTimeout = new Results(waiter, List.of("a"), waitAll(), timeout(-3));
    assertEquals(Status.ERR_BAD_PARAM, negTimeout.only().status());
    assertEquals(0, store.pendingLookupCount());
  }
}
