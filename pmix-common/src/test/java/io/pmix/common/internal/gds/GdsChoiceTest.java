package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.WireFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's choice of its gds module (docs/gds.md section 1), over stores a real libpmix 4.2.2
 * server wrote: the best candidate that attaches, the next one when it does not (no files, no
 * free ds21 slot), hash at the end, and hash under OpenPMIx 5.x servers whatever they export.
 */
class GdsChoiceTest {
  private static final Duration LOCK = Duration.ofSeconds(5);

  private static Map<String, String> env(Path ds21, Path ds12, String modules) {
    Map<String, String> m = new HashMap<>();
    m.put("PMIX_GDS_MODULE", modules);
    m.put("PMIX_DSTORE_21_BASE_PATH", ds21.toString());
    m.put("PMIX_DSTORE_ESH_BASE_PATH", ds12.toString());
    return m;
  }

  private static Path store(Path dir, String kind, boolean freeSlots) throws IOException {
    Path d = dir.resolve(kind);
    Map<String, byte[]> files = GoldenStores.load(kind);
    if (freeSlots && kind.equals("ds21")) {
      GoldenStores.freeSlots(files.get("smlockseg-cjob"));
    }
    GoldenStores.write(d, files);
    return d;
  }

  private static GdsChoice.Chosen choose(Map<String, String> env) {
    return GdsChoice.choose(env, "cjob", WireFormat.DEFAULT, LOCK);
  }

  @Test
  void ds21WhenItAttachesAndItReadsTheStore(@TempDir Path dir) throws IOException {
    GdsChoice.Chosen c =
        choose(env(store(dir, "ds21", true), store(dir, "ds12", false), "ds21,ds12,hash"));
    try (DstoreReader r = c.reader().orElseThrow()) {
      assertEquals(GdsKind.DS21, c.kind());
      assertEquals("ds21", r.name());
      assertEquals(List.of(), c.skipped());
      List<Info> job = r.fetchRecords(Proc.wildcard("cjob")).orElseThrow();
      assertEquals(GoldenStores.WILDCARD_KEYS.size() + 1, job.size(), job::toString);
      assertEquals(
          2, job.stream().filter(i -> i.key().equals("pmix.pdata")).count(), "one per rank");
    }
  }

  @Test
  void ds12WhenDs21HasNoFreeSlot(@TempDir Path dir) throws IOException {
    // Both slots of the dumped lock segment are held (by the two C clients that ran).
    GdsChoice.Chosen c =
        choose(env(store(dir, "ds21", false), store(dir, "ds12", false), "ds21,ds12,hash"));
    try (DstoreReader r = c.reader().orElseThrow()) {
      assertEquals(GdsKind.DS12, c.kind());
      assertEquals(1, c.skipped().size(), c.skipped()::toString);
      assertTrue(c.skipped().get(0).startsWith("ds21 at "), c.skipped()::toString);
      assertTrue(r.fetch(Proc.of("cjob", 1), "test.gstr") instanceof GdsModule.Fetched.Found);
    }
  }

  @Test
  void hashWhenNoStoreAttaches(@TempDir Path dir) {
    GdsChoice.Chosen c =
        choose(env(dir.resolve("none21"), dir.resolve("none12"), "ds21,ds12,hash"));
    assertEquals(GdsKind.HASH, c.kind());
    assertTrue(c.reader().isEmpty());
    assertEquals(2, c.skipped().size(), c.skipped()::toString);
  }

  @Test
  void hashWhenTheServerOffersOnlyHash(@TempDir Path dir) throws IOException {
    // Our server, or a libpmix one with PMIX_MCA_gds=hash: a stray base path does not matter.
    GdsChoice.Chosen c = choose(env(store(dir, "ds21", true), store(dir, "ds12", false), "hash"));
    assertEquals(GdsKind.HASH, c.kind());
    assertEquals(List.of(), c.skipped());
  }

  @Test
  void hashUnderLaterServers(@TempDir Path dir) throws IOException {
    Path d21 = store(dir, "ds21", true);
    Path d12 = store(dir, "ds12", false);
    assertEquals(GdsKind.HASH, choose(env(d21, d12, "shmem2,hash")).kind());
    Map<String, String> v5 = env(d21, d12, "ds21,ds12,hash");
    v5.put("PMIX_VERSION", "5.0.11");
    assertEquals(GdsKind.HASH, choose(v5).kind());
    Map<String, String> v4 = env(d21, d12, "ds21,ds12,hash");
    v4.put("PMIX_VERSION", "4.2.2");
    GdsChoice.Chosen c = choose(v4);
    c.reader().ifPresent(DstoreReader::close);
    assertEquals(GdsKind.DS21, c.kind());
  }

  @Test
  void theMcaSelectionExcludesModules(@TempDir Path dir) throws IOException {
    Map<String, String> e =
        env(store(dir, "ds21", true), store(dir, "ds12", false), "ds21,ds12,hash");
    e.put("PMIX_MCA_gds", "^ds21");
    GdsChoice.Chosen c = choose(e);
    c.reader().ifPresent(DstoreReader::close);
    assertEquals(GdsKind.DS12, c.kind());
    e.put("PMIX_MCA_gds", "hash");
    assertEquals(GdsKind.HASH, choose(e).kind());
  }

  @Test
  void versionsAreReadLeniently() {
    assertTrue(GdsChoice.isLaterServer(Map.of("PMIX_VERSION", "6.1.0rc1")));
    assertTrue(!GdsChoice.isLaterServer(Map.of("PMIX_VERSION", "4.2.2")));
    assertTrue(!GdsChoice.isLaterServer(Map.of("PMIX_VERSION", "garbage")));
    assertTrue(!GdsChoice.isLaterServer(Map.of()));
  }
}
