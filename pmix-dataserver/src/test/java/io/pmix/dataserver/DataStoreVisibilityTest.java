package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec 7.4.1: who can see what. Both ranges must pass, then the access permissions. */
class DataStoreVisibilityTest extends StoreFixture {

  @Test
  void defaultRangeIsSessionOnBothSides() {
    Identity pub = alice("jobA", 0);
    published(pub, "svc", "port1");
    // Same user, another job of the same session: found with no range given.
    assertEquals("port1", value(alice("jobB", 3), "svc"));
    // Same user in another session: the default (session) publication does not reach it ...
    Identity elsewhere = alice("jobC", 0).withSessionId(7);
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(elsewhere, "svc"));
    // ... not even when it searches globally, since the publisher's range must pass too.
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(elsewhere, "svc", range(DataRange.GLOBAL)));
  }

  @Test
  void undefRangeMeansSession() {
    published(alice("jobA", 0), "svc", "x", range(DataRange.UNDEF));
    assertEquals("x", value(alice("jobB", 0), "svc", range(DataRange.UNDEF)));
    assertEquals(
        Status.ERR_NOT_FOUND,
        lookupStatus(alice("jobB", 0).withSessionId(2), "svc", range(DataRange.GLOBAL)));
  }

  @Test
  void globalRangeReachesOtherSessionsThatSearchGlobally() {
    published(alice("jobA", 0), "svc", "g", range(DataRange.GLOBAL));
    Identity other = alice("jobZ", 0).withSessionId(9);
    assertEquals("g", value(other, "svc", range(DataRange.GLOBAL)));
    // The requester's default search range is its own session, which excludes the publisher.
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(other, "svc"));
  }

  @Test
  void namespaceRangeIsThePublishersJobOnly() {
    published(alice("jobA", 0), "svc", "ns", range(DataRange.NAMESPACE));
    assertEquals("ns", value(alice("jobA", 5), "svc"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobB", 0), "svc"));
  }

  @Test
  void localRangeIsTheProcessesBehindTheSameServer() {
    published(alice("jobA", 0), "svc", "loc", range(DataRange.LOCAL));
    assertEquals("loc", value(alice("jobB", 1), "svc"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 1).withNode("n1"), "svc"));
  }

  @Test
  void procLocalRangeIsThePublisherAlone() {
    published(alice("jobA", 0), "svc", "me", range(DataRange.PROC_LOCAL));
    assertEquals("me", value(alice("jobA", 0), "svc"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 1), "svc"));
  }

  @Test
  void requesterRangeSaysWhoseDataItSearches() {
    published(alice("jobA", 0), "svc", "a", range(DataRange.SESSION));
    Identity reader = alice("jobB", 0);
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(reader, "svc", range(DataRange.NAMESPACE)));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(reader, "svc", range(DataRange.PROC_LOCAL)));
    assertEquals(
        Status.ERR_NOT_FOUND, lookupStatus(reader.withNode("n9"), "svc", range(DataRange.LOCAL)));
    assertEquals("a", value(reader, "svc", range(DataRange.LOCAL)));
    assertEquals("a", value(reader, "svc", range(DataRange.SESSION)));
    assertEquals("a", value(alice("jobA", 4), "svc", range(DataRange.NAMESPACE)));
    assertEquals("a", value(alice("jobA", 0), "svc", range(DataRange.PROC_LOCAL)));
  }

  @Test
  void aPublisherNamingNoAccessorsKeepsItsDataToItsOwnUser() {
    published(alice("jobA", 0), "svc", "mine");
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(bob("jobB", 0), "svc"));
    // Same uid, different gid: the requester must present the publisher's uid and gid.
    assertEquals(
        Status.ERR_NO_PERMISSIONS, lookupStatus(proc("jobB", 0, ALICE, 999), "svc"));
    assertEquals("mine", value(proc("jobB", 0, ALICE, STAFF), "svc"));
  }

  @Test
  void anUnknownGidFallsBackToTheUid() {
    published(proc("jobA", 0, ALICE, Identity.UNKNOWN), "svc", "v");
    assertEquals("v", value(proc("jobB", 0, ALICE, 555), "svc"));
    published(proc("jobA", 1, BOB, BOBS), "other", "w");
    assertEquals("w", value(proc("jobB", 0, BOB, Identity.UNKNOWN), "other"));
  }

  @Test
  void accessUserIdsAdmitTheListedUsersOnly() {
    published(alice("jobA", 0), "svc", "shared", readerUids(BOB));
    assertEquals("shared", value(bob("jobB", 0), "svc"));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(carol("jobC", 0), "svc"));
    // Naming accessors replaces the owner-only rule: alice left herself off.
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(alice("jobA", 1), "svc"));
  }

  @Test
  void accessGroupIdsAdmitMembersOfTheListedGroups() {
    published(alice("jobA", 0), "svc", "grp", readerGids(CAROLS));
    assertEquals("grp", value(carol("jobC", 0), "svc"));
    assertEquals("grp", value(proc("jobD", 0, 4242, CAROLS), "svc"));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(bob("jobB", 0), "svc"));
  }

  @Test
  void eitherListAdmits() {
    published(alice("jobA", 0), "svc", "both", readers(new int[] {BOB}, new int[] {CAROLS}));
    assertEquals("both", value(bob("jobB", 0), "svc"));
    assertEquals("both", value(carol("jobC", 0), "svc"));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(proc("jobD", 0, 77, 77), "svc"));
  }

  @Test
  void accessListsAreHonouredAtTheTopLevelAndAsASingleId() {
    published(
        alice("jobA", 0),
        "svc",
        "top",
        Info.of(Keys.ACCESS_USERIDS, Value.uint32(BOB)),
        Info.of(Keys.ACCESS_GRPIDS, ids(CAROLS)));
    assertEquals("top", value(bob("jobB", 0), "svc"));
    assertEquals("top", value(carol("jobC", 0), "svc"));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(alice("jobA", 0), "svc"));
  }

  @Test
  void customRangeIsTheAccessorList() {
    published(alice("jobA", 0), "svc", "custom", range(DataRange.CUSTOM), readerUids(BOB));
    // Any process of a listed user, in any session, when it searches that far.
    Identity farBob = bob("jobZ", 0).withSessionId(12).withNode("n7");
    assertEquals("custom", value(farBob, "svc", range(DataRange.GLOBAL)));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(carol("jobC", 0), "svc"));
  }

  @Test
  void customRangeNamingNobodyIsRefusedAndStoresNothing() {
    assertEquals(
        Status.ERR_BAD_PARAM, publish(alice("jobA", 0), "svc", "x", range(DataRange.CUSTOM)));
    assertEquals(0, store.itemCount());
  }

  @Test
  void noPermissionsOnlyForDataTheRangesWouldHaveReturned() {
    published(alice("jobA", 0), "svc", "ns", range(DataRange.NAMESPACE));
    // bob is outside alice's namespace: the range fails first, so it is simply not found.
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(bob("jobB", 0), "svc"));
    // bob inside the namespace would have found it: refused.
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(bob("jobA", 3), "svc"));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(bob("jobA", 3), "nothing"));
  }

  @Test
  void aPermittedItemAnswersEvenIfAnotherIsRefused() {
    published(alice("jobA", 0), "svc", "alices");
    published(bob("jobB", 0), "svc", "bobs");
    assertEquals("bobs", value(bob("jobC", 0), "svc"));
    assertEquals("alices", value(alice("jobC", 0), "svc"));
    assertEquals(Status.ERR_NO_PERMISSIONS, lookupStatus(carol("jobC", 0), "svc"));
  }

  @Test
  void someKeysFoundIsPartialSuccessWithTheirData() {
    published(alice("jobA", 0), "a", "1");
    published(bob("jobB", 0), "b", "2");
    LookupResult r = lookup(alice("jobC", 0), List.of("a", "b", "c"));
    assertEquals(Status.ERR_PARTIAL_SUCCESS, r.status());
    assertEquals(1, r.data().size());
    assertEquals("a", r.data().get(0).key());
  }

  @Test
  void dataComesBackWithItsPublisherInKeyOrder() {
    Identity pub = alice("jobA", 2);
    assertEquals(Status.SUCCESS, store.publish(pub, List.of(datum("x", "1"), datum("y", "2"))));
    LookupResult r = lookup(alice("jobB", 0), List.of("y", "x", "y"));
    assertEquals(Status.SUCCESS, r.status());
    assertEquals(2, r.data().size());
    assertEquals(
        List.of(
            new Value.PData(Proc.of("jobA", 2), "y", Value.of("2")),
            new Value.PData(Proc.of("jobA", 2), "x", Value.of("1"))),
        r.data());
  }

  @Test
  void anUnreadableRestrictionFailsThePublish() {
    Info unknownPermission =
        Info.of(Keys.ACCESS_PERMISSIONS, DataArray.ofInfos(List.of(Info.of("pmix.bogus", true))));
    Info notAnArray = Info.of(Keys.ACCESS_PERMISSIONS, Value.of("bob"));
    Info emptyList = Info.of(Keys.ACCESS_USERIDS, DataArray.of(DataType.UINT32, List.of()));
    Info notIds = Info.of(Keys.ACCESS_USERIDS, Value.of("bob"));
    for (Info bad : List.of(unknownPermission, notAnArray, emptyList, notIds)) {
      assertEquals(Status.ERR_BAD_PARAM, publish(alice("jobA", 0), "svc", "x", bad), bad.toString());
    }
    assertEquals(0, store.itemCount());
  }

  @Test
  void rangesThatNameNoSetAreRefused() {
    assertEquals(
        Status.ERR_NOT_SUPPORTED, publish(alice("jobA", 0), "svc", "x", range(DataRange.RM)));
    assertEquals(
        Status.ERR_BAD_PARAM, publish(alice("jobA", 0), "svc", "x", range(DataRange.INVALID)));
    assertEquals(
        Status.ERR_BAD_PARAM,
        publish(
            alice("jobA", 0), "svc", "x", Info.of(Keys.RANGE, Value.unsigned(DataType.DATA_RANGE, 77))));
    assertEquals(0, store.itemCount());
    published(alice("jobA", 0), "svc", "x");
    assertEquals(Status.ERR_BAD_PARAM, lookupStatus(alice("jobA", 0), "svc", range(DataRange.CUSTOM)));
    assertEquals(Status.ERR_NOT_SUPPORTED, lookupStatus(alice("jobA", 0), "svc", range(DataRange.RM)));
  }

  /**
   * Open MPI 5's MPI_Lookup_name(name, MPI_INFO_NULL, port) sends an uninitialised range: a search
   * range we do not know, or INVALID (255, what a spawned child's stack held), is the session, as
   * under PRRTE (issue #16), and finds session data.
   */
  @Test
  void aLookupWithAnUnknownRangeSearchesTheSession() {
    published(alice("jobA", 0), "svc", "x");
    for (long garbage : new long[] {32, 239, 77, 255}) {
      assertEquals(
          "x",
          value(alice("jobB", 0), "svc", Info.of(Keys.RANGE, Value.unsigned(DataType.DATA_RANGE, garbage))),
          "range " + garbage);
    }
  }

  @Test
  void reservedKeysAreDirectivesNotData() {
    Status s =
        store.publish(
            alice("jobA", 0),
            List.of(
                datum("svc", "x"),
                Info.of(Keys.USERID, Value.uint32(BOB)),
                Info.of(Keys.TIMEOUT, Value.of(5))));
    assertEquals(Status.SUCCESS, s);
    assertFalse(store.holds(Proc.of("jobA", 0), Keys.USERID.name()));
    assertFalse(store.holds(Proc.of("jobA", 0), Keys.TIMEOUT.name()));
    assertEquals(Status.ERR_NOT_FOUND, lookupStatus(alice("jobA", 0), Keys.USERID.name()));
  }

  @Test
  void aRequiredDirectiveTheStoreDoesNotHonourIsNotSupported() {
    Info required = Info.required(Keys.HOSTNAME.name(), Value.of("h"));
    assertEquals(Status.ERR_NOT_SUPPORTED, publish(alice("jobA", 0), "svc", "x", required));
    assertEquals(0, store.itemCount());
    published(alice("jobA", 0), "svc", "x");
    assertEquals(
        Status.ERR_NOT_SUPPORTED,
        lookupStatus(alice("jobA", 0), "svc", Info.required("my.directive", Value.of(true))));
    // Not required: ignored.
    assertEquals("x", value(alice("jobA", 0), "svc", Info.of("my.directive", true)));
  }

  @Test
  void malformedRequestsAreBadParam() {
    assertEquals(Status.ERR_BAD_PARAM, store.publish(alice("jobA", 0), List.of(range(DataRange.SESSION))));
    assertEquals(
        Status.ERR_BAD_PARAM,
        store.publish(alice("jobA", 0), List.of(datum("k", "1"), datum("k", "2"))));
    assertEquals(Status.ERR_BAD_PARAM, lookup(alice("jobA", 0), List.of()).status());
    assertEquals(Status.ERR_BAD_PARAM, lookup(alice("jobA", 0), List.of("")).status());
    assertEquals(
        Status.ERR_BAD_PARAM,
        lookupStatus(alice("jobA", 0), "k", Info.of(Keys.RANGE, Value.of("session"))));
    assertEquals(0, store.itemCount());
  }
}
