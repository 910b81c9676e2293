package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataRange;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Retention;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec 7.4.2 (ownership) and 7.4.4 (unpublish with no keys). */
class DataStoreOwnershipTest extends StoreFixture {

  @Test
  void anotherUsersUnpublishSucceedsAndRemovesNothing() {
    published(alice("jobA", 0), "svc", "alice", readerUids(BOB, ALICE));
    assertEquals(Status.SUCCESS, unpublish(bob("jobB", 0), List.of("svc")));
    assertEquals("alice", value(alice("jobA", 1), "svc"));
    // bob's unpublish-everything does not reach it either.
    assertEquals(Status.SUCCESS, unpublish(bob("jobA", 0), List.of()));
    assertEquals(1, store.itemCount());
  }

  @Test
  void theOwnerIsTheUserNotTheProcess() {
    published(alice("jobA", 0), "svc", "old");
    // A later job of the same user, in a namespace of its own, takes the name back.
    assertEquals(Status.SUCCESS, unpublish(alice("jobB", 0), List.of("svc")));
    assertEquals(0, store.itemCount());
    published(alice("jobB", 0), "svc", "new");
  }

  @Test
  void ownershipNeedsTheGidWhereBothAreKnown() {
    published(alice("jobA", 0), "svc", "v");
    assertEquals(Status.SUCCESS, unpublish(proc("jobB", 0, ALICE, 999), List.of("svc")));
    assertEquals(1, store.itemCount());
    assertEquals(Status.SUCCESS, unpublish(proc("jobB", 0, ALICE, Identity.UNKNOWN), List.of("svc")));
    assertEquals(0, store.itemCount());
  }

  @Test
  void readingRightsConferNoRemoval() {
    published(alice("jobA", 0), "svc", "shared", readerUids(BOB));
    assertEquals("shared", value(bob("jobB", 0), "svc"));
    assertEquals(Status.SUCCESS, unpublish(bob("jobB", 0), List.of("svc")));
    assertEquals("shared", value(bob("jobB", 0), "svc"));
  }

  @Test
  void anOwnerMayRemoveWhatItCannotRead() {
    published(alice("jobA", 0), "svc", "for bob", readerUids(BOB));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(alice("jobA", 0), "svc"));
    assertEquals(Status.SUCCESS, unpublish(alice("jobA", 0), List.of("svc")));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(bob("jobB", 0), "svc"));
  }

  @Test
  void theOwnerIsTheAuthenticatedUidNotTheOneTheClientClaims() {
    // The client claims bob's uid in the info (as PMIx's pmix.euid would carry it); the store
    // goes by the identity the server authenticated.
    assertEquals(
        Status.SUCCESS,
        store.publish(
            alice("jobA", 0),
            List.of(datum("svc", "v"), Info.of(Keys.USERID, Value.uint32(BOB)))));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(bob("jobB", 0), "svc"));
    assertEquals(Status.SUCCESS, unpublish(bob("jobB", 0), List.of("svc")));
    assertEquals("v", value(alice("jobB", 0), "svc"));
  }

  @Test
  void unpublishingWhatIsNotThereSucceeds() {
    assertEquals(Status.SUCCESS, unpublish(alice("jobA", 0), List.of("nothing")));
  }

  @Test
  void unpublishTakesOnlyTheNamedKeys() {
    assertEquals(
        Status.SUCCESS, store.publish(alice("jobA", 0), List.of(datum("a", "1"), datum("b", "2"))));
    assertEquals(Status.SUCCESS, unpublish(alice("jobA", 0), List.of("a")));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 0), "a"));
    assertEquals("2", value(alice("jobA", 0), "b"));
  }

  @Test
  void unpublishWithARangeTakesOnlyThatRangesItems() {
    published(alice("jobA", 0), "svc", "session");
    published(alice("jobA", 0), "svc", "ns", range(DataRange.NAMESPACE));
    published(alice("jobB", 0), "svc", "nsB", range(DataRange.NAMESPACE));
    assertEquals(Status.SUCCESS, unpublish(alice("jobA", 1), List.of("svc"), range(DataRange.NAMESPACE)));
    assertEquals(2, store.itemCount());
    assertEquals("session", value(alice("jobA", 1), "svc"));
    assertEquals("nsB", value(alice("jobB", 1), "svc", range(DataRange.NAMESPACE)));
    // With no range, every one of the user's items holding the key goes.
    assertEquals(Status.SUCCESS, unpublish(alice("jobC", 0), List.of("svc")));
    assertEquals(0, store.itemCount());
  }

  @Test
  void unpublishWithNoKeysRemovesEverythingTheCallingProcessPublished() {
    Identity me = alice("jobA", 0);
    published(me, "indef", "1", persist(Retention.INDEF));
    published(me, "first", "2", persist(Retention.FIRST_READ));
    published(me, "session", "3", persist(Retention.SESSION));
    published(me, "proc", "4", persist(Retention.PROC), range(DataRange.PROC_LOCAL));
    published(alice("jobA", 1), "sibling", "5");
    published(alice("jobB", 0), "otherjob", "6");
    assertEquals(Status.SUCCESS, unpublish(me, List.of()));
    for (String k : List.of("indef", "first", "session", "proc")) {
      assertFalse(store.holds(Proc.of("jobA", 0), k), k);
    }
    // The sweep is scoped to the process: its job's other processes and its user's other jobs
    // keep their data.
    assertTrue(store.holds(Proc.of("jobA", 1), "sibling"));
    assertTrue(store.holds(Proc.of("jobB", 0), "otherjob"));
  }

  @Test
  void unpublishWithNoKeysAndARangeTakesOnlyThatRange() {
    Identity me = alice("jobA", 0);
    published(me, "a", "1");
    published(me, "b", "2", range(DataRange.NAMESPACE));
    assertEquals(Status.SUCCESS, unpublish(me, List.of(), range(DataRange.NAMESPACE)));
    assertTrue(store.holds(me.proc(), "a"));
    assertFalse(store.holds(me.proc(), "b"));
  }

  @Test
  void unpublishingEverythingSparesAnotherUsersProcessOfTheSameName() {
    // A namespace name reused by another user's job: the sweep still takes only what is owned.
    published(alice("jobA", 0), "a", "1");
    assertEquals(Status.SUCCESS, unpublish(bob("jobA", 0), List.of()));
    assertTrue(store.holds(Proc.of("jobA", 0), "a"));
  }

  @Test
  void unpublishAccountsForTheBytesItFrees() {
    published(alice("jobA", 0), "a", "1");
    assertTrue(store.bytesHeldBy(ALICE) > 0);
    assertEquals(Status.SUCCESS, unpublish(alice("jobA", 0), List.of("a")));
    assertEquals(0, store.bytesHeldBy(ALICE));
  }
}
