package io.pmix.testkit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tests that misbehave on purpose, run by {@link PmixTestExtensionIT} through the JUnit launcher
 * (never by the build itself: they only run with the system property below set).
 */
@EnabledIfSystemProperty(named = "pmix.testkit.scenarios", matches = "true")
@ExtendWith(PmixTestExtension.class)
class ExtensionScenarios {
  /** The pids the scenarios started, for the checks afterwards. */
  static final List<Long> PIDS = new ArrayList<>();

  @Test
  void leavesAJobRunning(TestingPmixServer pmix) {
    RunningJob job = pmix.job(2).command("sleep", "60").start();
    PIDS.addAll(job.pids());
  }

  @Test
  void leavesAChildProcessRunning() throws IOException {
    Process p = new ProcessBuilder("sleep", "60").start();
    PIDS.add(p.pid());
  }

  @Test
  void cleansUpAfterItself(TestingPmixServer pmix) {
    JobResult r = pmix.job(1).command("true").run(java.time.Duration.ofSeconds(30));
    if (!r.succeeded()) {
      throw new AssertionError(r.describe());
    }
  }

  @Test
  void lacksTheCToolchain() {
    throw new CToolchainUnavailableException("gcc is not available (scenario)");
  }
}
