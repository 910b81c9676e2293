package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.GdsModule.Fetched;
import io.pmix.common.testing.ProcessResources;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link DstoreReader} over segments a real libpmix 4.2.2 server wrote ({@link GoldenStores}),
 * mapped from files and locked with the real pthread mutexes and rwlock in them, plus targeted
 * corruptions. Against a live server: DstoreReaderIT.
 */
@Timeout(60)
class DstoreReaderTest {
  private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(10);
  private static final Proc WILD = Proc.wildcard("cjob");
  private static final Proc R0 = Proc.of("cjob", 0);
  /** Rank 0's entry in the golden meta segment (rank, offset, count); WILDCARD's is at 8. */
  private static final int R0_ENTRY = 8 + 24;
  private static final List<String> RANK0_KEYS =
      List.of(
          "pmix.appnum",
          "pmix.lrank",
          "pmix.nrank",
          "pmix.nodeid",
          "pmix.hname",
          "pmix.grank",
          "pmix.apprank",
          "test.str.0",
          "test.bool",
          "test.bo",
          "test.i64",
          "test.gstr");

  @TempDir Path dir;

  private DstoreReader attach(String kind) throws IOException {
    Map<String, byte[]> files = GoldenStores.load(kind);
    if (kind.equals("ds21")) {
      GoldenStores.freeSlots(files.get("smlockseg-cjob"));
    }
    GoldenStores.write(dir, files);
    return DstoreReader.attach(
        kind.equals("ds21") ? GdsKind.DS21 : GdsKind.DS12, dir, "cjob", WireFormat.DEFAULT,
        LOCK_TIMEOUT);
  }

  private static void assertGoldenContent(DstoreReader r) {
    Map<String, Value> job = r.fetchAll(WILD).orElseThrow();
    assertEquals(GoldenStores.WILDCARD_KEYS, List.copyOf(job.keySet()));
    assertEquals(Value.uint32(2), job.get("pmix.job.size"));
    assertEquals(Value.of("cjob"), job.get("pmix.nspace"));
    assertEquals(Value.of("0,1"), job.get("pmix.lpeers"));
    assertEquals(Value.rank(0), job.get("pmix.lldr"));

    Map<String, Value> r0 = r.fetchAll(Proc.of("cjob", 0)).orElseThrow();
    assertEquals(RANK0_KEYS, List.copyOf(r0.keySet()));
    assertEquals(Value.of("str-cjob-0-0"), r0.get("test.str.0"));
    assertEquals(Value.of(true), r0.get("test.bool"));
    assertEquals(Value.of("glob-0-0"), r0.get("test.gstr"));
    assertArrayEquals(new byte[] {0, 7, 14, 21, 28, 35, 42, 49}, r0.get("test.bo").asBytes());
    assertEquals(Value.rank(0), r0.get("pmix.grank"));

    Map<String, Value> r1 = r.fetchAll(Proc.of("cjob", 1)).orElseThrow();
    assertEquals(Value.of("str-cjob-1-0"), r1.get("test.str.1"));
    assertEquals(Value.of(false), r1.get("test.bool"));
    assertEquals(Value.uint16(1), r1.get("pmix.lrank"));

    assertEquals(
        new Fetched.Found(Value.of("vm")), r.fetch(Proc.of("cjob", 1), "pmix.hname"));
    assertEquals(new Fetched.Found(Value.uint32(2)), r.fetch(WILD, "pmix.local.size"));
    // REMOTE keys are not stored for local peers; a rank without data; an unknown namespace.
    assertEquals(new Fetched.NoKey(), r.fetch(Proc.of("cjob", 0), "test.u32"));
    assertEquals(new Fetched.NoProc(), r.fetch(Proc.of("cjob", 2), "test.str.2"));
    assertEquals(new Fetched.NoProc(), r.fetch(Proc.of("other", 0), "pmix.hname"));
    assertTrue(r.fetchAll(Proc.of("other", Proc.RANK_WILDCARD)).isEmpty());
  }

  @Test
  void readsTheDs21StoreOfARealServer() throws IOException {
    try (DstoreReader r = attach("ds21")) {
      assertEquals("ds21", r.name());
      assertGoldenContent(r);
    }
  }

