package io.pmix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.BufferType;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.CPrograms;
import io.pmix.common.testing.TestTiming;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Real OpenPMIx 4.2.2 C clients, compiled at test time, under a Java {@link PMIxServer}. */
class ServerClientIT {
  private static final Duration WAIT = TestTiming.seconds(60);
  private static Path client;

  private PMIxServer server;

  @BeforeAll
  static void compile() {
    client = CPrograms.compile("src/test/c/server_it_client.c");
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
      assertTrue(server.isTerminated());
    }
  }

  private List<Launched> launchJob(String nspace, int n, String mode, BufferType type)
      throws Exception {
    return launchJob(nspace, n, mode, type, false);
  }

  private List<Launched> launchJob(
      String nspace, int n, String mode, BufferType type, boolean netty) throws Exception {
    server =
        PMIxServer.init(
            new HostModule() {},
            ServerOptions.builder()
                .hostname("itnode")
                .childBufferType(type)
                .nettyTransport(netty)
                .build());
    int uid = Launched.myUid();
    int gid = Launched.myGid();
    List<Info> infos =
        List.of(
            Info.of(Keys.JOB_SIZE, Value.uint32(n)),
            Info.of(Keys.UNIV_SIZE, Value.uint32(n)),
            Info.of(Keys.JOBID, Value.of("job-" + nspace)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace(nspace, n, infos));
    for (int r = 0; r < n; r++) {
      assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of(nspace, r), uid, gid));
    }
    List<Launched> procs = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      procs.add(Launched.start(client, server.setupFork(Proc.of(nspace, r)), mode));
    }
    return procs;
  }

  private static void assertExit(Launched p, int expected) throws Exception {
    int rc = p.await(WAIT);
    assertEquals(expected, rc, () -> {
      try {
        return "exit " + rc + "\nstdout:\n" + p.stdout() + "\nstderr:\n" + p.stderr();
      } catch (Exception e) {
        return "exit " + rc;
      }
    });
  }

  @ParameterizedTest(name = "N={0}")
  @ValueSource(ints = {1, 4})
  void initJobKeysPutCommitFenceGetFinalize(int n) throws Exception {
    runFull(n, BufferType.NON_DESC);
  }

  @Test
  void fullyDescribedBuffers() throws Exception {
    runFull(3, BufferType.FULLY_DESC);
  }

  /** The same job on Netty's transport, the fallback where libpmixjava does not load. */
  @Test
  void onNettysTransport() throws Exception {
    runFull(4, BufferType.NON_DESC, true);
  }

  private void runFull(int n, BufferType type) throws Exception {
    runFull(n, type, false);
  }

  private void runFull(int n, BufferType type, boolean netty) throws Exception {
    String nspace = "itjob" + n;
    List<Launched> procs = launchJob(nspace, n, "full", type, netty);
    StringBuilder peers = new StringBuilder();
    for (int r = 0; r < n; r++) {
      peers.append(r == 0 ? "" : ",").append(r);
    }
    for (int r = 0; r < n; r++) {
      Launched p = procs.get(r);
      assertExit(p, 0);
      Map<String, String> v = p.values();
      assertEquals(nspace, v.get("nspace"));
      assertEquals(Integer.toString(r), v.get("rank"));
      assertEquals(Integer.toString(n), v.get("job_size"));
      assertEquals(Integer.toString(n), v.get("univ_size"));
      assertEquals(Integer.toString(n), v.get("local_size"));
      assertEquals(peers.toString(), v.get("local_peers"));
      assertEquals(Integer.toString(r), v.get("local_rank"));
      assertEquals(Integer.toString(r), v.get("node_rank"));
      assertEquals("itnode", v.get("hostname"));
      assertEquals("job-" + nspace, v.get("jobid"));
      assertEquals("0", v.get("local_leader"));
      assertEquals("1", v.get("num_nodes"));
      for (int q = 0; q < n; q++) {
        assertEquals("ok", v.get("peer" + q), "rank " + r + " reading rank " + q);
      }
      assertTrue(p.stdout().contains("\ndone\n"), p.stdout());
      p.cleanup();
    }
    // Finalized and gone: every peer is a tombstone, counted as finalized, no live process.
    ServerSnapshot s =
        Await.until(
            server::snapshot,
            snap -> snap.peers().stream()
                    .allMatch(pv -> pv.state() == ServerSnapshot.PeerState.TOMBSTONE)
                && snap.peers().size() == n,
            Duration.ofSeconds(10),
            ServerSnapshot::toJson);
    LifecycleInvariants.check(s, LifecycleInvariants.expect().quiescent());
    ServerSnapshot.NamespaceView ns = s.namespace(nspace).orElseThrow();
    assertEquals(n, ns.nfinalized());
    assertEquals(n, ns.nlocalprocs());
    for (ServerSnapshot.RankView rv : ns.ranks().values()) {
      assertEquals(0, rv.procCount());
      assertTrue(rv.peerIndex() >= 0);
    }
  }
}
