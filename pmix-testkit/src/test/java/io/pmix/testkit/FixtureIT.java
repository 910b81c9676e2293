package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.server.ServerSnapshot;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fixture ({@link TestingPmixServer} through {@link PmixTestExtension}): jobs of any command,
 * C programs compiled on demand, Java mains in forked JVMs (one of them a pmix-client program).
 */
class FixtureIT {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final Path CLIENT_SOURCE = Path.of("src/main/c/pmix_client_check.c");

  @RegisterExtension final PmixTestExtension pmix = new PmixTestExtension();

  @Test
  void anyCommand() {
    TestingPmixServer s = pmix.server();
    JobResult r =
        s.job(3)
            .command("sh", "-c", "echo \"$PMIX_RANK $PMIX_NAMESPACE ${PMIX_SERVER_URI41:+uri}\";"
                + " echo to-stderr >&2; case $PMIX_RANK in 1) sleep 1; exit 1;; 2) exit 2;; esac")
            .run(WAIT);
    assertEquals(List.of(0, 1, 2), r.exitCodes(), r::describe);
    assertEquals(2, r.status(), r::describe); // rank 2 ended first
    assertEquals(2, r.firstFailedRank().getAsInt());
    for (int rank = 0; rank < 3; rank++) {
      assertEquals(rank + " " + r.nspace() + " uri\n", r.stdout(rank));
      assertEquals("to-stderr\n", r.stderr(rank));
    }
    // Nobody connected: no peer, and each process was deregistered when it ended (as PRRTE
    // deregisters a local process once it has terminated), so none counts as local any more.
    ServerSnapshot before = r.snapshotBeforeDeregister().orElseThrow();
    assertEquals(0, before.namespace(r.nspace()).orElseThrow().nlocalprocs());
    assertTrue(before.peers().isEmpty());
    assertTrue(r.snapshotAfterDeregister().orElseThrow().namespace(r.nspace()).isEmpty());
  }

  @Test
  void cProgramCompiledOnDemand() {
    JobResult r =
        pmix.server()
            .job(4)
            .cProgram(CLIENT_SOURCE, "-lpthread")
            .args("--strict-scope", "--init", "--get-job-keys", "--put", "--commit",
                "--fence-collect", "--get-peers", "--publish", "--lookup", "--unpublish",
                "--finalize")
            .run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    for (int rank = 0; rank < 4; rank++) {
      List<String> lines = r.stdoutLines(rank);
      assertEquals(10, lines.size(), r::describe);
      assertTrue(lines.stream().allMatch(l -> l.contains(" OK ")), r::describe);
    }
    ServerSnapshot before = r.snapshotBeforeDeregister().orElseThrow();
    assertEquals(4, before.peers().size(), before::toString);
    assertTrue(
        before.peers().stream().allMatch(p -> p.state() == ServerSnapshot.PeerState.TOMBSTONE),
        before::toString);
  }

  @Test
  void javaMainInForkedJvms() {
    JobResult r = pmix.server().job(2).javaMain(EnvMain.class).args("10").run(WAIT);
    assertEquals(List.of(10, 11), r.exitCodes(), r::describe);
    for (int rank = 0; rank < 2; rank++) {
      List<String> lines = r.stdoutLines(rank);
      assertEquals("rank=" + rank, lines.get(0), r::describe);
      assertEquals("nspace=" + r.nspace(), lines.get(1), r::describe);
      assertTrue(lines.get(2).startsWith("uri=") && lines.get(2).contains("tcp4://"), r::describe);
      assertEquals("classpath=" + JobResult.class.getName() + ",Strings", lines.get(3));
    }
  }

  @Test
  void javaPmixClientsUnderTheJavaServer() {
    JobResult r = pmix.server().job(3).javaMain(JavaClientMain.class).run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    for (int rank = 0; rank < 3; rank++) {
      assertEquals(
          List.of("rank " + rank + " of 3 in " + r.nspace(), "ok"), r.stdoutLines(rank),
          r::describe);
    }
  }

