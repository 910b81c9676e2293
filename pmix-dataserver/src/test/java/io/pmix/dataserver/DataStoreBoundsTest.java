package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Status;
import io.pmix.dataserver.internal.Access;
import io.pmix.dataserver.internal.Retention;
import io.pmix.dataserver.internal.Sizes;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Spec 7.4.5: the idle timeout and the per-uid cap, on an injected clock. */
class DataStoreBoundsTest extends StoreFixture {
  private static final Duration TIMEOUT = DataStoreOptions.DEFAULT_IDLE_TIMEOUT;
  private static final Duration NANO = Duration.ofNanos(1);
  private final Identity pub = alice("job", 0);
  private final Identity reader = alice("reader", 0);

  private boolean held(String key) {
    return store.holds(pub.proc(), key);
  }

  /** What an item of one string datum is charged. */
  private static long charge(String key, String value) {
    return Sizes.item(List.of(Info.of(key, value)), Access.OWNER_ONLY);
  }

  // ---- the idle timeout ----

  @Test
  void anIndefItemGoesAfterTheIdleTimeoutAndNotBefore() {
    published(pub, "i", "v", persist(Retention.INDEF));
    clock.advance(TIMEOUT.minus(NANO));
    store.advance();
    assertTrue(held("i"), "no earlier than its timeout");
    clock.advance(NANO);
    store.advance();
    assertFalse(held("i"));
    assertEquals(0, store.bytesHeldBy(ALICE));
  }

