package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PmixRunOptionsTest {
  @Test
  void everyOption() throws Exception {
    PmixRunOptions o =
        PmixRunOptions.parse("-n", "4", "--timeout", "30", "--report-state", "s.json",
            "--tag-output", "--slurm-env", "--tool-support", "--", "prog", "--flag", "x");
    assertEquals(4, o.nprocs());
    assertEquals(Duration.ofSeconds(30), o.timeout());
    assertEquals(Path.of("s.json"), o.reportState());
    assertTrue(o.tagOutput());
    assertTrue(o.slurmEnv());
    assertTrue(o.toolSupport());
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
            new String[] {"-n", "2", "--dataserver", "nohost", "prog"},
            new String[] {"-n", "2", "--dataserver", "h:99999", "prog"})) {
      assertThrows(PmixRunOptions.UsageException.class, () -> PmixRunOptions.parse(bad),
          () -> String.join(" ", bad));
    }
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
  void mpiDetectionIgnoresScriptsAndMissingFiles() {
    assertFalse(PmixRun.linkedAgainstMpi("/nonexistent/x"));
    assertFalse(PmixRun.linkedAgainstMpi("sh")); // an ELF, but no libmpi
  }
}