  @Test
  void readsTheDs12StoreOfARealServerUnderItsRwlock() throws IOException {
    try (DstoreReader r = attach("ds12")) {
      assertEquals("ds12", r.name());
      assertGoldenContent(r);
    }
  }

  @Test
  void readsTheDs12StoreOfAnFcntlBuild() throws IOException {
    Map<String, byte[]> files = GoldenStores.load("ds12");
    files.put("dstore_sm.lock", new byte[0]);
    GoldenStores.write(dir, files);
    try (DstoreReader r =
            DstoreReader.attach(GdsKind.DS12, dir, "cjob", WireFormat.DEFAULT, LOCK_TIMEOUT);
        DstoreReader second =
            DstoreReader.attach(GdsKind.DS12, dir, "cjob", WireFormat.DEFAULT, LOCK_TIMEOUT)) {
      assertGoldenContent(r);
      // Two readers of one lock file in one process share its descriptor: closing one must not
      // drop the other's locks, and both keep working.
      assertGoldenContent(second);
    }
  }

  @Test
  void ds21ClaimsOneSlotPerProcessAndReusesIt() throws IOException {
    try (DstoreReader r = attach("ds21")) {
      assertEquals(new Fetched.Found(Value.uint32(2)), r.fetch(WILD, "pmix.job.size"));
    }
    for (int cycle = 0; cycle < 5; cycle++) {
      try (DstoreReader r =
          DstoreReader.attach(GdsKind.DS21, dir, "cjob", WireFormat.DEFAULT, LOCK_TIMEOUT)) {
        assertEquals(new Fetched.Found(Value.uint32(2)), r.fetch(WILD, "pmix.job.size"));
      }
    }
    ByteBuffer lock =
        ByteBuffer.wrap(Files.readAllBytes(dir.resolve("smlockseg-cjob")))
            .order(ByteOrder.nativeOrder());
    // Six attaches, one slot taken: a libpmix client would have used up both by its second init.
    assertEquals(1, lock.getInt(32) + lock.getInt(36));
  }

