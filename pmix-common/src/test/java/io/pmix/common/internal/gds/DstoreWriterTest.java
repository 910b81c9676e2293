package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link DstoreWriter} checked by {@link DstoreReader}: what one writes the other reads, value for
 * value, through replacements, several data segments and removal. (The C side reads the same files
 * in pmix-server's DstoreServerIT.)
 */
@Timeout(60)
class DstoreWriterTest {
  private static final Duration T = Duration.ofSeconds(5);

  @TempDir Path tmp;

  private DstoreWriter writer(GdsKind kind, Map<String, String> env) {
    return DstoreWriter.create(kind, tmp.resolve("pmix_dstor_" + kind.libpmixName() + "_1"),
        WireFormat.DEFAULT, T, env);
  }

  private static Map<String, Value> values(Object... kv) {
    Map<String, Value> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], (Value) kv[i + 1]);
    }
    return m;
  }

  /** Namespace job1 of 2 processes: its job size, and two keys of rank 0. */
  private static void jobOfTwo(DstoreWriter w) {
    w.addNamespace("job1", 2);
    w.store("job1", Proc.RANK_WILDCARD, values("pmix.job.size", Value.of(2)));
    w.store("job1", 0, values("k.str", Value.of("hello"), "k.i64", Value.of(-5)));
  }

  private static List<String> files(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  void whatIsWrittenIsReadBackAndReplacementsWin(GdsKind kind) throws IOException {
    try (DstoreWriter w = writer(kind, Map.of())) {
      jobOfTwo(w);
      w.store("job1", 1, values("k.str", Value.of("other"), "k.bool", Value.of(true)));
      // Same size: in place; other size: invalidated and appended; a new key: a second run.
      w.store("job1", 0, values("k.str", Value.of("HELLO"), "k.i64", Value.of(123456789012L),
          "k.new", Value.of("x")));
      try (DstoreReader r =
          DstoreReader.attach(kind, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        assertEquals(Value.of(2),
            found(r.fetch(Proc.wildcard("job1"), "pmix.job.size")));
        Proc p0 = new Proc("job1", 0);
        assertEquals(Value.of("HELLO"), found(r.fetch(p0, "k.str")));
        assertEquals(Value.of(123456789012L), found(r.fetch(p0, "k.i64")));
        assertEquals(Value.of("x"), found(r.fetch(p0, "k.new")));
        assertEquals(3, r.fetchRecords(p0).orElseThrow().size());
        assertEquals(Value.of(true), found(r.fetch(new Proc("job1", 1), "k.bool")));
        assertInstanceOf(GdsModule.Fetched.NoKey.class, r.fetch(p0, "k.none"));
        assertInstanceOf(GdsModule.Fetched.NoProc.class, r.fetch(new Proc("job1", 7), "k.str"));
        assertEquals(Optional.empty(), r.fetchAll(new Proc("nope", 0)));
      }
    }
  }

  /**
   * What a thread that must not wait reads (the progress thread, a client's job data at init): the
   * same records an ordinary read gives, each process's in turn, nothing for a process without
   * data.
   */
  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  void aReadThatNeedNotWaitIsMadeAtOnce(GdsKind kind) throws IOException {
    try (DstoreWriter w = writer(kind, Map.of())) {
      jobOfTwo(w);
      try (DstoreReader r =
          DstoreReader.attach(kind, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        List<Proc> procs = List.of(Proc.wildcard("job1"), new Proc("job1", 0), new Proc("job1", 1));
        List<Optional<List<Info>>> now = new ArrayList<>();
        assertTrue(
            r.readIfFree(
                m -> {
                  for (Proc p : procs) {
                    now.add(m.fetchRecords(p));
                  }
                }));
        assertEquals(
            List.of(r.fetchRecords(procs.get(0)), r.fetchRecords(procs.get(1)), Optional.empty()),
            now);
        assertEquals(2, now.get(1).orElseThrow().size());
        // A key, and a key a process lacks, as an ordinary fetch gives them.
        List<GdsModule.Fetched> keys = new ArrayList<>();
        assertTrue(
            r.readIfFree(
                m -> {
                  keys.add(m.fetch(procs.get(1), "k.str"));
                  keys.add(m.fetch(procs.get(1), "k.none"));
                }));
        assertEquals(List.of(r.fetch(procs.get(1), "k.str"), new GdsModule.Fetched.NoKey()), keys);
      }
    }
  }

  /**
   * A read that fails within {@link DstoreReader#readIfFree} (here a proc a dstore cannot hold)
   * throws out of it and leaves both locks free: a read by another thread is made at once after.
   */
  @Test
  @Timeout(60)
  void aReadThatFailsWithinLeavesTheLocksFree() throws Exception {
    try (DstoreWriter w = writer(GdsKind.DS21, Map.of())) {
      jobOfTwo(w);
      try (DstoreReader r =
          DstoreReader.attach(GdsKind.DS21, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        assertThrows(
            IllegalArgumentException.class,
            () ->
                r.readIfFree(
                    m -> {
                      var unused = m.fetchRecords(new Proc("job1", Proc.RANK_LOCAL_NODE));
                    }));
        java.util.concurrent.ExecutorService other =
            java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
          List<GdsModule.Fetched> got = new java.util.concurrent.CopyOnWriteArrayList<>();
          assertTrue(
              other.submit(() -> r.readIfFree(m -> got.add(m.fetch(new Proc("job1", 0), "k.str"))))
                  .get());
          assertInstanceOf(GdsModule.Fetched.Found.class, got.get(0));
          assertInstanceOf(
              GdsModule.Fetched.Found.class,
              other.submit(() -> r.fetch(new Proc("job1", 0), "k.str")).get());
        } finally {
          other.shutdownNow();
        }
      }
    }
  }

  /**
   * A read that would have to wait for the lock is not made: here another thread of this process
   * holds the ds21 lock slot, as a reader of a caller's get would; once it is free, the read is.
   */
  @Test
  @Timeout(60)
  void aReadThatWouldWaitIsNotMade() throws Exception {
    try (DstoreWriter w = writer(GdsKind.DS21, Map.of())) {
      w.addNamespace("job1", 2);
      w.store("job1", Proc.RANK_WILDCARD, values("pmix.job.size", Value.of(2)));
      try (DstoreReader r =
          DstoreReader.attach(GdsKind.DS21, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        List<Proc> job = List.of(Proc.wildcard("job1"));
        java.util.concurrent.ExecutorService other =
            java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
          List<Optional<List<Info>>> now = new java.util.concurrent.CopyOnWriteArrayList<>();
          try (HeldReaderLock held = HeldReaderLock.take(w.directory(), "job1")) {
            assertFalse(
                other.submit(() -> r.readIfFree(m -> now.add(m.fetchRecords(job.get(0))))).get());
            assertEquals(List.of(), now, "read nothing");
          }
          assertTrue(
              other.submit(() -> r.readIfFree(m -> now.add(m.fetchRecords(job.get(0))))).get());
          assertEquals(List.of(r.fetchRecords(job.get(0))), now);
        } finally {
          other.shutdownNow();
        }
      }
    }
  }

  /**
   * A write that must not wait (the server's progress thread's): with every reader lock free the
   * lock is taken at once and what is written under it is read back; while a reader holds its
   * lock it is not taken, the store is not retired for it, and the reader's lock is not taken
   * over; once the reader lets go, it is. ds12 likewise with its rwlock read-held.
   */
  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  @Timeout(60)
  void aWriteThatWouldWaitIsNotMade(GdsKind kind) throws Exception {
    try (DstoreWriter w = writer(kind, Map.of())) {
      jobOfTwo(w);
      DstoreWriter.Held now = w.lockIfFree();
      assertNotNull(now);
      w.storeAll(
          List.of(new DstoreWriter.Write("job1", 1, values("k.now", Value.of("at once")))),
          (x, e) -> fail("write failed: " + e),
          now);
      try (DstoreReader r =
          DstoreReader.attach(kind, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        // The lock was released: a reader that waits for it gets in.
        assertEquals(Value.of("at once"), found(r.fetch(new Proc("job1", 1), "k.now")));
      }
      try (HeldReaderLock held =
          kind == GdsKind.DS21
              ? HeldReaderLock.take(w.directory(), "job1")
              : HeldReaderLock.takeDs12(w.directory())) {
        assertNull(w.lockIfFree());
        assertNull(w.lockIfFree(), "tried again: still held, nothing left half taken");
        assertFalse(w.retired());
      }
      DstoreWriter.Held after = w.lockIfFree();
      assertNotNull(after);
      w.unlock(after);
      w.store("job1", 1, values("k.later", Value.of(3)));
      try (DstoreReader r =
          DstoreReader.attach(kind, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        assertEquals(Value.of(3), found(r.fetch(new Proc("job1", 1), "k.later")));
      }
    }
  }

  /**
   * A search for a key steps over ds21 records by the byte sum each stores, as libpmix's own
   * search does: keys with the same sum (an anagram, and a key extending another by bytes that sum
   * to 0) are still told apart, each found with its own value, and a non-ASCII key is found by its
   * bytes whatever sum its record holds (a writer whose C chars are unsigned, as on aarch64,
   * stores another sum for it).
   */
  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  void keysWithTheSameByteSumAreToldApart(GdsKind kind) throws IOException {
    String twin = "ab\u007f<\u0101"; // 97 + 98 + 127 + 60 - 60 - 127: the sum of "ab"
    String wide = "k\u0101";
    try (DstoreWriter w = writer(kind, Map.of())) {
      w.addNamespace("job1", 1);
      w.store("job1", 0, values("a", Value.of(1), "ab", Value.of(2), "ba", Value.of(3),
          twin, Value.of(4), "abc", Value.of(5), wide, Value.of(6), "zz", Value.of(7)));
      if (kind == GdsKind.DS21) {
        byte[] k = wide.getBytes(StandardCharsets.UTF_8);
        long unsignedSum = 0;
        for (byte b : k) {
          unsignedSum += b & 0xff;
        }
        assertTrue(unsignedSum != DstoreFormat.keyHash(k));
        overwriteHash(w.directory().resolve("smdataseg-job1-0"), k, unsignedSum);
      }
      try (DstoreReader r =
          DstoreReader.attach(kind, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        Proc p0 = new Proc("job1", 0);
        assertEquals(Value.of(1), found(r.fetch(p0, "a")));
        assertEquals(Value.of(2), found(r.fetch(p0, "ab")));
        assertEquals(Value.of(3), found(r.fetch(p0, "ba")));
        assertEquals(Value.of(4), found(r.fetch(p0, twin)));
        assertEquals(Value.of(5), found(r.fetch(p0, "abc")));
        assertEquals(Value.of(6), found(r.fetch(p0, wide)));
        assertEquals(Value.of(7), found(r.fetch(p0, "zz")));
        assertInstanceOf(GdsModule.Fetched.NoKey.class, r.fetch(p0, "b"));
        assertInstanceOf(GdsModule.Fetched.NoKey.class, r.fetch(p0, "ab\u007f"));
      }
    }
  }

  /** Writes {@code sum} into the sum field of the ds21 record of {@code key} in {@code file}. */
  private static void overwriteHash(Path file, byte[] key, long sum) throws IOException {
    byte[] all = Files.readAllBytes(file);
    byte[] withNul = Arrays.copyOf(key, key.length + 1);
    int at = -1;
    for (int i = 16; i + withNul.length <= all.length && at < 0; i++) {
      if (Arrays.equals(all, i, i + withNul.length, withNul, 0, withNul.length)) {
        at = i;
      }
    }
    assertTrue(at >= 16, "the record of the key is in the segment");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, sum);
      assertEquals(8, ch.write(b, at - 8L));
    }
  }

  /**
   * A batch is written under one lock, in order; a write that cannot be made (a namespace that
   * names a path) is reported and the others still land; a value larger than a data segment is
   * left out, and the older value of its key is no longer read (its readers ask the server).
   */
  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  void aBatchWritesEveryGoodWriteAndReportsTheBadOnes(GdsKind kind) throws IOException {
    Map<String, String> env = Map.of("NS_DATA_SEG_SIZE", "4096");
    try (DstoreWriter w = writer(kind, env)) {
      w.addNamespace("job1", 2);
      w.store("job1", 1, values("k.big", Value.of("small for now")));
      List<DstoreWriter.Write> batch =
          List.of(
              new DstoreWriter.Write("job1", 0, values("k.a", Value.of("first"))),
              new DstoreWriter.Write("../escape", 0, values("k.a", Value.of("x"))),
              new DstoreWriter.Write("job1", 1, values("k.big", Value.of(new byte[8192]))),
              new DstoreWriter.Write("job1", 0, values("k.a", Value.of("again"))),
              new DstoreWriter.Write("job1", 1, values("k.b", Value.of(7))));
      List<String> failed = new java.util.ArrayList<>();
      w.storeAll(batch, (x, e) -> failed.add(x.nspace() + ":" + x.rank() + " "
          + ((io.pmix.common.PmixException) e).status().name()));
      assertEquals(List.of("../escape:0 PMIX_ERR_BAD_PARAM"), failed);
      try (DstoreReader r =
          DstoreReader.attach(kind, w.directory(), "job1", WireFormat.DEFAULT, T)) {
        assertEquals(Value.of("again"), found(r.fetch(new Proc("job1", 0), "k.a")));
        assertEquals(Value.of(7), found(r.fetch(new Proc("job1", 1), "k.b")));
        assertInstanceOf(GdsModule.Fetched.NoKey.class, r.fetch(new Proc("job1", 1), "k.big"));
      }
    }
  }

  /**
   * A server writes one batch to each store it serves; the batch keeps each value's packed form, so
   * the stores must each read back the values in their own format: ds21 and ds12 of the default
   * format, and a store of the fully described one given the same writes after them.
   */
  @Test
  void oneBatchWrittenToSeveralStoresIsReadFromEachInItsFormat() throws IOException {
    WireFormat described = WireFormat.of(io.pmix.common.codec.BufferType.FULLY_DESC);
    List<DstoreWriter.Write> batch =
        List.of(
            new DstoreWriter.Write("job1", 0, values("k.a", Value.of("one"), "k.b", Value.of(2))),
            new DstoreWriter.Write("job1", 1, values("k.blob", Value.of(new byte[1024]))));
    record Store(GdsKind kind, WireFormat format, String dir) {}
    for (Store st :
        List.of(
            new Store(GdsKind.DS21, WireFormat.DEFAULT, "a"),
            new Store(GdsKind.DS12, WireFormat.DEFAULT, "b"),
            new Store(GdsKind.DS21, described, "c"))) {
      try (DstoreWriter w =
          DstoreWriter.create(st.kind(), tmp.resolve(st.dir()), st.format(), T, Map.of())) {
        w.addNamespace("job1", 2);
        w.storeAll(batch, (x, e) -> {
          throw e;
        });
        try (DstoreReader r =
            DstoreReader.attach(st.kind(), w.directory(), "job1", st.format(), T)) {
          assertEquals(Value.of("one"), found(r.fetch(new Proc("job1", 0), "k.a")), st.toString());
          assertEquals(Value.of(2), found(r.fetch(new Proc("job1", 0), "k.b")), st.toString());
          assertEquals(
              Value.of(new byte[1024]), found(r.fetch(new Proc("job1", 1), "k.blob")), st.toString());
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  void manySmallSegmentsAndManyNamespaces(GdsKind kind) throws IOException {
    Map<String, String> env = Map.of("NS_DATA_SEG_SIZE", "4096", "INITIAL_SEG_SIZE", "4096");
    try (DstoreWriter w = writer(kind, env)) {
      for (int n = 0; n < 20; n++) {
        w.addNamespace("ns" + n, 1);
      }
      for (int round = 0; round < 40; round++) {
        for (int n = 0; n < 20; n++) {
          w.store("ns" + n, round % 3, values("key." + round, Value.of("v".repeat(50) + round)));
        }
      }
      List<String> names = files(w.directory());
      assertTrue(names.contains("initial-pmix_shared-segment-1"), names::toString);
      assertTrue(names.contains("smdataseg-ns0-1"), names::toString);
      for (int n = 0; n < 20; n += 7) {
        try (DstoreReader r =
            DstoreReader.attach(kind, w.directory(), "ns" + n, WireFormat.DEFAULT, T)) {
          for (int round = 0; round < 40; round++) {
            assertEquals(Value.of("v".repeat(50) + round),
                found(r.fetch(new Proc("ns" + n, round % 3), "key." + round)));
          }
          List<Info> recs = r.fetchRecords(new Proc("ns" + n, 0)).orElseThrow();
          assertEquals(14, recs.size());
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = GdsKind.class, names = {"DS21", "DS12"})
  void removalLeavesNothingOfTheNamespaceAndCloseNothingAtAll(GdsKind kind) throws IOException {
    Path dir;
    try (DstoreWriter w = writer(kind, Map.of())) {
      dir = w.directory();
      w.addNamespace("gone", 2);
      w.addNamespace("stays", 2);
      w.store("gone", 0, values("a", Value.of("1")));
      w.store("stays", 0, values("a", Value.of("2")));
      w.removeNamespace("gone");
      List<String> names = files(dir);
      assertTrue(names.stream().noneMatch(f -> f.contains("gone")), names::toString);
      byte[] initial = Files.readAllBytes(dir.resolve("initial-pmix_shared-segment-0"));
      assertFalse(new String(initial, java.nio.charset.StandardCharsets.ISO_8859_1).contains("gone"));
      // The freed table slot goes to the next namespace; the other one is intact.
      w.addNamespace("later", 1);
      w.store("later", 0, values("b", Value.of("3")));
      try (DstoreReader r =
          DstoreReader.attach(kind, dir, "stays", WireFormat.DEFAULT, T)) {
        assertEquals(Value.of("2"), found(r.fetch(new Proc("stays", 0), "a")));
        assertEquals(Value.of("3"), found(r.fetch(new Proc("later", 0), "b")));
        assertInstanceOf(GdsModule.Fetched.NoProc.class, r.fetch(new Proc("gone", 0), "a"));
      }
    }
    assertFalse(Files.exists(dir));
  }

  private static Value found(GdsModule.Fetched f) {
    return assertInstanceOf(GdsModule.Fetched.Found.class, f).value();
  }
}
