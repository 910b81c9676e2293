package io.pmix.common.internal.gds;

import static io.pmix.common.internal.gds.GdsKind.DS12;
import static io.pmix.common.internal.gds.GdsKind.DS21;
import static io.pmix.common.internal.gds.GdsKind.HASH;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** libpmix 4.2.2's scoring of gds modules (docs/gds.md section 1). */
class GdsSelectionTest {
  private static Map<String, String> env(String... kv) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private static final String D21 = "PMIX_DSTORE_21_BASE_PATH";
  private static final String ESH = "PMIX_DSTORE_ESH_BASE_PATH";
  private static final String MOD = "PMIX_GDS_MODULE";

  @Test
  void whatSlurmAndMpirunExportGivesDs21ThenDs12ThenHash() {
    assertEquals(
        List.of(DS21, DS12, HASH),
        GdsSelection.candidates(env(MOD, "ds21,ds12,hash", D21, "/a", ESH, "/b")));
  }

  @Test
  void theOrderInsideTheListDoesNotMatterOnlyTheScores() {
    // ds21 stays a last candidate here (it would try the ESH path); hash comes first anyway.
    assertEquals(
        List.of(DS12, HASH, DS21), GdsSelection.candidates(env(MOD, "ds12,hash", ESH, "/b")));
    assertEquals(
        List.of(DS12, HASH, DS21), GdsSelection.candidates(env(MOD, "hash,ds12", ESH, "/b")));
    assertEquals(
        List.of(DS21, DS12, HASH),
        GdsSelection.candidates(env(MOD, "hash,ds12,ds21", D21, "/a", ESH, "/b")));
  }

  @Test
  void aDstoreWithoutItsBasePathIsNotActive() {
    assertEquals(List.of(HASH), GdsSelection.candidates(env(MOD, "ds21,ds12,hash")));
    assertEquals(
        List.of(DS21, HASH), GdsSelection.candidates(env(MOD, "ds21,ds12,hash", D21, "/a", "PMIX_MCA_gds", "^ds12")));
  }

  @Test
  void ds21FallsBackToTheEshPathAsLibpmixDoes() {
    // A ds12-only server exports just ESH: ds21 stays a candidate and fails to attach there.
    assertEquals(
        List.of(DS21, DS12, HASH), GdsSelection.candidates(env(MOD, "ds21,ds12,hash", ESH, "/b")));
    assertEquals(Optional.of(Path.of("/b")), GdsSelection.basePath(DS21, env(ESH, "/b")));
    assertEquals(
        Optional.of(Path.of("/c")),
        GdsSelection.basePath(DS12, env(ESH, "/b", "PMIX_DSTORE_12_BASE_PATH", "/c")));
    assertEquals(Optional.empty(), GdsSelection.basePath(HASH, env(ESH, "/b")));
  }

  @Test
  void hashNamedAloneWinsUnnamedModulesStayFallbacks() {
    assertEquals(
        List.of(HASH, DS21, DS12), GdsSelection.candidates(env(MOD, "hash", D21, "/a", ESH, "/b")));
    // No list at all: every module scores its default (20, 20, 10).
    assertEquals(List.of(DS21, DS12, HASH), GdsSelection.candidates(env(D21, "/a", ESH, "/b")));
  }

  @Test
  void mcaGdsIncludesOrExcludesComponents() {
    Map<String, String> all = env(MOD, "ds21,ds12,hash", D21, "/a", ESH, "/b");
    all.put("PMIX_MCA_gds", "hash");
    assertEquals(List.of(HASH), GdsSelection.candidates(all));
    all.put("PMIX_MCA_gds", "ds12,hash");
    assertEquals(List.of(DS12, HASH), GdsSelection.candidates(all));
    all.put("PMIX_MCA_gds", "^ds21");
    assertEquals(List.of(DS12, HASH), GdsSelection.candidates(all));
    all.put("PMIX_MCA_gds", "^hash");
    assertEquals(List.of(DS21, DS12), GdsSelection.candidates(all));
  }
}
