package io.pmix.server;

import static io.pmix.server.Launched.describe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.CPrograms;
import io.pmix.common.testing.TestTiming;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real C clients under a Java server in the harder cases: a client dying before a fence, a get
 * that waits for a later commit, init/finalize cycling, a wrong uid, garbage and aborted
 * handshakes next to good clients, and a job spread over two nodes (host fence and direct modex).
 */
class ServerLifecycleIT {
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

  private void start(HostModule host, ServerOptions.Builder opts) {
    server = PMIxServer.init(host, opts.hostname("itnode").build());
  }

  private List<Launched> launch(String nspace, int n, int uid, String mode) throws Exception {
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(nspace, n, jobInfo(nspace, n)));
    for (int r = 0; r < n; r++) {
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerClient(Proc.of(nspace, r), uid, Launched.myGid()));
    }
    List<Launched> procs = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      procs.add(Launched.start(client, server.setupFork(Proc.of(nspace, r)), mode));
    }
    return procs;
  }

  /** What the test client reads besides the derived keys: size, universe size and job id. */
  private static List<Info> jobInfo(String nspace, int n) {
    return List.of(
        Info.of(Keys.JOB_SIZE, Value.uint32(n)),
        Info.of(Keys.UNIV_SIZE, Value.uint32(n)),
        Info.of(Keys.JOBID, Value.of(nspace)));
  }

  @Test
  void participantDyingDuringFenceFailsTheFenceForTheOthersWithPartialSuccess() throws Exception {
    start(new HostModule() {}, ServerOptions.builder());
    List<Launched> procs = launch("diejob", 3, Launched.myUid(), "die-fence");
    assertEquals(0, procs.get(0).await(WAIT), describe(procs.get(0)));
    for (int r = 1; r < 3; r++) {
      Launched p = procs.get(r);
      assertEquals(0, p.await(WAIT), describe(p));
      // 4.2.2: a participant lost while others remain makes the local fence PARTIAL_SUCCESS.
      assertEquals(
          Integer.toString(Status.ERR_PARTIAL_SUCCESS.code()), p.values().get("fence_status"),
          describe(p));
    }
    ServerSnapshot s = awaitTombstonesOrLost(3);
    LifecycleInvariants.check(s, LifecycleInvariants.expect().quiescent());
    // The dead rank no longer counts as a local process; the two others finalized. Its peer
    // stays inert at the slot the rank's index names (the lost path moves nothing).
    assertEquals(2, s.namespace("diejob").orElseThrow().nlocalprocs());
    assertEquals(2, s.namespace("diejob").orElseThrow().nfinalized());
    assertEquals(0, s.namespace("diejob").orElseThrow().ranks().get(0).procCount());
    int lost = s.namespace("diejob").orElseThrow().ranks().get(0).peerIndex();
    assertEquals(ServerSnapshot.PeerState.LOST, s.peer(lost).orElseThrow().state());
  }

  @Test
  void aFenceOfOthersOrOfAnEmptyNamespaceIsRefusedAtOnceAndAConnectWaitsForItsParticipants()
      throws Exception {
    start(new HostModule() {}, ServerOptions.builder());
    List<Launched> procs = launch("badfence", 2, Launched.myUid(), "bad-fence");
    String refused = Integer.toString(Status.ERR_BAD_PARAM.code());
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
      // libpmix 4.2.2: success at once; TIMEOUT after the 5 s the client gives; no answer ever.
      assertEquals(refused, p.values().get("others_fence"), describe(p));
      assertEquals(refused, p.values().get("empty_fence"), describe(p));
      assertEquals(refused, p.values().get("empty_connect"), describe(p));
      assertEquals("0", p.values().get("connect"), describe(p));
      assertEquals("0", p.values().get("fence"), describe(p));
    }
    // Rank 0 connected naming rank 1 only: it is answered with rank 1, not in its place.
    long called = Long.parseLong(procs.get(1).values().get("called_at"));
    long returned = Long.parseLong(procs.get(0).values().get("returned_at"));
    assertTrue(returned >= called, "rank 0's connect returned before rank 1 called it");
    ServerSnapshot s = awaitTombstones(2);
    LifecycleInvariants.check(s, LifecycleInvariants.expect().quiescent());
  }

  @Test
  void participantDyingBeforeFenceIsNoLongerWaitedFor() throws Exception {
    start(new HostModule() {}, ServerOptions.builder());
    List<Launched> procs = launch("diebefore", 3, Launched.myUid(), "die-before");
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    // As in 4.2.2: the dead client left nlocalprocs before the fence began, so the fence of the
    // two survivors completes normally.
    for (int r = 1; r < 3; r++) {
      assertEquals("0", procs.get(r).values().get("fence_status"), describe(procs.get(r)));
    }
  }

  @Test
  void getOfNotYetCommittedDataWaitsForTheCommit() throws Exception {
    start(new HostModule() {}, ServerOptions.builder());
    List<Launched> procs = launch("earlyjob", 2, Launched.myUid(), "early-get");
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    assertEquals("1001", procs.get(0).values().get("early_get"));
  }

  @Test
  void clientCyclingInitFinalizeReclaimsItsTombstone() throws Exception {
    start(new HostModule() {}, ServerOptions.builder());
    List<Launched> procs = launch("cyclejob", 1, Launched.myUid(), "cycle");
    assertEquals(0, procs.get(0).await(WAIT), describe(procs.get(0)));
    ServerSnapshot s = awaitTombstones(1);
    LifecycleInvariants.check(s, LifecycleInvariants.expect().quiescent());
    ServerSnapshot.NamespaceView ns = s.namespace("cyclejob").orElseThrow();
    // Two cycles, one tombstone: the first cycle's peer was reclaimed at the second init.
    assertEquals(1, s.peers().size());
    assertEquals(1, ns.nfinalized());
    assertEquals(0, ns.ranks().get(0).procCount());
    assertEquals(s.peers().get(0).index(), ns.ranks().get(0).peerIndex());
  }

  @Test
  void clientWhoseUidDiffersFromItsRegistrationIsRefused() throws Exception {
    start(new HostModule() {}, ServerOptions.builder());
    List<Launched> procs = launch("uidjob", 1, Launched.myUid() + 1, "init");
    int rc = procs.get(0).await(WAIT);
    assertEquals(10, rc, describe(procs.get(0))); // step 10: PMIx_Init failed
    assertTrue(server.snapshot().peers().isEmpty());
  }

  @Test
  void garbageAndAbortedHandshakesDoNotDisturbGoodClients() throws Exception {
    start(new HostModule() {}, ServerOptions.builder().handshakeTimeout(Duration.ofSeconds(1)));
    int port = Integer.parseInt(server.uri().substring(server.uri().lastIndexOf(':') + 1));
    InetAddress lo = InetAddress.getLoopbackAddress();

    // A header whose length was written big-endian: 0x33 read as host order is huge.
    Socket bigEndian = new Socket(lo, port);
    bigEndian.getOutputStream().write(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0x33, 0, 0, 0, 0});
    // Random bytes with a plausible length.
    Socket garbage = new Socket(lo, port);
    byte[] junk = new byte[64];
    new java.util.Random(42).nextBytes(junk);
    junk[8] = 48; junk[9] = 0; junk[10] = 0; junk[11] = 0;
    garbage.getOutputStream().write(junk);
    // Half a header, then gone.
    Socket quitter = new Socket(lo, port);
    quitter.getOutputStream().write(new byte[] {-1, -1, -1, -1, -1, -1});
    quitter.close();
    // Silent: the handshake timeout closes it.
    Socket silent = new Socket(lo, port);

    List<Launched> procs = launch("goodjob", 2, Launched.myUid(), "full");
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    assertClosedByServer(bigEndian);
    assertClosedByServer(garbage);
    assertClosedByServer(silent);
    assertEquals(2, server.snapshot().peers().size());
  }

  private static void assertClosedByServer(Socket s) throws Exception {
    s.setSoTimeout((int) TestTiming.seconds(5).toMillis());
    // The finally closes the socket and with it the stream.
    try (InputStream in = s.getInputStream()) {
      int b;
      try {
        b = in.read();
      } catch (SocketTimeoutException e) {
        throw new AssertionError("server did not close the connection", e);
      } catch (java.net.SocketException e) {
        b = -1; // reset by peer: closed as well
      }
      assertEquals(-1, b, "the server must close without a reply byte");
    } finally {
      s.close();
    }
  }

  @Test
  void jobOnTwoNodesUsesHostFenceAndDirectModex() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    HostModule host =
        new HostModule() {
          @Override
          public CompletionStage<byte[]> fenceNb(List<Proc> procs, List<Info> info, byte[] data) {
            calls.add("fence " + procs + " " + info.size() + " " + data.length);
            // Our node's blob plus the other node's, which holds only rank 2 (rank 3 is left for
            // direct modex).
            byte[] remote = nodeBlob(2, 1002);
            byte[] all = new byte[data.length + remote.length];
            System.arraycopy(data, 0, all, 0, data.length);
            System.arraycopy(remote, 0, all, data.length, remote.length);
            return CompletableFuture.completedFuture(all);
          }

          @Override
          public CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
            calls.add("dmodex " + proc);
            if (proc.rank() != 3) {
              return HostModule.notSupported();
            }
            return CompletableFuture.supplyAsync(() -> kvals(Map.of("test.glob", Value.uint32(1003))));
          }
        };
    start(host, ServerOptions.builder());
    String ns = "twonode";
    List<Info> infos =
        List.of(
            Info.of(Keys.JOB_SIZE, Value.uint32(4)),
            Info.of(Keys.UNIV_SIZE, Value.uint32(4)),
            Info.of(Keys.JOBID, Value.of(ns)),
            Info.of(Keys.NODE_MAP, Value.of("raw:itnode,remotenode")),
            Info.of(Keys.PROC_MAP, Value.of("raw:0,1;2,3")));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace(ns, 2, infos));
    List<Launched> procs = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerClient(Proc.of(ns, r), Launched.myUid(), Launched.myGid()));
    }
    for (int r = 0; r < 2; r++) {
      procs.add(Launched.start(client, server.setupFork(Proc.of(ns, r)), "remote"));
    }
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
      Map<String, String> v = p.values();
      assertEquals("2", v.get("local_size"), describe(p));
      assertEquals("0,1", v.get("local_peers"));
      assertEquals("2", v.get("num_nodes"));
      for (int r = 0; r < 4; r++) {
        assertEquals(Integer.toString(1000 + r), v.get("glob" + r), describe(p));
      }
    }
    assertEquals(1, calls.stream().filter(c -> c.startsWith("fence")).count(), calls.toString());
    assertTrue(calls.contains("dmodex twonode:3"), calls.toString());
  }

  @Test
  void publishLookupUnpublishAndAbortReachTheHost() throws Exception {
    Map<String, Value.PData> store = new java.util.concurrent.ConcurrentHashMap<>();
    List<String> aborts = new CopyOnWriteArrayList<>();
    HostModule host =
        new HostModule() {
          @Override
          public CompletionStage<Void> publish(Proc proc, List<Info> info) {
            for (Info i : info) {
              if (!i.key().startsWith("pmix.")) {
                store.put(i.key(), new Value.PData(proc, i.key(), i.value()));
              }
            }
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public CompletionStage<List<Value.PData>> lookup(
              Proc proc, List<String> keys, List<Info> info) {
            List<Value.PData> found = new ArrayList<>();
            for (String k : keys) {
              if (store.containsKey(k)) {
                found.add(store.get(k));
              }
            }
            return found.isEmpty()
                ? CompletableFuture.failedFuture(new PmixException(Status.ERR_NOT_FOUND, "none"))
                : CompletableFuture.completedFuture(found);
          }

          @Override
          public CompletionStage<Void> unpublish(Proc proc, List<String> keys, List<Info> info) {
            keys.forEach(store::remove);
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public CompletionStage<Void> abort(
              Proc proc, Object hostObject, Status status, String message, List<Proc> procs) {
            aborts.add(proc + " " + status.code() + " " + message + " " + procs);
            return CompletableFuture.completedFuture(null);
          }
        };
    start(host, ServerOptions.builder());
    List<Launched> procs = launch("pubjob", 2, Launched.myUid(), "pubsub");
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
      Map<String, String> v = p.values();
      assertEquals("tcp://somewhere:1234", v.get("lookup"), describe(p));
      assertEquals("pubjob:0", v.get("owner"));
      assertEquals(Integer.toString(Status.ERR_NOT_FOUND.code()), v.get("lookup_after"));
      assertEquals("0", v.get("abort"));
    }
    assertTrue(store.isEmpty());
    assertEquals(2, aborts.size(), aborts.toString());
    assertTrue(aborts.get(0).contains(" 42 test abort []"), aborts.toString());
  }

  @Test
  void eventNotifiedByOneClientReachesTheOthers() throws Exception {
    List<String> upcalls = new CopyOnWriteArrayList<>();
    HostModule host =
        new HostModule() {
          @Override
          public CompletionStage<Void> notifyEvent(
              Status code, Proc source, int range, List<Info> info) {
            upcalls.add(code.code() + " " + source + " " + range);
            return CompletableFuture.completedFuture(null);
          }
        };
    start(host, ServerOptions.builder());
    List<Launched> procs = launch("evjob", 3, Launched.myUid(), "events");
    for (Launched p : procs) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    for (int r = 1; r < 3; r++) {
      assertTrue(
          procs.get(r).stdout().contains("event=-31337 source=evjob:0"), describe(procs.get(r)));
    }
    // Range NAMESPACE goes beyond this node, so the host hears of it too.
    assertEquals(List.of("-31337 evjob:0 3"), upcalls);
  }

  /**
   * One node's fence contribution holding one rank's data (native layout, docs/commands.md §7.1).
   */
  static byte[] nodeBlob(int rank, long glob) {
    ByteBuf rb = Unpooled.buffer();
    ByteBuf nb = Unpooled.buffer();
    ByteBuf out = Unpooled.buffer();
    try {
      new PmixWriter(rb).packRank(rank).pack(new Value.KVal("test.glob", Value.uint32(glob)));
      new PmixWriter(nb)
          .packByteEnum(DataType.BYTE, 1)
          .pack(Value.of(ByteBufUtil.getBytes(rb)));
      new PmixWriter(out).pack(Value.of(ByteBufUtil.getBytes(nb)));
      return ByteBufUtil.getBytes(out);
    } finally {
      rb.release();
      nb.release();
      out.release();
    }
  }

  static byte[] kvals(Map<String, Value> values) {
    ByteBuf b = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(b);
      values.forEach((k, v) -> w.pack(new Value.KVal(k, v)));
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** Waits until the server holds {@code n} peers, every one closed (a tombstone, or lost). */
  private ServerSnapshot awaitTombstonesOrLost(int n) {
    return awaitClosed(n, true);
  }

  /** Waits until the server holds {@code n} peers, every one a tombstone. */
  private ServerSnapshot awaitTombstones(int n) {
    return awaitClosed(n, false);
  }

  private ServerSnapshot awaitClosed(int n, boolean lostToo) {
    return Await.until(
        server::snapshot,
        s -> s.peers().size() == n
            && s.peers().stream().allMatch(p -> p.state() == ServerSnapshot.PeerState.TOMBSTONE
                || (lostToo && p.state() == ServerSnapshot.PeerState.LOST)),
        Duration.ofSeconds(10),
        ServerSnapshot::toJson);
  }
}
