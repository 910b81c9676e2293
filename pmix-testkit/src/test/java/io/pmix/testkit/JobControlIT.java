package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Job control and monitoring of real OpenPMIx 4.2.2 C clients under {@code bin/pmixrun}. {@code
 * PMIx_Job_control} ({@code src/test/c/jctrl_client.c}): the cleanup directives are the server's (a directory each rank
 * registers is gone once the job is over, but for the file it asked to keep), and a directive
 * the launcher does not act on ({@code pmix.jctrl.preempt}) is NOT_SUPPORTED, as PRRTE 3.0.14
 * answers it.
 */
class JobControlIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  @RegisterExtension final PmixTestExtension pmix = new PmixTestExtension();

  @Test
  @Timeout(90)
  void cleanupDirectoriesGoWithTheJobAndPreemptionIsNotSupported(@TempDir Path base)
      throws IOException {
    Path client = CCompiler.compile(Path.of("src/test/c/jctrl_client.c"));
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "30", "--", client.toString(),
            base.toString());
    assertEquals(0, p.exit(), p::describe);
    String out = p.stdout();
    for (int r = 0; r < 2; r++) {
      assertTrue(out.contains("JCTRL " + r + " cleanup 0\n"), p::describe);
      assertTrue(out.contains("JCTRL " + r + " preempt " + Status.ERR_NOT_SUPPORTED.code() + "\n"),
          p::describe);
      assertTrue(out.contains("JCTRL " + r + " fence 0\n"), p::describe);
      assertTrue(out.contains("JCTRL " + r + " finalize 0\n"), p::describe);
      Path top = base.resolve("rank" + r);
      assertFalse(Files.exists(top.resolve("sub")), p::describe);
      assertTrue(Files.exists(top.resolve("keep")), "the ignored file stays\n" + p.describe());
    }
  }

  /**
   * {@code PMIx_Process_monitor} heartbeats ({@code src/test/c/hb_client.c}): the server itself
   * monitors rank 1, refuses a monitor without a window (BAD_PARAM), and once rank 1 stays silent
   * for more windows than it allowed, rank 0's handler gets MONITOR_HEARTBEAT_ALERT (-109) from
   * rank 1, as under OpenPMIx's simptest 5.0.11 and master (6.1.0's server never runs a
   * heartbeat monitor: docs/libpmix-facts.md).
   */
  @Test
  @Timeout(90)
  void aSilentRankTripsItsHeartbeatMonitor() {
    Path client = CCompiler.compile(Path.of("src/test/c/hb_client.c"));
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "50", "--", client.toString());
    assertEquals(0, p.exit(), p::describe);
    String out = p.stdout();
    for (String line : new String[] {"HB 1 notime -27\n", "HB 1 monitor 0\n",
        "HB 0 alert -109 1\n", "HB 0 alerted-by 1\n", "HB 0 finalize 0\n",
        "HB 1 finalize 0\n"}) {
      assertTrue(out.contains(line), () -> line + p.describe());
    }
    assertFalse(out.contains("HB 1 alert"), p::describe);
  }
}
