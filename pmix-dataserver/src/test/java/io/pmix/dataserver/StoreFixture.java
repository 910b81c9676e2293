package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Retention;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/** A store on a fake clock, callers of a few users, and shorthands for requests. */
class StoreFixture {
  static final int ALICE = 1000;
  static final int BOB = 2000;
  static final int CAROL = 3000;
  static final int STAFF = 100;
  static final int BOBS = 200;
  static final int CAROLS = 300;

  final FakeClock clock = new FakeClock();
  final RecordingLogger logger = new RecordingLogger();
  DataStore store = new DataStore(options().build());

  DataStoreOptions.Builder options() {
    return DataStoreOptions.builder().clock(clock).logger(logger);
  }

  void rebuild(DataStoreOptions.Builder b) {
    store = new DataStore(b.build());
  }

  // ---- callers: nspace:rank of a user, app 0, default session, node n0 ----

  static Identity proc(String nspace, int rank, int uid, int gid) {
    return new Identity(Proc.of(nspace, rank), uid, gid, 0, Identity.UNKNOWN, "n0");
  }

  static Identity alice(String nspace, int rank) {
    return proc(nspace, rank, ALICE, STAFF);
  }

  static Identity bob(String nspace, int rank) {
    return proc(nspace, rank, BOB, BOBS);
  }

  static Identity carol(String nspace, int rank) {
    return proc(nspace, rank, CAROL, CAROLS);
  }

  // ---- directives ----

  static Info range(DataRange r) {
    return Info.of(Keys.RANGE, r.toValue());
  }

  static Info persist(Retention r) {
    return Info.of(Keys.PERSISTENCE, Value.unsigned(DataType.PERSIST, r.code()));
  }

  static Info persistCode(int code) {
    return Info.of(Keys.PERSISTENCE, Value.unsigned(DataType.PERSIST, code));
  }

  static DataArray ids(int... ids) {
    return DataArray.of(
        DataType.UINT32,
        IntStream.of(ids).mapToObj(i -> Value.uint32(Integer.toUnsignedLong(i))).toList());
  }

  static Info readers(int[] uids, int[] gids) {
    List<Info> perms = new ArrayList<>();
    if (uids.length > 0) {
      perms.add(Info.of(Keys.ACCESS_USERIDS, ids(uids)));
    }
    if (gids.length > 0) {
      perms.add(Info.of(Keys.ACCESS_GRPIDS, ids(gids)));
    }
    return Info.of(Keys.ACCESS_PERMISSIONS, DataArray.ofInfos(perms));
  }

  static Info readerUids(int... uids) {
    return readers(uids, new int[0]);
  }

  static Info readerGids(int... gids) {
    return readers(new int[0], gids);
  }

  static Info replace() {
    return Info.of(DataStore.REPLACE_KEY, true);
  }

  static Info waitAll() {
    return Info.of(Keys.WAIT, Value.of(0));
  }

  static Info waitFor(int n) {
    return Info.of(Keys.WAIT, Value.of(n));
  }

  static Info timeout(int seconds) {
    return Info.of(Keys.TIMEOUT, Value.of(seconds));
  }

  static Info datum(String key, String value) {
    return Info.of(key, value);
  }

  // ---- requests ----

  Status publish(Identity who, String key, String value, Info... directives) {
    List<Info> info = new ArrayList<>();
    info.add(datum(key, value));
    info.addAll(Arrays.asList(directives));
    return store.publish(who, info);
  }

  void published(Identity who, String key, String value, Info... directives) {
    assertEquals(Status.SUCCESS, publish(who, key, value, directives), "publish " + key);
  }

  /** A lookup that must complete at once. */
  LookupResult lookup(Identity who, List<String> keys, Info... directives) {
    AtomicReference<LookupResult> r = new AtomicReference<>();
    DataStore.PendingLookup h = store.lookup(who, keys, Arrays.asList(directives), r::set);
    assertNotNull(r.get(), "the lookup completed at once");
    assertEquals(true, h.isDone());
    return r.get();
  }

  LookupResult lookup(Identity who, String key, Info... directives) {
    return lookup(who, List.of(key), directives);
  }

  /** The value found for a single-key lookup, asserting SUCCESS. */
  String value(Identity who, String key, Info... directives) {
    LookupResult r = lookup(who, key, directives);
    assertEquals(Status.SUCCESS, r.status(), "lookup " + key + " by " + who);
    assertEquals(1, r.data().size());
    return r.data().get(0).value().asString();
  }

  Status lookupStatus(Identity who, String key, Info... directives) {
    return lookup(who, key, directives).status();
  }

  Status unpublish(Identity who, List<String> keys, Info... directives) {
    return store.unpublish(who, keys, Arrays.asList(directives));
  }
}
