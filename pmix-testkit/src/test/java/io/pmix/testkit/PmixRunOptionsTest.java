package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PmixRunOptionsTest {
  @Test
  void everyOption() throws Exception {
    PmixRunOptions o =
        PmixRunOptions.parse("-n", "4", "--timeout", "30", "--report-state", "s.json",
            "--tag-output", "--slurm-env", "--tool-support", "--handshake-timeout", "3",
            "--max-pending-handshakes", "256", "--", "prog", "--flag", "x");
    assertEquals(4, o.nprocs());
    assertEquals(Duration.ofSeconds(30), o.timeout());
    assertEquals(Path.of("s.json"), o.reportState());
    assertTrue(o.tagOutput());
    assertTrue(o.slurmEnv());
    assertTrue(o.toolSupport());
    assertEquals(Duration.ofSeconds(3), o.handshakeTimeout());
    assertEquals(256, o.maxPendingHandshakes());
    assertEquals(List.of("prog", "--flag", "x"), o.command());
  }

  @Test
  void defaultsAndCommandWithoutDashes() throws Exception {
    PmixRunOptions o = PmixRunOptions.parse("-np", "2", "prog", "-n", "7");
    assertEquals(2, o.nprocs());
    assertNull(o.timeout());
    assertNull(o.reportState());
    assertFalse(o.tagOutput());
    assertNull(o.slurmEnv());
    assertNull(o.handshakeTimeout()); // the server's defaults
    assertEquals(0, o.maxPendingHandshakes());
    assertEquals(List.of("prog", "-n", "7"), o.command());
    assertEquals(3, PmixRunOptions.parse("-n3", "x").nprocs());
    assertFalse(PmixRunOptions.parse("-n", "1", "--no-slurm-env", "x").slurmEnv());
  }

  @Test
  void mistakes() {
    for (String[] bad :
        List.of(
            new String[] {"--", "prog"},
            new String[] {"-n", "2"},
            new String[] {"-n", "0", "prog"},
            new String[] {"-n", "70000", "prog"},
            new String[] {"-n", "two", "prog"},
            new String[] {"-n"},
            new String[] {"-n", "2", "--timeout", "0", "prog"},
            new String[] {"-n", "2", "--bogus", "prog"},
            new String[] {"-n", "2", "--handshake-timeout", "0", "prog"},
            new String[] {"-n", "2", "--max-pending-handshakes", "0", "prog"},
            new String[] {"-n", "2", "--dataserver", "nohost", "prog"},
            new String[] {"-n", "2", "--dataserver", "h:99999", "prog"},
            new String[] {"-n", "2", "prog", ":"},
            new String[] {"-n", "2", "prog", ":", "prog2"},
            new String[] {"-n", "2", "prog", ":", "-n", "1"},
            new String[] {":", "-n", "1", "prog"},
            new String[] {"-n", "2", "-x", "=v", "prog"},
            new String[] {"-n", "2", "-x"},
            new String[] {"-n", "2", "--output-filename", "d:bogus", "prog"},
            new String[] {"-n", "40000", "a", ":", "-n", "40000", "b"},
            new String[] {"--bind-to", "core", "-n", "2", "prog"},
            new String[] {"--map-by", "nowhere", "-n", "2", "prog"})) {
      assertThrows(PmixRunOptions.UsageException.class, () -> PmixRunOptions.parse(bad),
          () -> String.join(" ", bad));
    }
  }

  /** mpirun's appfile: the apps one a line, the launcher's options on the command line. */
  @Test
  void appfileGivesTheApps(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Path f = dir.resolve("apps");
    java.nio.file.Files.writeString(
        f, "# two apps\n-n 2 -x A=1 ./a x\n\n  -np 1 -- ./b -n y # trailing\n");
    PmixRunOptions o =
        PmixRunOptions.parse(Map.of(), "--tag-output", "--app", f.toString(), "--timeout", "9");
    assertEquals(
        List.of(
            new PmixRunOptions.AppLine(2, List.of("./a", "x"), Map.of("A", "1")),
            new PmixRunOptions.AppLine(1, List.of("./b", "-n", "y"), Map.of())),
        o.apps());
    assertTrue(o.tagOutput());
    assertEquals(Duration.ofSeconds(9), o.timeout());
    for (String[] bad :
        List.of(
            new String[] {"--app", f.toString(), "-n", "2"},
            new String[] {"-x", "A=1", "--app", f.toString()},
            new String[] {"--app", f.toString(), "./c"},
            new String[] {"--app", dir.resolve("none").toString()},
            new String[] {"--app"})) {
      assertThrows(PmixRunOptions.UsageException.class, () -> PmixRunOptions.parse(bad));
    }
    java.nio.file.Files.writeString(f, "# nothing\n");
    assertThrows(PmixRunOptions.UsageException.class, () -> PmixRunOptions.parse("--app",
        f.toString()));
  }

  @Test
  void mpmdAppsWithTheirOwnCountsAndExports() throws Exception {
    PmixRunOptions o =
        PmixRunOptions.parse(Map.of("FROM_ENV", "e"), "--tag-output", "-n", "2", "-x", "A=1",
            "-x", "FROM_ENV", "./a", "x", ":", "-np", "3", "-x", "A=2", "--timeout", "9", "--",
            "./b", "-n", "y", ":", "-n1", "./c");
    assertEquals(3, o.apps().size());
    assertEquals(new PmixRunOptions.AppLine(2, List.of("./a", "x"), Map.of("A", "1", "FROM_ENV", "e")),
        o.apps().get(0));
    assertEquals(new PmixRunOptions.AppLine(3, List.of("./b", "-n", "y"), Map.of("A", "2")),
        o.apps().get(1));
    assertEquals(new PmixRunOptions.AppLine(1, List.of("./c"), Map.of()), o.apps().get(2));
    assertEquals(6, o.nprocs());
    assertEquals(Duration.ofSeconds(9), o.timeout()); // a launcher option, wherever it is
    assertTrue(o.tagOutput());
    // Spawned jobs get every app's exports, the later app winning.
    assertEquals(Map.of("A", "2", "FROM_ENV", "e"), o.exports());
    assertTrue(o.warnings().isEmpty());
    PmixRunOptions w = PmixRunOptions.parse(Map.of(), "-n", "1", "-x", "NOT_SET", "prog");
    assertTrue(w.apps().get(0).env().isEmpty());
    assertEquals(1, w.warnings().size());
    assertTrue(w.warnings().get(0).contains("NOT_SET is not set"), w.warnings()::toString);
  }

  @Test
  void outputFilenameAndVersion() throws Exception {
    PmixRunOptions o = PmixRunOptions.parse("--output-filename", "d", "-n", "1", "prog");
    assertEquals(Path.of("d").toAbsolutePath().resolve("1"), o.outputFiles().jobDir(1));
    assertTrue(o.outputFiles().copy());
    PmixRunOptions n = PmixRunOptions.parse("--output-filename", "/x:nocopy,nojobid", "-n", "1", "p");
    assertEquals(Path.of("/x"), n.outputFiles().jobDir(2));
    assertFalse(n.outputFiles().copy());
    assertEquals("rank.0", Launch.Output.FileOutput.rankDir(0, 9));
    assertEquals("rank.07", Launch.Output.FileOutput.rankDir(7, 10));
    assertEquals("rank.100", Launch.Output.FileOutput.rankDir(100, 101));
    assertTrue(PmixRunOptions.parse("--version").version());
    assertTrue(PmixRunOptions.parse("-V").apps().isEmpty());
    assertTrue(PmixRun.versionText().startsWith("pmixrun (pmix-java) "));
  }

  @Test
  void namespacesNeverStartWithPmix() {
    String p = PmixRun.namespacePrefix("node7", 4242);
    assertEquals("jrun-node7-4242", p);
    assertFalse(p.startsWith("pmix"));
  }

  @Test
  void helpNeedsNothingElse() throws Exception {
    assertTrue(PmixRunOptions.parse("--help").help());
    assertTrue(PmixRunOptions.USAGE.startsWith("usage: pmixrun -n N"));
  }

  @Test
  void rankRanges() {
    assertEquals("0-2,5,7-8", PmixRun.ranges(List.of(8, 0, 1, 2, 5, 7)));
    assertEquals("1 process (rank 4)", PmixRun.processes(List.of(4)));
    assertEquals("32 processes (ranks 0-31)",
        PmixRun.processes(java.util.stream.IntStream.range(0, 32).boxed().toList()));
  }

  @Test
  void mapByNodeOrConsecutive() throws Exception {
    assertTrue(PmixRunOptions.parse("--map-by", "node", "-n", "2", "prog").mapByNode());
    assertTrue(PmixRunOptions.parse("--map-by", "NODE:OVERSUBSCRIBE", "-n", "2", "prog")
        .mapByNode());
    assertFalse(PmixRunOptions.parse("--map-by", "core", "-n", "2", "prog").mapByNode());
    assertFalse(PmixRunOptions.parse("--map-by", "slot", "-n", "2", "prog").mapByNode());
    assertFalse(PmixRunOptions.parse("-n", "2", "prog").mapByNode());
    assertThrows(
        PmixRunOptions.UsageException.class,
        () -> PmixRunOptions.parse("--map-by", "ppr:1:node", "-n", "2", "prog"));
  }

  @Test
  void nestedPlacementConsecutiveOrRoundRobin() {
    assertEquals(List.of(List.of(0, 1), List.of(2, 3, 4), List.of(5, 6)),
        Nested.placement(List.of(2, 3, 2), false));
    // mpirun's --map-by node: round robin, a full node skipped.
    assertEquals(List.of(List.of(0, 3), List.of(1, 4, 6), List.of(2, 5)),
        Nested.placement(List.of(2, 3, 2), true));
    assertEquals(List.of(List.of(0, 2, 3), List.of(1)), Nested.placement(List.of(3, 1), true));
  }

  @Test
  void runDirectoriesAreRecognizedByName() {
    assertEquals(123, PmixRun.runDirectoryPid("pmixrun-123-0"));
    assertEquals(7, PmixRun.runDirectoryPid("pmixrun-7-x-y"));
    for (String other : List.of("pmixrun-12a-0", "pmixrun-123-", "pmixrun--0", "pmixrun-123",
        "xpmixrun-1-0", "pmix-1-0", "pmixrun-" + "9".repeat(20) + "-0", "pmixrun-٣-0")) {
      assertEquals(-1, PmixRun.runDirectoryPid(other), other);
    }
  }

  @Test
  void mpiDetectionIgnoresScriptsAndMissingFiles() {
    assertFalse(PmixRun.linkedAgainstMpi("/nonexistent/x"));
    assertFalse(PmixRun.linkedAgainstMpi("sh")); // an ELF, but no libmpi
  }
}
