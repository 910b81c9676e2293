package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.server.ServerSnapshot;
import io.pmix.server.ServerSnapshot.NamespaceView;
import io.pmix.server.ServerSnapshot.PeerState;
import io.pmix.testkit.demo.JavaDemoClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The example of the README's section "Using the testkit in your tests", verbatim (keep the two
 * in step): uses only the kit's public API, as a test in another project would.
 */
class ReadmeExampleIT {
  // A real PMIx server (pmix-java) per test, closed afterwards; the test fails if it leaves a
  // job or any other child process running.
  @RegisterExtension final PmixTestExtension pmix = new PmixTestExtension();

  @Test
  void fourCClientsExchangeDataUnderTheJavaServer() {
    // 4 ranks of the kit's C client (OpenPMIx 4.2.2's libpmix; compiled once, on demand).
    JobResult r =
        pmix.server()
            .job(4)
            .command(CCompiler.clientCheck().toString(),
                "--init", "--put", "--commit", "--fence-collect", "--get-peers",
                "--publish", "--lookup", "--unpublish", "--finalize")
            .run(Duration.ofSeconds(60));

    assertEquals(List.of(0, 0, 0, 0), r.exitCodes(), r::describe);
    for (int rank = 0; rank < 4; rank++) {
      assertTrue(r.stdoutLines(rank).stream().allMatch(l -> l.startsWith("STEP ")
          && l.contains(" OK ")), r::describe);
    }
    // The server's state when every process had ended, before the job was deregistered: one
    // namespace of 4 local processes, all finalized; 4 client peers, all closed (tombstones).
    ServerSnapshot before = r.snapshotBeforeDeregister().orElseThrow();
    NamespaceView ns = before.namespace(r.nspace()).orElseThrow();
    assertEquals(4, ns.nlocalprocs());
    assertEquals(4, ns.nfinalized());
    assertEquals(4, before.peers().size(), before::toString);
    assertTrue(before.peers().stream().allMatch(p -> p.state() == PeerState.TOMBSTONE),
        before::toString);
    // ... and after deregistration nothing is left.
    ServerSnapshot after = r.snapshotAfterDeregister().orElseThrow();
    assertTrue(after.namespace(r.nspace()).isEmpty(), after::toString);
    assertTrue(after.peers().isEmpty(), after::toString);
  }

  @Test
  void javaClientsToo() {
    // Any main class runs as the ranks, each in a JVM of its own (this JVM's class path):
    // here the kit's JavaDemoClient, written with pmix-client.
    JobResult r = pmix.server().job(2).javaMain(JavaDemoClient.class).run(Duration.ofSeconds(60));

    assertTrue(r.succeeded(), r::describe);
    for (int rank = 0; rank < 2; rank++) {
      List<String> lines = r.stdoutLines(rank);
      assertTrue(lines.get(0).startsWith("STEP init OK"), r::describe);
      assertTrue(lines.get(lines.size() - 1).startsWith("STEP finalize OK"), r::describe);
    }
  }
}