  @Test
  void ds21WithEverySlotTakenIsNotAvailable() throws IOException {
    GoldenStores.write(dir, GoldenStores.load("ds21")); // both slots held by the C clients
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> DstoreReader.attach(GdsKind.DS21, dir, "cjob", WireFormat.DEFAULT, LOCK_TIMEOUT));
    assertEquals(Status.ERR_NOT_AVAILABLE, e.status());
  }

  @Test
  void aMissingStoreIsNotAvailable() {
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> DstoreReader.attach(GdsKind.DS12, dir, "cjob", WireFormat.DEFAULT, LOCK_TIMEOUT));
    assertEquals(Status.ERR_NOT_AVAILABLE, e.status());
    assertThrows(
        PmixException.class,
        () -> DstoreReader.attach(GdsKind.DS21, dir, "../x", WireFormat.DEFAULT, LOCK_TIMEOUT));
  }

  /** The server's side of ds21's protocol: every signal mutex, then every main mutex. */
  @Test
  void ds21ReadersWaitForTheWriterAndTimeOut() throws Exception {
    try (DstoreReader r = attach("ds21")) {
      assertTrue(r.fetch(WILD, "pmix.job.size") instanceof Fetched.Found);
      try (Writer w = Writer.ds21(dir.resolve("smlockseg-cjob"))) {
        w.hold();
        DstoreReader quick =
            DstoreReader.attach(GdsKind.DS21, dir, "cjob", WireFormat.DEFAULT, Duration.ofMillis(200));
        try (quick) {
          Instant t0 = Instant.now();
          PmixException e = assertThrows(PmixException.class, () -> quick.fetch(WILD, "pmix.job.size"));
          assertEquals(Status.ERR_TIMEOUT, e.status());
          assertTrue(Duration.between(t0, Instant.now()).toMillis() >= 150);
          // A reader waiting while the writer holds the lock gets through once it is released.
          CompletableFuture<Fetched> waiting =
              CompletableFuture.supplyAsync(() -> r.fetch(WILD, "pmix.job.size"));
          assertFalse(waitDone(waiting, Duration.ofMillis(300)));
          w.release();
          assertEquals(new Fetched.Found(Value.uint32(2)), waiting.get(10, TimeUnit.SECONDS));
        }
      }
    }
  }

  @Test
  void ds12ReadersWaitForTheWriterAndTimeOut() throws Exception {
    try (DstoreReader r = attach("ds12")) {
      try (Writer w = Writer.ds12(dir.resolve("dstore_sm.lock"))) {
        w.hold();
        try (DstoreReader quick =
            DstoreReader.attach(
                GdsKind.DS12, dir, "cjob", WireFormat.DEFAULT, Duration.ofMillis(200))) {
          PmixException e = assertThrows(PmixException.class, () -> quick.fetch(WILD, "pmix.nspace"));
          assertEquals(Status.ERR_TIMEOUT, e.status());
        }
        CompletableFuture<Fetched> waiting =
            CompletableFuture.supplyAsync(() -> r.fetch(WILD, "pmix.nspace"));
        assertFalse(waitDone(waiting, Duration.ofMillis(300)));
        w.release();
        assertEquals(new Fetched.Found(Value.of("cjob")), waiting.get(10, TimeUnit.SECONDS));
      }
    }
  }

  private static boolean waitDone(CompletableFuture<?> f, Duration d) throws InterruptedException {
    try {
      f.get(d.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void closeUnmapsEverySegment() throws IOException {
    DstoreReader r = attach("ds21");
    assertTrue(r.fetchAll(Proc.of("cjob", 1)).isPresent());
    assertTrue(mapsOf(dir) >= 4, "segments mapped while open");
    r.close();
    r.close();
    assertEquals(0, mapsOf(dir), "segments still mapped after close");
    assertThrows(IllegalStateException.class, () -> r.fetch(WILD, "pmix.job.size"));
  }

  @Test
  void cyclingLeavesNoMappingNoDescriptorAndOneSlot() throws IOException {
    for (String kind : List.of("ds21", "ds12")) {
      Path d = dir.resolve(kind);
      Map<String, byte[]> files = GoldenStores.load(kind);
      if (kind.equals("ds21")) {
        GoldenStores.freeSlots(files.get("smlockseg-cjob"));
      }
      GoldenStores.write(d, files);
      GdsKind k = kind.equals("ds21") ? GdsKind.DS21 : GdsKind.DS12;
      for (int cycle = 0; cycle < 300; cycle++) {
        try (DstoreReader r = DstoreReader.attach(k, d, "cjob", WireFormat.DEFAULT, LOCK_TIMEOUT)) {
          assertEquals(
              new Fetched.Found(Value.of("vm")), r.fetch(Proc.of("cjob", 1), "pmix.hname"));
        }
      }
      assertEquals(0, mapsOf(d), kind + ": segments still mapped");
      String real = d.toRealPath().toString();
      assertEquals(
          List.of(),
          ProcessResources.openFds().stream().filter(f -> f.contains(real)).toList(),
          kind + ": descriptors left open");
    }
    ByteBuffer lock =
        ByteBuffer.wrap(Files.readAllBytes(dir.resolve("ds21").resolve("smlockseg-cjob")))
            .order(ByteOrder.nativeOrder());
    assertEquals(1, lock.getInt(32) + lock.getInt(36), "slots taken by 300 cycles");
  }

  private static long mapsOf(Path dir) throws IOException {
    String d = dir.toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.contains(d)).count();
  }

  // ---------------------------------------------------------------------------------------------
  // Corruptions the fuzz test may not hit often

  private static DstoreReader memory(String kind, Map<String, byte[]> files) {
    return new DstoreReader(
        kind.equals("ds21") ? GdsKind.DS21 : GdsKind.DS12,
        new MemorySegments(files),
        new UncontendedLock(),
        WireFormat.DEFAULT,
        LOCK_TIMEOUT);
  }

  private static void putLong(byte[] seg, int at, long v) {
    ByteBuffer.wrap(seg).order(ByteOrder.nativeOrder()).putLong(at, v);
  }

  private static Status statusOf(DstoreReader r, Proc p) {
    return assertThrows(PmixException.class, () -> r.fetchAll(p)).status();
  }

  @Test
  void anExtensionSlotPointingBackIsACorruptStoreNotAnEndlessWalk() {
    Map<String, byte[]> f = GoldenStores.load("ds21");
    byte[] data = f.get("smdataseg-cjob-0");
    // Rank 1's last extension slot (0x65b, value 0: the end) now points to its first record.
    putLong(data, 0x65b + 17, 0x3ec);
    putLong(f.get("smseg-cjob-0"), 8 + 3 * 24 - 8, Long.MAX_VALUE); // and counts "all" keys
    DstoreReader r = memory("ds21", f);
    assertEquals(Status.ERR_UNPACK_FAILURE, statusOf(r, Proc.of("cjob", 1)));
  }

  @Test
  void offsetsAndSizesOutsideTheSegmentsAreCorrupt() {
    Map<String, byte[]> f = GoldenStores.load("ds21");
    putLong(f.get("smseg-cjob-0"), 8 + 24 + 8, 1L << 40); // rank 0's data far beyond the end
    assertEquals(Status.ERR_UNPACK_FAILURE, statusOf(memory("ds21", f), Proc.of("cjob", 0)));

    f = GoldenStores.load("ds21");
    putLong(f.get("smdataseg-cjob-0"), 8, 1L << 50); // the first record claims a huge size
    assertEquals(Status.ERR_UNPACK_FAILURE, statusOf(memory("ds21", f), WILD));

    f = GoldenStores.load("ds12");
    putLong(f.get("initial-pmix_shared-segment-0"), 0, 1000); // more namespaces than fit
    assertEquals(Status.ERR_UNPACK_FAILURE, statusOf(memory("ds12", f), WILD));

    f = GoldenStores.load("ds12");
    putLong(f.get("initial-pmix_shared-segment-0"), 16 + 272, 7); // 7 meta segments, 1 exists
    assertEquals(Status.ERR_NOT_AVAILABLE, statusOf(memory("ds12", f), WILD));
  }

  @Test
  void aKeyWithoutItsNulWithin511BytesIsCorrupt() {
    Map<String, byte[]> f = GoldenStores.load("ds21");
    byte[] data = Arrays.copyOf(f.get("smdataseg-cjob-0"), 8192);
    // The first job-level record: a big size, and 600 key bytes without a NUL.
    putLong(data, 8, 4000);
    Arrays.fill(data, 8 + 16, 8 + 16 + 600, (byte) 'k');
    f.put("smdataseg-cjob-0", data);
    assertEquals(Status.ERR_UNPACK_FAILURE, statusOf(memory("ds21", f), WILD));
    // At 511 bytes it is a key (libpmix's longest), and the record reads: 1 item, UINT32, 5; its
    // sum field as libpmix's writer fills it.
    putLong(data, 8, 16 + 512 + 3);
    putLong(data, 8 + 8, 511L * 'k');
    data[8 + 16 + 511] = 0;
    data[8 + 16 + 512] = 2;
    data[8 + 16 + 513] = 0x0e;
    data[8 + 16 + 514] = 5;
    assertEquals(
        new Fetched.Found(Value.uint32(5)), memory("ds21", f).fetch(WILD, "k".repeat(511)));
  }

  @Test
  void aValueThatDoesNotDecodeCarriesTheCodecStatus() {
    Map<String, byte[]> f = GoldenStores.load("ds21");
    byte[] data = f.get("smdataseg-cjob-0");
    data[0x26 + 1] = (byte) 0x7f; // pmix.job.size's type code: not a type
    DstoreReader r = memory("ds21", f);
    PmixException e = assertThrows(PmixException.class, () -> r.fetch(WILD, "pmix.job.size"));
    assertEquals(Status.ERR_UNKNOWN_DATA_TYPE, e.status());
  }

  @Test
  void invalidatedRecordsAreSkippedAndTheLinearModeIsSearchedByRank() {
    Map<String, byte[]> f = GoldenStores.load("ds21");
    byte[] data = f.get("smdataseg-cjob-0");
    // Invalidate rank 0's test.str.0 (at 0x4de) as libpmix does: flag bit 62 of its size.
    ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.nativeOrder());
    b.putLong(0x4de, b.getLong(0x4de) | DstoreFormat.INVALIDATED_FLAG);
    DstoreReader r = memory("ds21", f);
    assertEquals(new Fetched.NoKey(), r.fetch(Proc.of("cjob", 0), "test.str.0"));
    assertEquals(new Fetched.Found(Value.of("glob-0-0")), r.fetch(Proc.of("cjob", 0), "test.gstr"));

    // SM_USE_LINEAR_SEARCH: entries appended (rank 1, WILDCARD), counted in the first word.
    Map<String, byte[]> g = GoldenStores.load("ds21");
    byte[] meta = g.get("smseg-cjob-0");
    ByteBuffer m = ByteBuffer.wrap(meta).order(ByteOrder.nativeOrder());
    long[][] entries = {{1, 0x3ec, 12}, {0xfffffffeL, 8, 14}};
    m.putLong(0, entries.length);
    for (int i = 0; i < entries.length; i++) {
      for (int j = 0; j < 3; j++) {
        m.putLong(8 + 24 * i + 8 * j, entries[i][j]);
      }
    }
    DstoreReader linear = memory("ds21", g);
    assertEquals(new Fetched.Found(Value.of("vm")), linear.fetch(Proc.of("cjob", 1), "pmix.hname"));
    assertEquals(new Fetched.Found(Value.uint32(2)), linear.fetch(WILD, "pmix.job.size"));
    assertEquals(new Fetched.NoProc(), linear.fetch(Proc.of("cjob", 0), "pmix.hname"));
  }

  /**
   * A search by key (which remembers what it read: docs/gds.md §7) answers as a walk of the whole
   * chain: every key of every rank of a real server's store, asked twice, and a key it does not
   * hold. The job-level chain holds {@code pmix.pdata} twice: the first record is the answer.
   */
  @ParameterizedTest
  @ValueSource(strings = {"ds21", "ds12"})
  void aSearchAnswersAsAWalkOfTheChain(String kind) {
    DstoreReader r = memory(kind, GoldenStores.load(kind));
    for (Proc p : List.of(WILD, Proc.of("cjob", 0), Proc.of("cjob", 1))) {
      List<Info> records = r.fetchRecords(p).orElseThrow();
      Map<String, Value> first = new LinkedHashMap<>();
      for (Info i : records) {
        first.putIfAbsent(i.key(), i.value());
      }
      if (p.equals(WILD)) {
        assertTrue(records.size() > first.size(), "the job-level chain holds a key twice");
      }
      for (int pass = 0; pass < 2; pass++) {
        for (Map.Entry<String, Value> e : first.entrySet()) {
          assertEquals(new Fetched.Found(e.getValue()), r.fetch(p, e.getKey()), p + " " + e);
        }
        assertEquals(new Fetched.NoKey(), r.fetch(p, "test.none"), p.toString());
      }
    }
  }

  /**
   * What the server writes after a search is seen by the next one, as libpmix 4.2.2's writer
   * writes it: a key replaced by a value of another size (its record invalidated, a new one
   * appended), a new key, and the chain's count left one short, as that writer leaves it after
   * replacing a key twice (docs/libpmix-facts.md): the record past the count is not found, as
   * libpmix's readers do not find it. And the job-level chain, which holds a key twice, read to its
   * end, then that key replaced (both records invalidated) and a key appended.
   */
  @Test
  void writesAfterASearchAreSeenByTheNext() {
    Live s = Live.ds21();
    assertEquals(new Fetched.Found(Value.of("str-cjob-0-0")), s.get(R0, "test.str.0"));
    assertEquals(new Fetched.NoKey(), s.get(R0, "test.late"));

    s.append(s.first(R0_ENTRY), "test.str.0",
        record("test.str.0", new byte[] {2, 0x0e, 9}), record("test.late", new byte[] {2, 0x0e, 7}));
    s.count(R0_ENTRY, -1 + 1 + 1);
    assertEquals(new Fetched.Found(Value.uint32(9)), s.get(R0, "test.str.0"));
    assertEquals(new Fetched.Found(Value.uint32(7)), s.get(R0, "test.late"));
    assertEquals(new Fetched.Found(Value.of("glob-0-0")), s.get(R0, "test.gstr"));

    s.append(s.first(R0_ENTRY), null,
        record("test.later", new byte[] {2, 0x0e, 5}), record("test.last", new byte[] {2, 0x0e, 6}));
    s.count(R0_ENTRY, 2 - 1);
    assertEquals(new Fetched.Found(Value.uint32(5)), s.get(R0, "test.later"));
    assertEquals(new Fetched.NoKey(), s.get(R0, "test.last"));
    assertEquals(new Fetched.Found(Value.uint32(7)), s.get(R0, "test.late"));
    // The same writer lowering the count with nothing appended (a key stored again at its size
    // after it matched the key's invalidated record by name): the last record counted is out.
    s.count(R0_ENTRY, -1);
    assertEquals(new Fetched.NoKey(), s.get(R0, "test.later"));
    assertEquals(new Fetched.Found(Value.uint32(7)), s.get(R0, "test.late"));

    assertEquals(new Fetched.NoKey(), s.get(WILD, "test.late"));
    s.append(8, "pmix.pdata",
        record("pmix.pdata", new byte[] {2, 0x0e, 9}), record("test.late", new byte[] {2, 0x0e, 7}));
    s.count(8, -2 + 1 + 1); // WILDCARD's entry: its count
    assertEquals(new Fetched.Found(Value.uint32(7)), s.get(WILD, "test.late"));
    assertEquals(new Fetched.Found(Value.uint32(9)), s.get(WILD, "pmix.pdata"));
    assertEquals(new Fetched.Found(Value.uint32(2)), s.get(WILD, "pmix.job.size"));
  }

  /**
   * libpmix 4.2.2's ds21 writer, its count one short after a key was replaced twice, links its
   * next records from an extension slot passed long ago (docs/libpmix-facts.md): the records
   * after that slot leave the chain, the count and the record where the last search stopped stay
   * as they were. A search after it finds what a walk finds: the new records, not the old ones.
   */
  @Test
  void aSlotPointedElsewhereIsFollowed() {
    Live s = Live.ds21();
    long first = s.first(R0_ENTRY);
    // A third run: test.str.0 replaced, test.late added.
    s.append(first, "test.str.0",
        record("test.str.0", new byte[] {2, 0x0e, 9}), record("test.late", new byte[] {2, 0x0e, 7}));
    s.count(R0_ENTRY, 1);
    assertEquals(new Fetched.Found(Value.uint32(7)), s.get(R0, "test.late"));
    assertEquals(new Fetched.NoKey(), s.get(R0, "test.new"));

    // test.str.0 replaced again, and test.new added; linked from the slot that led to the third
    // run, which leaves the chain with test.late. The count: -1 (the old record taken again), -1
    // (the replaced one), +1, +1.
    s.append(first, "test.str.0", true,
        record("test.str.0", new byte[] {2, 0x0e, 11}), record("test.new", new byte[] {2, 0x0e, 5}));

    assertEquals(new Fetched.Found(Value.uint32(5)), s.get(R0, "test.new"));
    assertEquals(new Fetched.NoKey(), s.get(R0, "test.late"));
    assertEquals(new Fetched.Found(Value.uint32(11)), s.get(R0, "test.str.0"));
    assertEquals(new Fetched.Found(Value.of("glob-0-0")), s.get(R0, "test.gstr"));
  }

  /**
   * A real server's ds21 store in memory under a reader, its data and meta segments written to
   * as the server would.
   */
  private record Live(ByteBuffer data, ByteBuffer meta, DstoreReader reader) {
    static Live ds21() {
      Map<String, byte[]> f = GoldenStores.load("ds21");
      return new Live(
          ByteBuffer.wrap(f.get("smdataseg-cjob-0")).order(ByteOrder.nativeOrder()),
          ByteBuffer.wrap(f.get("smseg-cjob-0")).order(ByteOrder.nativeOrder()),
          memory("ds21", f));
    }

    Fetched get(Proc p, String key) {
      return reader.fetch(p, key);
    }

    /** The chain's start in the meta entry at {@code entry} (rank, offset, count). */
    long first(int entry) {
      return meta.getLong(entry + 8);
    }

    /** Changes the count of the meta entry at {@code entry} by {@code delta}. */
    void count(int entry, long delta) {
      meta.putLong(entry + 16, meta.getLong(entry + 16) + delta);
    }

    void append(long first, String replaced, byte[]... added) {
      DstoreReaderTest.append(data, first, replaced, false, added);
    }

    void append(long first, String replaced, boolean early, byte[]... added) {
      DstoreReaderTest.append(data, first, replaced, early, added);
    }
  }

  private static byte[] record(String key, byte[] value) {
    return DstoreFormat.DS21.encode(key.getBytes(StandardCharsets.US_ASCII), value, false);
  }

  /**
   * Changes the ds21 chain starting at {@code first} as libpmix's writer does: invalidates every
   * record of {@code replaced} (when not null), writes {@code added} and a closing extension slot
   * at the segment's free offset and points the chain's closing slot at them, or, when {@code
   * early}, the slot before it (as the writer does with its count short). The meta count is the
   * caller's.
   */
  private static void append(
      ByteBuffer b, long first, String replaced, boolean early, byte[]... added) {
    Segment seg = new Segment("d", b);
    long at = first;
    long before = -1;
    while (true) {
      DstoreFormat.Item i = DstoreFormat.DS21.parse(seg, at);
      if (i.kind() == DstoreFormat.Kind.EXTENSION) {
        long next = b.getLong((int) i.dataAt());
        if (next == 0) {
          break;
        }
        before = at;
        at = next;
        continue;
      }
      if (replaced != null && new String(i.key(), StandardCharsets.US_ASCII).equals(replaced)) {
        b.putLong((int) at, b.getLong((int) at) | DstoreFormat.INVALIDATED_FLAG);
      }
      at += i.size();
    }
    long free = b.getLong(0);
    long to = free;
    for (byte[] rec : added) {
      b.put((int) to, rec);
      to += rec.length;
    }
    byte[] end = DstoreFormat.DS21.extension(0);
    b.put((int) to, end);
    b.putLong(0, to + end.length);
    long link = early ? before : at;
    assertTrue(link >= 0, "a slot before the closing one");
    b.putLong((int) link + DstoreFormat.DS21.extensionValueOffset(), free);
  }

  @Test
  void valuesDecodeAsTheirTypes() {
    DstoreReader r = memory("ds12", GoldenStores.load("ds12"));
    Value pdata = ((Fetched.Found) r.fetch(WILD, "pmix.pdata")).value();
    assertEquals(DataType.DATA_ARRAY, pdata.type());
    assertInstanceOf(Fetched.Found.class, r.fetch(Proc.of("cjob", 1), "test.i64"));
    assertEquals(DataType.INT64, ((Fetched.Found) r.fetch(Proc.of("cjob", 1), "test.i64")).value().type());
  }

  // ---------------------------------------------------------------------------------------------

  /** The writer's side of a lock, held by a thread of its own (as the server would). */
  private static final class Writer implements AutoCloseable {
    interface LibC extends Library {
      int pthread_mutex_lock(Pointer m);

      int pthread_mutex_unlock(Pointer m);

      int pthread_rwlock_wrlock(Pointer l);

      int pthread_rwlock_unlock(Pointer l);
    }

    static final LibC C = Native.load("c", LibC.class);

    private final FileChannel ch;
    private final MappedByteBuffer seg;
    private final boolean ds21;
    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private Thread thread;

    private Writer(Path file, boolean ds21) throws IOException {
      this.ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
      this.seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size());
      this.ds21 = ds21;
    }

    static Writer ds21(Path f) throws IOException {
      return new Writer(f, true);
    }

    static Writer ds12(Path f) throws IOException {
      return new Writer(f, false);
    }

    private List<Pointer> mutexes() {
      ByteBuffer b = seg.duplicate().order(ByteOrder.nativeOrder());
      int n = b.getInt(8);
      long align = b.getLong(16);
      long offs = b.getLong(24);
      Pointer base = Native.getDirectBufferPointer(seg);
      List<Pointer> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        out.add(base.share(offs + align * 2 * i));
      }
      for (int i = 0; i < n; i++) {
        out.add(base.share(offs + align * (2 * i + 1)));
      }
      return out;
    }

    void hold() throws InterruptedException {
      thread =
          new Thread(
              () -> {
                List<Pointer> locks = ds21 ? mutexes() : List.of(Native.getDirectBufferPointer(seg));
                for (Pointer p : locks) {
                  check(ds21 ? C.pthread_mutex_lock(p) : C.pthread_rwlock_wrlock(p));
                }
                held.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                for (Pointer p : locks) {
                  check(ds21 ? C.pthread_mutex_unlock(p) : C.pthread_rwlock_unlock(p));
                }
              },
              "test-gds-writer");
      thread.start();
      assertTrue(held.await(10, TimeUnit.SECONDS));
    }

    private static void check(int rc) {
      if (rc != 0) {
        throw new IllegalStateException("pthread error " + rc);
      }
    }

    void release() throws InterruptedException {
      release.countDown();
      if (thread != null) {
        thread.join(10_000);
      }
    }

    @Override
    public void close() throws IOException {
      try {
        release();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      ch.close();
    }
  }
}
