package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.dataserver.internal.Retention;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec 7.4.4: how long data lasts, driven by the server's lifecycle events. */
class DataStorePersistenceTest extends StoreFixture {
  private final Identity rank0 = alice("job", 0);
  private final Identity rank1 = alice("job", 1);

  private boolean held(Identity who, String key) {
    return store.holds(who.proc(), key);
  }

  @Test
  void theDefaultIsTheNamespace() {
    published(rank0, "svc", "v");
    store.procEnded(rank0.proc());
    store.appEnded("job", 0);
    assertTrue(held(rank0, "svc"), "an unmarked publish outlives its process and its app");
    store.namespaceEnded("other");
    assertTrue(held(rank0, "svc"));
    store.namespaceEnded("job");
    assertFalse(held(rank0, "svc"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("next", 0), "svc"));
    // A generation that does not overlap publishes into a store that no longer holds the name.
    published(alice("next", 0), "svc", "v2");
  }

  @Test
  void theNamespaceCodeOfNewerPmixIsUnderstoodAndInvalidMeansTheDefault() {
    published(rank0, "five", "v", persistCode(5));
    published(rank0, "invalid", "v", persistCode(255));
    store.appEnded("job", 0);
    assertTrue(held(rank0, "five"));
    assertTrue(held(rank0, "invalid"));
    store.namespaceEnded("job");
    assertEquals(0, store.itemCount());
    assertEquals(Status.ERR_BAD_PARAM, publish(rank0, "bad", "v", persistCode(9)));
  }

  @Test
  void procItemsGoWhenTheirPublisherEnds() {
    published(rank0, "p0", "v", persist(Retention.PROC));
    published(rank1, "p1", "v", persist(Retention.PROC));
    store.procEnded(rank0.proc());
    assertFalse(held(rank0, "p0"));
    assertTrue(held(rank1, "p1"));
    store.procEnded(Proc.of("elsewhere", 1));
    assertTrue(held(rank1, "p1"));
  }

  @Test
  void appIsTheApplicationNotTheJob() {
    // An MPMD job: ranks 0-1 run app 0, ranks 2-3 app 1, all in one namespace.
    Identity app1 = alice("job", 2).withAppNumber(1);
    published(rank0, "a0", "v", persist(Retention.APP));
    published(rank0, "p0", "v", persist(Retention.PROC));
    published(rank0, "n0", "v", persist(Retention.NSPACE));
    published(app1, "a1", "v", persist(Retention.APP));
    store.appEnded("job", 0);
    assertFalse(held(rank0, "a0"), "app 0's APP data goes with it");
    assertFalse(held(rank0, "p0"), "and so does its processes' PROC data");
    assertTrue(held(rank0, "n0"), "NSPACE data stays while the job runs on");
    assertTrue(held(app1, "a1"), "app 1 is still running");
    store.appEnded("otherjob", 1);
    assertTrue(held(app1, "a1"));
    store.namespaceEnded("job");
    assertEquals(0, store.itemCount());
  }

  @Test
  void appItemsOfAnUnknownApplicationLastUntilTheirNamespaceEnds() {
    Identity unknownApp = alice("job", 0).withAppNumber(Identity.UNKNOWN);
    published(unknownApp, "a", "v", persist(Retention.APP));
    store.appEnded("job", 0);
    assertTrue(held(unknownApp, "a"));
    store.namespaceEnded("job");
    assertFalse(held(unknownApp, "a"));
    assertThrows(IllegalArgumentException.class, () -> store.appEnded("job", Identity.UNKNOWN));
  }

  @Test
  void sessionItemsOutliveTheirJob() {
    Identity s3 = alice("job", 0).withSessionId(3);
    published(s3, "s", "v", persist(Retention.SESSION));
    published(s3, "n", "v");
    store.namespaceEnded("job");
    assertTrue(held(s3, "s"));
    assertFalse(held(s3, "n"));
    store.sessionEnded(4);
    assertTrue(held(s3, "s"));
    store.sessionEnded(3);
    assertFalse(held(s3, "s"));
  }

  @Test
  void theDefaultSessionEndsWithTheDvm() {
    published(rank0, "s", "v", persist(Retention.SESSION));
    published(rank0, "p", "v", persist(Retention.PROC));
    store.sessionEnded(Identity.UNKNOWN);
    assertEquals(0, store.itemCount());
  }

  @Test
  void noLifetimeEndsIndefOrFirstRead() {
    published(rank0, "i", "v", persist(Retention.INDEF));
    published(rank0, "f", "v", persist(Retention.FIRST_READ));
    store.procEnded(rank0.proc());
    store.appEnded("job", 0);
    store.namespaceEnded("job");
    store.sessionEnded(Identity.UNKNOWN);
    assertTrue(held(rank0, "i"));
    assertTrue(held(rank0, "f"));
    assertEquals(Status.SUCCESS, unpublish(alice("later", 0), List.of("i")));
    assertFalse(held(rank0, "i"));
  }

  @Test
  void firstReadGoesWithTheFirstLookupThatReturnsIt() {
    published(rank0, "f", "once", persist(Retention.FIRST_READ));
    // A lookup that is refused does not consume it.
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(bob("job2", 0), "f"));
    assertEquals("once", value(alice("job2", 0), "f"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("job2", 0), "f"));
    assertEquals(0, store.itemCount());
    assertEquals(0, store.bytesHeldBy(ALICE));
  }

  @Test
  void firstReadConsumesOnlyTheKeysReturned() {
    assertEquals(
        Status.SUCCESS,
        store.publish(
            rank0, List.of(datum("a", "1"), datum("b", "2"), persist(Retention.FIRST_READ))));
    long before = store.bytesHeldBy(ALICE);
    assertEquals("1", value(alice("job2", 0), "a"));
    assertTrue(store.bytesHeldBy(ALICE) < before, "the charge shrinks with the item");
    assertTrue(held(rank0, "b"));
    assertEquals("2", value(alice("job2", 0), "b"));
    assertEquals(0, store.itemCount());
  }

  @Test
  void lifetimesDoNotDependOnTheClock() {
    published(rank0, "n", "v");
    published(rank0, "s", "v", persist(Retention.SESSION));
    published(rank0, "p", "v", persist(Retention.PROC));
    published(rank0, "a", "v", persist(Retention.APP));
    clock.advance(Duration.ofDays(30));
    store.advance();
    assertEquals(4, store.itemCount());
  }
}