  /**
   * One job, two languages: Java clients of pmix-client ({@code JavaDemoClient}) on the even
   * ranks, libpmix C clients ({@code pmix_client_check}) on the odd ranks, each reading the
   * other's data after a collecting fence; the Java rank 0 publishes, the C ranks look it up.
   */
  @Test
  void javaAndCClientsInOneJob() {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String script =
        "if [ $((PMIX_RANK % 2)) -eq 0 ]; then exec \"$0\" -XX:TieredStopAtLevel=1 -cp \"$1\""
            + " io.pmix.testkit.demo.JavaDemoClient; fi; exec \"$2\" --init --put --commit"
            + " --fence-collect --get-peers --publish --lookup --unpublish --finalize";
    JobResult r =
        pmix.server()
            .job(4)
            .command("sh", "-c", script, java, System.getProperty("java.class.path"),
                CCompiler.clientCheck().toString())
            .run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    for (int rank = 0; rank < 4; rank++) {
      List<String> lines = r.stdoutLines(rank);
      assertEquals(9, lines.size(), r::describe);
      assertTrue(lines.stream().allMatch(l -> l.contains(" OK ")), r::describe);
      assertEquals(rank % 2 == 0, lines.get(0).contains("lang=java"), r::describe);
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("STEP lookup OK")
          && l.contains("publisher=" + r.nspace() + ":0")), r::describe);
    }
  }

  @Test
  void twoJobsAtOnceOnOneServer() {
    TestingPmixServer s = pmix.server();
    String[] steps = {"--init", "--put", "--commit", "--fence-collect", "--get-peers",
        "--publish", "--lookup", "--unpublish", "--finalize"};
    RunningJob a = s.job(2).cProgram(CLIENT_SOURCE, "-lpthread").args(steps).start();
    RunningJob b = s.job(3).cProgram(CLIENT_SOURCE, "-lpthread").args(steps).start();
    JobResult ra = a.await(WAIT);
    JobResult rb = b.await(WAIT);
    assertTrue(ra.succeeded(), ra::describe);
    assertTrue(rb.succeeded(), rb::describe);
    assertFalse(ra.nspace().equals(rb.nspace()));
    assertTrue(s.snapshot().namespaces().isEmpty(), () -> s.snapshot().toString());
  }

  @Test
  void abortIsReportedInTheResult() {
    JobResult r =
        pmix.server()
            .job(3)
            .cProgram(CLIENT_SOURCE, "-lpthread")
            .args("--init", "--abort", "--abort-rank", "2")
            .run(WAIT);
    JobResult.Abort a = r.abort().orElseThrow(() -> new AssertionError(r.describe()));
    assertEquals(2, a.rank());
    assertEquals(42, a.status().code());
    assertEquals("pmix_client_check abort test from rank 2", a.message());
    assertEquals(List.of(0, 1, 2), a.targets());
    assertEquals(42, r.status(), r::describe);
  }

  @Test
  void awaitTimeoutKillsTheJob() {
    RunningJob job = pmix.server().job(2).command("sleep", "60").start();
    JobResult r = job.await(Duration.ofSeconds(1));
    assertTrue(r.timedOut(), r::describe);
    assertEquals(JobResult.TIMEOUT_STATUS, r.status());
    assertEquals(List.of(143, 143), r.exitCodes(), r::describe);
    assertFalse(job.isAlive());
  }

  @Test
  void theServerSurvivesGarbageAndServesTheNextJob() throws Exception {
    TestingPmixServer s = pmix.server();
    String uri = s.uri();
    int port = Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1));
    Random random = new Random(42);
    byte[][] garbage = {
      "GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
      new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x7f, 1, 2, 3},
      new byte[1 << 16],
      new byte[0],
    };
    random.nextBytes(garbage[2]);
    for (byte[] g : garbage) {
      try (Socket sock = new Socket()) {
        sock.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
        OutputStream o = sock.getOutputStream();
        o.write(g);
        o.flush();
      }
    }
    JobResult r =
        s.job(2)
            .cProgram(CLIENT_SOURCE, "-lpthread")
            .args("--init", "--put", "--commit", "--fence-collect", "--get-peers", "--finalize")
            .run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    ServerSnapshot before = r.snapshotBeforeDeregister().orElseThrow();
    assertEquals(2, before.peers().size(), before::toString);
    assertFalse(s.server().isShutdown());
  }
}
