package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.testing.Await;
import io.pmix.tool.PMIxTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
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

  // ---- PMIx_Job_control of other processes (src/test/c/jctrl_kill.c), as PRRTE 3.0.14 acts ----

  private static PmixRunProcess kill(String action, String... more) {
    Path client = CCompiler.compile(Path.of("src/test/c/jctrl_kill.c"));
    String[] head = {"-n", "3", "--timeout", "50", "--", client.toString(), action};
    String[] args = Stream.concat(Stream.of(head), Stream.of(more)).toArray(String[]::new);
    return PmixRunProcess.run(LIMIT, args);
  }

  /**
   * Rank 0 has the launcher kill rank 1, which waits in pause(): the answer is SUCCESS, rank 1
   * goes, the others fence among themselves and finalize, and the job ends with status 0 (as
   * under prterun: a process killed on request is no failure, and nobody is told).
   */
  @Test
  @Timeout(90)
  void aRankHasTheLauncherKillAnother() {
    PmixRunProcess p = kill("kill:1", "1");
    assertEquals(0, p.exit(), p::describe);
    String out = p.stdout();
    for (String line : new String[] {"JCTRL 0 kill:1 0\n", "JCTRL 1 waiting\n",
        "JCTRL 0 fence2 0\n", "JCTRL 2 fence2 0\n", "JCTRL 0 finalize 0\n",
        "JCTRL 2 finalize 0\n"}) {
      assertTrue(out.contains(line), () -> line + p.describe());
    }
    assertFalse(out.contains("EVENT"), p::describe);
    assertTrue(p.stderr().contains("asked (job control) to kill 1 process (rank 1)"),
        p::describe);
  }

  /**
   * A rank killed on request before it ever connected (here a process that never will) no
   * longer holds the others' fences: the launcher tells the server it is gone, and rank 0's
   * fence over the whole job returns instead of waiting for it until the job's timeout. (Under
   * prterun this fence waits: libpmix's server counts such a rank as finalized but its fences
   * still wait for it.)
   */
  @Test
  @Timeout(90)
  void aRankKilledBeforeItConnectedDoesNotHoldTheFence() {
    Path client = CCompiler.compile(Path.of("src/test/c/jctrl_kill.c"));
    PmixRunProcess p = PmixRunProcess.run(LIMIT, "-n", "1", "--timeout", "50", "--",
        client.toString(), "+kill:1", ":", "-n", "1", "sleep", "300");
    assertEquals(0, p.exit(), p::describe);
    String out = p.stdout();
    assertTrue(out.contains("JCTRL 0 +kill:1 0\n"), p::describe);
    // PARTIAL_SUCCESS if the fence was waiting when the kill took effect, else SUCCESS: the
    // rank no longer counts in the job's fences.
    assertTrue(out.contains("JCTRL 0 fence1 " + Status.ERR_PARTIAL_SUCCESS.code() + "\n")
        || out.contains("JCTRL 0 fence1 0\n"), p::describe);
    assertTrue(out.contains("JCTRL 0 fence2 0\n"), p::describe);
    assertTrue(out.contains("JCTRL 0 finalize 0\n"), p::describe);
    assertTrue(p.stderr().contains("asked (job control) to kill 1 process (rank 1)"),
        p::describe);
  }

  /** A WILDCARD target is the whole job, the caller included; still status 0, as prterun's. */
  @Test
  @Timeout(90)
  void aWildcardKillTakesTheWholeJobAndTheCaller() {
    PmixRunProcess p = kill("kill:*", "1");
    assertEquals(0, p.exit(), p::describe);
    // The caller may be gone before it prints its answer, and another rank before the kill.
    assertTrue(p.stderr().contains("asked (job control) to kill "), p::describe);
    assertFalse(p.stdout().contains("JCTRL 1 finalize"), p::describe);
  }

  /**
   * A signal goes to the named rank; one that kills it is a death like any other: the job fails
   * with 128+signal (prterun: 138 too).
   */
  @Test
  @Timeout(90)
  void aSignalThatKillsIsADeath() {
    PmixRunProcess p = kill("signal:1:10", "1");
    assertEquals(138, p.exit(), p::describe);
    assertTrue(p.stdout().contains("JCTRL 0 signal:1:10 0\n"), p::describe);
    assertTrue(p.stderr().contains("to send signal 10 to 1 process (rank 1)"), p::describe);
    assertTrue(p.stderr().contains("rank 1 (pid"), p::describe);
  }

  /** Terminate without targets stops every job; status 0 (prterun halts its DVM, exit 0). */
  @Test
  @Timeout(90)
  void terminateStopsTheJobs() {
    PmixRunProcess p = kill("term", "1");
    assertEquals(0, p.exit(), p::describe);
    assertTrue(p.stderr().contains("to terminate: killing "), p::describe);
    assertTrue(p.stderr().contains("stopped (job control request of "), p::describe);
  }

  /**
   * What the launcher does not do is refused at once and the job runs on: terminate with
   * targets (NOT_SUPPORTED, as PRRTE), and targets naming no process of it (NOT_FOUND; PRRTE
   * skips them and answers success).
   */
  @Test
  @Timeout(90)
  void terminateWithTargetsIsNotSupportedAndUnknownTargetsAreNotFound() {
    PmixRunProcess p = kill("term:1");
    assertEquals(0, p.exit(), p::describe);
    assertTrue(p.stdout().contains("JCTRL 0 term:1 " + Status.ERR_NOT_SUPPORTED.code() + "\n"),
        p::describe);
    PmixRunProcess q = kill("kill:7");
    assertEquals(0, q.exit(), q::describe);
    assertTrue(q.stdout().contains("JCTRL 0 kill:7 " + Status.ERR_NOT_FOUND.code() + "\n"),
        q::describe);
    for (int r = 0; r < 3; r++) {
      assertTrue(p.stdout().contains("JCTRL " + r + " finalize 0\n"), p::describe);
      assertTrue(q.stdout().contains("JCTRL " + r + " finalize 0\n"), q::describe);
    }
  }

  /**
   * Our tool ({@link PMIxTool}, attached by pid to pmixrun {@code --tool-support}) has the
   * launcher kill rank 1 of its job; the job then ends with status 0.
   */
  @Test
  @Timeout(120)
  void aToolHasTheLauncherKillARank(@TempDir Path tmp) throws Exception {
    Path client = CCompiler.compile(Path.of("src/test/c/jctrl_kill.c"));
    try (PmixRunProcess p =
        PmixRunProcess.start(List.of(), Map.of("TMPDIR", tmp.toString()), "--tool-support",
            "-n", "2", "--timeout", "60", "--", client.toString(), "none", "1")) {
      long pid = p.process.pid();
      String suffix = ".tool." + pid;
      Await.condition("pmixrun's rendezvous file",
          () -> {
            try (Stream<Path> s = Files.walk(tmp)) {
              return s.anyMatch(f -> f.getFileName().toString().endsWith(suffix));
            } catch (IOException | java.io.UncheckedIOException e) {
              return false; // a directory went while we looked
            }
          },
          Timing.scaled(Duration.ofSeconds(60)));
      // Rank 1 past the first fence and waiting, as the test means it: a rank killed before it
      // connected would leave rank 0's first fence waiting for it (the launcher does not tell
      // the server of a death it asked for; found when this test killed too early in CI).
      Await.condition("rank 1 waiting",
          () -> p.stdout().contains("JCTRL 1 waiting\n"), Timing.scaled(Duration.ofSeconds(60)));
      String host = Files.readString(Path.of("/proc/sys/kernel/hostname"),
          StandardCharsets.UTF_8).trim();
      String nspace = PmixRun.namespacePrefix(host, pid) + "@1";
      PMIxTool.init(Info.of(Keys.SERVER_PIDINFO, Value.pid(Math.toIntExact(pid))),
          Info.of(Keys.SYSTEM_TMPDIR, Value.of(tmp.toString())));
      try {
        List<Info> results =
            PMIxTool.jobControl(List.of(Proc.of(nspace, 1)),
                Info.of(Keys.JOB_CTRL_KILL, Value.of(true)));
        assertTrue(results.isEmpty(), results::toString);
      } finally {
        PMIxTool.finalize();
      }
      p.await(LIMIT);
      assertEquals(0, p.exit(), p::describe);
      assertTrue(p.stdout().contains("JCTRL 0 finalize 0\n"), p::describe);
      assertTrue(p.stderr().contains("asked (job control) to kill 1 process (rank 1)"),
          p::describe);
    }
  }
}