  @Test
  void anUnreadFirstReadItemGoesAfterTheIdleTimeout() {
    published(pub, "f", "v", persist(Retention.FIRST_READ));
    clock.advance(TIMEOUT);
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(reader, "f"));
  }

  @Test
  void anExpiredItemReadsAsNotFoundEvenBeforeAnySweep() {
    published(pub, "i", "v", persist(Retention.INDEF));
    clock.advance(TIMEOUT.plusSeconds(1));
    // No advance(): the lookup itself catches up on what is due.
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(reader, "i"));
  }

  @Test
  void everyLookupThatReturnsAKeyRestartsTheClock() {
    assertEquals(
        Status.SUCCESS,
        store.publish(pub, List.of(datum("a", "1"), datum("b", "2"), persist(Retention.INDEF))));
    clock.advance(Duration.ofSeconds(200));
    assertEquals("1", value(reader, "a"));
    clock.advance(Duration.ofSeconds(200));
    store.advance();
    // 400 s after the publish, 200 s after the last read of one of its keys: still there, both.
    assertTrue(held("a"));
    assertTrue(held("b"));
    assertEquals("2", value(reader, "b"));
    clock.advance(TIMEOUT);
    store.advance();
    assertFalse(held("a"));
  }

  @Test
  void aLookupThatReturnsNothingOfTheItemDoesNotRestartIt() {
    published(pub, "i", "v", persist(Retention.INDEF));
    clock.advance(Duration.ofSeconds(200));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(bob("b", 0), "i"));
    clock.advance(Duration.ofSeconds(100));
    store.advance();
    assertFalse(held("i"));
  }

  @Test
  void theTimeoutAppliesToNothingElse() {
    published(pub, "n", "v");
    published(pub, "p", "v", persist(Retention.PROC));
    published(pub, "a", "v", persist(Retention.APP));
    published(pub, "s", "v", persist(Retention.SESSION));
    clock.advance(TIMEOUT.multipliedBy(1000));
    store.advance();
    assertEquals(4, store.itemCount());
    assertEquals(Optional.empty(), store.untilNextDeadline());
  }

  @Test
  void zeroDisablesTheTimeout() {
    rebuild(options().idleTimeout(Duration.ZERO));
    published(pub, "i", "v", persist(Retention.INDEF));
    published(pub, "f", "v", persist(Retention.FIRST_READ));
    clock.advance(Duration.ofDays(365));
    store.advance();
    assertEquals(2, store.itemCount());
    assertEquals(Optional.empty(), store.untilNextDeadline());
  }

  @Test
  void theStoreSaysWhenTheNextItemFallsDue() {
    assertEquals(Optional.empty(), store.untilNextDeadline());
    published(pub, "i", "v", persist(Retention.INDEF));
    assertEquals(Optional.of(TIMEOUT), store.untilNextDeadline());
    clock.advance(Duration.ofSeconds(100));
    assertEquals(Optional.of(TIMEOUT.minusSeconds(100)), store.untilNextDeadline());
    clock.advance(Duration.ofSeconds(500));
    assertEquals(Optional.of(Duration.ZERO), store.untilNextDeadline());
  }

  // ---- the per-uid cap ----

  @Test
  void reachingTheCapEvictsThatUsersLeastRecentlyUsedItems() {
    long one = charge("k0", "x".repeat(100));
    rebuild(options().maxBytesPerUid(3 * one));
    for (int i = 0; i < 3; i++) {
      published(pub, "k" + i, "x".repeat(100));
      clock.advance(Duration.ofSeconds(1));
    }
    assertEquals(3 * one, store.bytesHeldBy(ALICE));
    // Reading k0 makes k1 the least recently used.
    assertEquals("x".repeat(100), value(reader, "k0"));
    published(pub, "k3", "x".repeat(100));
    assertFalse(held("k1"));
    assertTrue(held("k0"));
    assertTrue(held("k2"));
    assertTrue(held("k3"));
    assertEquals(3 * one, store.bytesHeldBy(ALICE));
    // What was evicted reads as not found.
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(reader, "k1"));
  }

  @Test
  void evictionNeverCrossesAUidBoundary() {
    long one = charge("a0", "x".repeat(100));
    rebuild(options().maxBytesPerUid(2 * one));
    Identity bobs = bob("bjob", 0);
    published(bobs, "b0", "x".repeat(100));
    for (int i = 0; i < 10; i++) {
      published(pub, "a" + i, "x".repeat(100));
    }
    assertTrue(store.holds(bobs.proc(), "b0"), "bob's data survives alice's flood");
    assertEquals(one, store.bytesHeldBy(BOB));
    assertEquals(2 * one, store.bytesHeldBy(ALICE));
  }

  @Test
  void aPublishLargerThanTheCapIsRefusedAndEvictsNothing() {
    rebuild(options().maxBytesPerUid(1000));
    published(pub, "small", "v");
    long before = store.bytesHeldBy(ALICE);
    assertEquals(Status.ERR_OUT_OF_RESOURCE, publish(pub, "big", "x".repeat(1000)));
    assertTrue(held("small"));
    assertFalse(held("big"));
    assertEquals(before, store.bytesHeldBy(ALICE));
    assertTrue(logger.at(Level.WARNING).isEmpty(), "nothing was evicted, so nothing is reported");
  }

  @Test
  void aPublishOfExactlyTheCapFitsByEvictingEverythingElse() {
    long cap = charge("big", "x".repeat(500));
    rebuild(options().maxBytesPerUid(cap));
    published(pub, "small", "v");
    published(pub, "big", "x".repeat(500));
    assertFalse(held("small"));
    assertEquals(cap, store.bytesHeldBy(ALICE));
  }

  @Test
  void theFirstEvictionForAUserWarnsOnceNamingTheLimitAndTheParameter() {
    long one = charge("k0", "v");
    rebuild(options().maxBytesPerUid(one));
    for (int i = 0; i < 5; i++) {
      published(pub, "k" + i, "v");
    }
    List<RecordingLogger.Entry> warnings = logger.at(Level.WARNING);
    assertEquals(1, warnings.size(), warnings.toString());
    String w = warnings.get(0).message();
    assertTrue(w.contains(Long.toString(one)), w);
    assertTrue(w.contains(DataStoreOptions.MAX_SIZE_PARAMETER), w);
    assertTrue(w.contains(Integer.toString(ALICE)), w);
    // Another user's first eviction is reported for that user.
    published(bob("b", 0), "b0", "v");
    published(bob("b", 0), "b1", "v");
    assertEquals(2, logger.at(Level.WARNING).size());
  }

  @Test
  void zeroDisablesTheCap() {
    rebuild(options().maxBytesPerUid(0));
    for (int i = 0; i < 100; i++) {
      published(pub, "k" + i, "x".repeat(10_000));
    }
    assertEquals(100, store.itemCount());
  }

  @Test
  void accessorIdsAreChargedToo() {
    published(pub, "plain", "v");
    long plain = store.bytesHeldBy(ALICE);
    published(pub, "listed", "v", readerUids(1, 2, 3));
    assertEquals(plain + charge("listed", "v") + 3 * Sizes.ID_BYTES, store.bytesHeldBy(ALICE));
  }

  @Test
  void everyRemovalPathReturnsItsBytes() {
    rebuild(options().maxBytesPerUid(1 << 20));
    published(pub, "unpub", "v");
    published(pub, "first", "v", persist(Retention.FIRST_READ));
    published(pub, "indef", "v", persist(Retention.INDEF));
    published(pub, "proc", "v", persist(Retention.PROC));
    published(pub, "nspace", "v");
    published(pub, "replaced", "v1");
    published(pub, "replaced", "v2", replace());
    assertEquals(Status.SUCCESS, unpublish(pub, List.of("unpub")));
    assertEquals("v", value(reader, "first"));
    store.procEnded(pub.proc());
    store.namespaceEnded("job");
    assertEquals(Status.SUCCESS, unpublish(pub, List.of("replaced")));
    clock.advance(TIMEOUT);
    store.advance();
    assertEquals(0, store.itemCount());
    assertEquals(0, store.bytesHeldBy(ALICE));
  }

  // ---- parameters ----

  @Test
  void parametersAreReadFromTheEnvironmentOnceAtStart() {
    Map<String, String> env = new HashMap<>();
    env.put("PMIX_MCA_prte_data_server_timeout", "10");
    env.put("PMIX_MCA_prte_data_server_max_size", "0");
    rebuild(options().environment(env));
    assertEquals(Duration.ofSeconds(10), store.options().idleTimeout());
    assertEquals(0, store.options().maxBytesPerUid());
    env.put("PMIX_MCA_prte_data_server_timeout", "1000");
    published(pub, "i", "v", persist(Retention.INDEF));
    clock.advance(Duration.ofSeconds(10));
    store.advance();
    assertFalse(held("i"), "the running store kept the value it started with");
  }
}
