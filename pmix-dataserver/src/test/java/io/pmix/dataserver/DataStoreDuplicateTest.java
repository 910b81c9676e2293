package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pmix.common.DataRange;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec 7.4.2: a key published again on the same set of processes is a duplicate. */
class DataStoreDuplicateTest extends StoreFixture {

  @Test
  void twoProcessesPublishingOneKeyOnTheSessionCollide() {
    published(alice("jobA", 0), "svc", "first");
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(alice("jobA", 1), "svc", "second"));
    // Nothing stored, and the publication that was there is untouched.
    assertEquals(1, store.itemCount());
    assertFalse(store.holds(Proc.of("jobA", 1), "svc"));
    assertEquals("first", value(alice("jobB", 0), "svc"));
  }

  @Test
  void aLaterJobOfTheSameUserCollidesToo() {
    published(alice("jobA", 0), "svc", "first");
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(alice("jobB", 0), "svc", "second"));
  }

  @Test
  void theSameProcessPublishingTwiceCollides() {
    published(alice("jobA", 0), "svc", "first", range(DataRange.PROC_LOCAL));
    assertEquals(
        Status.ERR_DUPLICATE_KEY,
        publish(alice("jobA", 0), "svc", "again", range(DataRange.PROC_LOCAL)));
  }

  @Test
  void usersWhoCanReadEachOthersDataCollide() {
    published(alice("jobA", 0), "svc", "alice", readerUids(BOB, ALICE));
    assertEquals(
        Status.ERR_DUPLICATE_KEY, publish(bob("jobB", 0), "svc", "bob", readerUids(ALICE, BOB)));
  }

  @Test
  void oneWayVisibilityIsEnoughToCollide() {
    // bob may read alice's item: his publication would shadow it for him.
    published(alice("jobA", 0), "k1", "alice", readerUids(BOB));
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(bob("jobB", 0), "k1", "bob"));
    // alice may read bob's new item: it would shadow hers for her.
    published(alice("jobA", 0), "k2", "alice");
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(bob("jobB", 0), "k2", "bob", readerUids(ALICE)));
  }

  @Test
  void mutuallyInvisiblePublicationsDoNotCollide() {
    published(alice("jobA", 0), "svc", "alice");
    published(bob("jobB", 0), "svc", "bob");
    assertEquals(2, store.itemCount());
    assertEquals("alice", value(alice("jobC", 0), "svc"));
    assertEquals("bob", value(bob("jobC", 0), "svc"));
  }

  @Test
  void namespaceRangesOfTwoJobsAreDisjointSets() {
    published(alice("jobA", 0), "svc", "a", range(DataRange.NAMESPACE));
    published(alice("jobB", 0), "svc", "b", range(DataRange.NAMESPACE));
    assertEquals("a", value(alice("jobA", 1), "svc"));
    assertEquals("b", value(alice("jobB", 1), "svc"));
    assertEquals(
        Status.ERR_DUPLICATE_KEY,
        publish(alice("jobA", 2), "svc", "a2", range(DataRange.NAMESPACE)));
  }

  @Test
  void sessionsAndServersAreDisjointSetsToo() {
    published(alice("jobA", 0), "s", "1");
    published(alice("jobB", 0).withSessionId(5), "s", "2");
    published(alice("jobA", 0), "l", "1", range(DataRange.LOCAL));
    published(alice("jobA", 1).withNode("n1"), "l", "2", range(DataRange.LOCAL));
    assertEquals(
        Status.ERR_DUPLICATE_KEY,
        publish(alice("jobC", 0).withNode("n1"), "l", "3", range(DataRange.LOCAL)));
  }

  @Test
  void differentRangesMayHoldTheSameKey() {
    published(alice("jobB", 0), "svc", "session");
    published(alice("jobA", 1), "svc", "namespace", range(DataRange.NAMESPACE));
    published(alice("jobC", 2), "svc", "global", range(DataRange.GLOBAL));
    assertEquals(3, store.itemCount());
    // The requester's range (whose data it searches) keeps them apart.
    assertEquals("namespace", value(alice("jobA", 9), "svc", range(DataRange.NAMESPACE)));
    assertEquals("global", value(alice("jobQ", 0).withSessionId(3), "svc", range(DataRange.GLOBAL)));
    // Where several are visible, the earliest publication answers.
    assertEquals("session", value(alice("jobA", 9), "svc"));
  }

  @Test
  void aDuplicateAmongSeveralKeysStoresNoneOfThem() {
    published(alice("jobA", 0), "b", "old");
    assertEquals(
        Status.ERR_DUPLICATE_KEY,
        store.publish(alice("jobA", 1), List.of(datum("a", "1"), datum("b", "2"), datum("c", "3"))));
    assertEquals(1, store.itemCount());
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 0), "a"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 0), "c"));
  }

  @Test
  void aDuplicateEvictsNothing() {
    rebuild(options().maxBytesPerUid(400));
    published(alice("jobA", 0), "a", "1");
    published(alice("jobA", 0), "b", "2");
    long before = store.bytesHeldBy(ALICE);
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(alice("jobA", 0), "a", "x".repeat(250)));
    assertEquals(before, store.bytesHeldBy(ALICE));
    assertEquals(2, store.itemCount());
  }
}
