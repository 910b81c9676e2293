package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataRange;
import io.pmix.common.Info;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec 7.4.3: prte.pub.replace republishes over the caller's own user's publication only. */
class DataStoreReplaceTest extends StoreFixture {

  @Test
  void replaceTakesBackTheCallersOwnKey() {
    published(alice("jobA", 0), "svc", "v1");
    published(alice("jobA", 0), "svc", "v2", replace());
    assertEquals("v2", value(alice("jobB", 0), "svc"));
    assertEquals(1, store.itemCount());
  }

  @Test
  void ownIsTheSameUserNotTheSameProcess() {
    // A replacement server starting while its predecessor still runs, as the same user.
    published(alice("old", 0), "svc", "old");
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(alice("new", 0), "svc", "new"));
    published(alice("new", 0), "svc", "new", replace());
    assertEquals("new", value(alice("client", 0), "svc"));
  }

  @Test
  void onlyTheRepublishedKeysAreDropped() {
    assertEquals(
        Status.SUCCESS,
        store.publish(alice("jobA", 0), List.of(datum("a", "1"), datum("b", "2"))));
    published(alice("jobA", 1), "a", "new", replace());
    assertEquals("new", value(alice("jobB", 0), "a"));
    assertEquals("2", value(alice("jobB", 0), "b"));
    assertEquals(2, store.itemCount());
    assertTrue(store.holds(alice("jobA", 0).proc(), "b"));
  }

  @Test
  void replaceNeverTakesAnotherUsersKey() {
    published(alice("jobA", 0), "svc", "alice", readerUids(BOB));
    assertEquals(Status.ERR_DUPLICATE_KEY, publish(bob("jobB", 0), "svc", "bob", replace()));
    assertEquals("alice", value(bob("jobB", 0), "svc"));
  }

  @Test
  void aCollisionWithAnyForeignItemRefusesTheWholeReplace() {
    published(alice("jobA", 0), "a", "alice-a");
    published(bob("jobB", 0), "b", "bob-b", readerUids(ALICE));
    assertEquals(
        Status.ERR_DUPLICATE_KEY,
        store.publish(alice("jobC", 0), List.of(datum("a", "x"), datum("b", "y"), replace())));
    // Nothing changed: alice's own "a" was not dropped either.
    assertEquals("alice-a", value(alice("jobC", 0), "a"));
    assertEquals("bob-b", value(alice("jobC", 0), "b"));
  }

  @Test
  void replaceWithNothingToReplaceIsAPlainPublish() {
    published(alice("jobA", 0), "svc", "v", replace());
    assertEquals("v", value(alice("jobA", 1), "svc"));
  }

  @Test
  void replaceReachesOnlyTheSameSet() {
    published(alice("jobA", 0), "svc", "session");
    published(alice("jobA", 0), "svc", "ns", range(DataRange.NAMESPACE), replace());
    assertEquals(2, store.itemCount());
  }

  @Test
  void replaceGivenFalseIsNoReplace() {
    published(alice("jobA", 0), "svc", "v1");
    assertEquals(
        Status.ERR_DUPLICATE_KEY,
        publish(alice("jobA", 0), "svc", "v2", Info.of(DataStore.REPLACE_KEY, false)));
    // A flag given with no data (C's PMIX_INFO_LOAD with NULL) means true.
    published(alice("jobA", 0), "svc", "v3", Info.of(DataStore.REPLACE_KEY, Value.Undef.INSTANCE));
    assertEquals("v3", value(alice("jobA", 0), "svc"));
  }

  @Test
  void theDirectiveIsNotStoredAsData() {
    published(alice("jobA", 0), "svc", "v", replace());
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 0), DataStore.REPLACE_KEY));
  }

  @Test
  void replaceIsReportedAmongThePublishAttributes() {
    assertTrue(
        DataStore.publishAttributes().stream()
            .anyMatch(a -> DataStore.REPLACE_KEY.equals(a.name())));
    assertTrue(DataStore.publishAttributes().stream().anyMatch(a -> "pmix.persist".equals(a.name())));
    assertTrue(DataStore.lookupAttributes().stream().anyMatch(a -> "pmix.wait".equals(a.name())));
  }
}
