package io.pmix.server;

import static io.pmix.server.Launched.describe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.CPrograms;
import io.pmix.common.testing.TestTiming;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/lifecycle.md with real OpenPMIx 4.2.2 clients: cycling (one rank 200 times,
 * eight ranks with no barrier but the fence), clones, a re-init racing the old socket's close,
 * finalize while others resolve the rank, cached events across a cycle, deregistration of a
 * client and of a namespace, and a stress run with kills. After each, {@link
 * LifecycleInvariants} checks the server's snapshot.
 */
class LifecycleIT {
  private static final Duration WAIT = TestTiming.seconds(90);
  private static Path client;
  private static Path check;

  private PMIxServer server;
  private RecordingHost host;
  private final List<Launched> started = new ArrayList<>();

  @BeforeAll
  static void compile() {
    client = CPrograms.compile("src/test/c/server_it_client.c");
    check = CPrograms.compile("../pmix-testkit/src/main/c/pmix_client_check.c");
  }

  @AfterEach
  void stop() throws Exception {
    for (Launched p : started) {
      if (p.process.isAlive()) {
        p.process.destroyForcibly();
        p.process.waitFor();
      }
    }
    if (server != null) {
      server.close();
      assertTrue(server.isTerminated());
    }
  }

  /** Records the upcalls the lifecycle cares about. */
  static final class RecordingHost implements HostModule {
    final Map<String, AtomicInteger> latch = new ConcurrentHashMap<>();
    final AtomicInteger connected = new AtomicInteger();
    final AtomicInteger finalized = new AtomicInteger();

    @Override
    public CompletionStage<Void> clientConnected(Proc proc, Object hostObject) {
      connected.incrementAndGet();
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> clientFinalized(Proc proc, Object hostObject) {
      finalized.incrementAndGet();
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> localAppFinalized(String nspace) {
      latch.computeIfAbsent(nspace, k -> new AtomicInteger()).incrementAndGet();
      return CompletableFuture.completedFuture(null);
    }

    Map<String, Integer> latchCalls() {
      Map<String, Integer> m = new ConcurrentHashMap<>();
      latch.forEach((k, v) -> m.put(k, v.get()));
      return m;
    }
  }

  private void start() {
    host = new RecordingHost();
    server = PMIxServer.init(host, ServerOptions.builder().hostname("itnode").build());
  }

  private void register(String nspace, int n) {
    List<Info> infos =
        List.of(
            Info.of(Keys.JOB_SIZE, Value.uint32(n)),
            Info.of(Keys.UNIV_SIZE, Value.uint32(n)),
            Info.of(Keys.JOBID, Value.of(nspace)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace(nspace, n, infos));
    for (int r = 0; r < n; r++) {
      registerClient(nspace, r);
    }
  }

  private void registerClient(String nspace, int rank) {
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerClient(Proc.of(nspace, rank), Launched.myUid(), Launched.myGid()));
  }

  private Launched launch(Path exe, String nspace, int rank, String... args) throws Exception {
    Launched p = Launched.start(exe, server.setupFork(Proc.of(nspace, rank)), args);
    started.add(p);
    return p;
  }

  private List<Launched> launchAll(Path exe, String nspace, int n, String... args)
      throws Exception {
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      ps.add(launch(exe, nspace, r, args));
    }
    return ps;
  }

  private static void assertExit(int expected, Launched p) throws Exception {
    assertEquals(expected, p.await(WAIT), () -> describe(p));
  }

  private ServerSnapshot awaitSnapshot(Predicate<ServerSnapshot> ok) {
    return Await.until(
        server::snapshot, ok, Duration.ofSeconds(20), s -> s.toJson() + " " + s.references());
  }

  /** Every peer closed (all test processes gone and their closes processed). */
  private ServerSnapshot awaitQuiet() {
    return awaitSnapshot(
        s -> s.peers().stream()
            .allMatch(p -> p.state() == ServerSnapshot.PeerState.TOMBSTONE
                || p.state() == ServerSnapshot.PeerState.LOST));
  }

  private void checkQuiescent(String... deregistered) {
    ServerSnapshot s = awaitQuiet();
    LifecycleInvariants.check(
        s,
        LifecycleInvariants.expect()
            .quiescent()
            .deregistered(deregistered)
            .latchCalls(host.latchCalls()));
  }

  private static List<ServerSnapshot.PeerView> peersOf(ServerSnapshot s, String nspace, int rank) {
    return s.peers().stream().filter(p -> p.nspace().equals(nspace) && p.rank() == rank).toList();
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void sameRankCyclesInitPutCommitFenceGetFinalize200Times() throws Exception {
    start();
    register("cyc1", 1);
    Launched p = launch(check, "cyc1", 0, "--timeout", "20", "--cycle", "200");
    assertExit(0, p);
    assertTrue(p.stdout().contains("STEP cycle OK"), describe(p));
    // Every cycle was a new connection, finalized through the host.
    assertEquals(200, host.connected.get());
    assertEquals(200, host.finalized.get());
    checkQuiescent();
    ServerSnapshot s = server.snapshot();
    // One tombstone for the rank, at its unchanged registration and index.
    assertEquals(1, s.peers().size());
    ServerSnapshot.NamespaceView ns = s.namespace("cyc1").orElseThrow();
    assertEquals(1, ns.nfinalized());
    assertEquals(1, ns.nlocalprocs());
    assertEquals(s.peers().get(0).index(), ns.ranks().get(0).peerIndex());
    assertEquals(ServerSnapshot.PeerState.TOMBSTONE, s.peers().get(0).state());
    assertFalse(ns.localAppFiniFired());
  }

  /**
   * Two real ranks cycle 200 times, each cycle putting a key named after it (test.cycle.<i>):
   * a new cycle starts on a clean data slate (§6.2.10), so after the last cycle the server holds
   * each rank's last cycle only, and the blob a GET (or the host's direct modex) gets for a rank
   * does not grow with the cycles (issue #19: cycle 646 carried 646 keys).
   */
  @Test
  void cyclingRanksCarryNoDataIntoTheNextCycle() throws Exception {
    start();
    register("cdat", 2);
    int cycles = 200;
    long t0 = System.nanoTime();
    List<Launched> ps =
        launchAll(check, "cdat", 2, "--timeout", "20", "--cycle-keys", "--cycle",
            Integer.toString(cycles));
    for (Launched p : ps) {
      assertExit(0, p);
      assertTrue(p.stdout().contains("STEP cycle OK"), describe(p));
    }
    System.out.printf(
        "two ranks, %d cycles with per-cycle keys: %.1f s%n",
        cycles, (System.nanoTime() - t0) / 1e9);
    checkQuiescent();
    for (int rank = 0; rank < 2; rank++) {
      byte[] blob =
          server
              .dmodexRequest(Proc.of("cdat", rank), List.of())
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      List<String> cycleKeys = new ArrayList<>();
      PmixReader r = new PmixReader(Unpooled.wrappedBuffer(blob), WireFormat.DEFAULT);
      while (r.hasRemaining()) {
        String key = ((Value.KVal) r.unpackOne(DataType.KVAL)).key();
        if (key.startsWith("test.cycle.")) {
          cycleKeys.add(key);
        }
      }
      System.out.println("rank " + rank + ": the last cycle's blob has " + blob.length + " bytes");
      assertEquals(List.of("test.cycle." + (cycles - 1)), cycleKeys, "rank " + rank);
    }
  }

  @Test
  void eightRanksCycleWithNoBarrierButTheFence() throws Exception {
    start();
    register("cyc8", 8);
    // 4.2.2 as a server drops a finalizing client from every pending fence of its namespace,
    // so these fences would complete early with PMIX_ERR_PARTIAL_SUCCESS. (pmix_client_check's
    // --cycle-barrier none cannot be used for this: it demands the exact value of the reader's
    // own cycle, but a faster peer may legitimately have committed its next cycle already; the
    // "cycles" mode accepts exactly that and nothing else.)
    List<Launched> ps = launchAll(client, "cyc8", 8, "cycles", "25");
    int ahead = 0;
    for (Launched p : ps) {
      assertExit(0, p);
      assertEquals("25", p.values().get("cycles"), describe(p));
      ahead += Integer.parseInt(p.values().get("ahead"));
    }
    System.out.println("eight ranks, 25 cycles: " + ahead + " reads saw a peer's next cycle");
    checkQuiescent();
    ServerSnapshot s = server.snapshot();
    assertEquals(8, s.peers().size());
    assertEquals(8, s.namespace("cyc8").orElseThrow().nfinalized());
    assertEquals(8, s.namespace("cyc8").orElseThrow().nlocalprocs());
    assertEquals(8 * 25, host.finalized.get());
  }

  @Test
  void cloneFinalizingAfterItsParent() throws Exception {
    runClone("clone-parent-first");
  }

  @Test
  void cloneFinalizingBeforeItsParent() throws Exception {
    runClone("clone-child-first");
  }

  private void runClone(String mode) throws Exception {
    start();
    register("clonejob", 1);
    Launched p = launch(client, "clonejob", 0, mode);
    assertExit(0, p);
    assertTrue(p.stdout().contains("clone_ready"), describe(p));
    checkQuiescent();
    // Parent and clone each connected and finalized; one tombstone remains, at the index the
    // rank names (the newer connection, the clone's), and it is counted once.
    assertEquals(2, host.connected.get());
    assertEquals(2, host.finalized.get());
    ServerSnapshot s = server.snapshot();
    List<ServerSnapshot.PeerView> mine = peersOf(s, "clonejob", 0);
    assertEquals(1, mine.size(), s.toJson());
    assertEquals(ServerSnapshot.PeerState.TOMBSTONE, mine.get(0).state());
    assertEquals(1, s.namespace("clonejob").orElseThrow().nfinalized());
    assertEquals(1, s.namespace("clonejob").orElseThrow().nlocalprocs());
  }

  @Test
  void cloneDyingAbnormally() throws Exception {
    start();
    register("clonedie", 1);
    Launched p = launch(client, "clonedie", 0, "clone-dies");
    assertTrue(p.awaitLine("sync=child_dead", WAIT), describe(p));
    assertTrue(p.stdout().contains("child_status=7"), describe(p));
    // The clone died: its peer stays inert at the rank's index (it was the newer connection);
    // the parent still lives, so the rank is not lost and nlocalprocs is unchanged.
    ServerSnapshot s =
        awaitSnapshot(x -> x.namespace("clonedie").orElseThrow().ranks().get(0).procCount() == 1);
    LifecycleInvariants.check(
        s, LifecycleInvariants.expect().liveProcesses(1).latchCalls(host.latchCalls()));
    ServerSnapshot.RankView rank = s.namespace("clonedie").orElseThrow().ranks().get(0);
    assertEquals(ServerSnapshot.PeerState.LOST, s.peer(rank.peerIndex()).orElseThrow().state());
    assertEquals(1, s.namespace("clonedie").orElseThrow().nlocalprocs());
    assertEquals(2, peersOf(s, "clonedie", 0).size());
    p.release();
    assertExit(0, p);
    checkQuiescent();
    // The parent finalized after the clone took the index: it was stranded and freed, the
    // clone's lost peer stays at the index until the rank reconnects.
    s = server.snapshot();
    assertEquals(1, peersOf(s, "clonedie", 0).size(), s.toJson());
    assertEquals(0, s.namespace("clonedie").orElseThrow().nfinalized());
    // A new cycle reclaims it.
    assertExit(0, launch(client, "clonedie", 0, "init"));
    checkQuiescent();
    s = server.snapshot();
    assertEquals(ServerSnapshot.PeerState.TOMBSTONE, peersOf(s, "clonedie", 0).get(0).state());
    assertEquals(1, s.namespace("clonedie").orElseThrow().nfinalized());
  }

  @Test
  void fastReinitRacingTheCloseOfTheOldSocket() throws Exception {
    start();
    register("race", 1);
    Launched p = launch(client, "race", 0, "reinit-race");
    assertTrue(p.awaitLine("sync=reinit", WAIT), describe(p));
    // The new connection was accepted while the finalized old one is still open: the rank's
    // index names the new peer, the old one is finalizing and counted.
    ServerSnapshot s = server.snapshot();
    List<ServerSnapshot.PeerView> mine = peersOf(s, "race", 0);
    assertEquals(2, mine.size(), s.toJson());
    ServerSnapshot.RankView rank = s.namespace("race").orElseThrow().ranks().get(0);
    assertEquals(ServerSnapshot.PeerState.ACTIVE, s.peer(rank.peerIndex()).orElseThrow().state());
    assertEquals(2, rank.procCount());
    assertEquals(1, s.namespace("race").orElseThrow().nfinalized());
    LifecycleInvariants.check(
        s, LifecycleInvariants.expect().liveProcesses(2).latchCalls(host.latchCalls()));
    p.release();
    assertTrue(p.awaitLine("sync=closed", WAIT), describe(p));
    // The old socket's close arrived after the new peer took the index: it was freed at once,
    // only its own slot nulled, the index untouched.
    s = awaitSnapshot(x -> peersOf(x, "race", 0).size() == 1);
    assertEquals(rank.peerIndex(), s.namespace("race").orElseThrow().ranks().get(0).peerIndex());
    assertEquals(0, s.namespace("race").orElseThrow().nfinalized());
    LifecycleInvariants.check(
        s, LifecycleInvariants.expect().liveProcesses(1).latchCalls(host.latchCalls()));
    p.release();
    assertExit(0, p);
    checkQuiescent();
    assertEquals(1, server.snapshot().namespace("race").orElseThrow().nfinalized());
  }

  @Test
  void finalizingRankStaysResolvableForOthersGetsAndFences() throws Exception {
    start();
    register("frace", 3);
    List<Launched> ps = launchAll(client, "frace", 3, "finalize-race");
    for (Launched p : ps) {
      assertExit(0, p);
      // The second fence waited for rank 0's next cycle instead of completing early.
      assertEquals("0", p.values().get("fence2_status"), describe(p));
      assertEquals("888", p.values().get("second"), describe(p));
    }
    Map<String, String> v = ps.get(1).values();
    assertEquals("777", v.get("late"), describe(ps.get(1)));
    // A GET of a key rank 0 never committed is answered when rank 0 finalizes (or commits
    // again), not left hanging for its 20 s timeout.
    assertEquals(Integer.toString(Status.ERR_NOT_FOUND.code()), v.get("never"), describe(ps.get(1)));
    assertTrue(Long.parseLong(v.get("never_ms")) < 5000, describe(ps.get(1)));
    checkQuiescent();
  }

  @Test
  void cachedEventReachesItsLateTargetButNotTheTargetsNextCycle() throws Exception {
    start();
    register("cachev", 2);
    List<Launched> ps = launchAll(client, "cachev", 2, "cached-events");
    for (Launched p : ps) {
      assertExit(0, p);
    }
    Map<String, String> v = ps.get(1).values();
    assertEquals("-31338", v.get("cached_event"), describe(ps.get(1)));
    assertEquals("0", v.get("stale_event"), describe(ps.get(1)));
    checkQuiescent();
    assertTrue(
        server.snapshot().references().stream()
            .noneMatch(r -> r.kind() == ServerSnapshot.ReferenceKind.CACHED_NOTIFICATION));
  }

  @Test
  void deregisteredTombstonedRankIsRefusedUntilRegisteredAgain() throws Exception {
    start();
    register("dereg", 2);
    List<String> epilogs = new CopyOnWriteArrayList<>();
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerEpilog(Proc.of("dereg", 0), () -> epilogs.add("rank0")));
    for (Launched p : launchAll(client, "dereg", 2, "init")) {
      assertExit(0, p);
    }
    checkQuiescent();
    ServerSnapshot before = server.snapshot();
    int tomb = before.namespace("dereg").orElseThrow().ranks().get(0).peerIndex();
    assertFalse(before.namespace("dereg").orElseThrow().localAppFiniFired());

    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterClient(Proc.of("dereg", 0)));
    ServerSnapshot s = server.snapshot();
    ServerSnapshot.NamespaceView ns = s.namespace("dereg").orElseThrow();
    assertFalse(ns.ranks().containsKey(0));
    assertTrue(s.peer(tomb).isEmpty(), s.toJson()); // released, slot nulled
    assertEquals(1, ns.nlocalprocs());
    assertEquals(1, ns.nfinalized());
    // Rank 1 finalized and rank 0 is gone: all local processes finalized, told once.
    assertTrue(ns.localAppFiniFired());
    awaitCondition(() -> epilogs.equals(List.of("rank0")));
    awaitCondition(() -> host.latchCalls().getOrDefault("dereg", 0) == 1);
    LifecycleInvariants.check(
        s, LifecycleInvariants.expect().quiescent().latchCalls(host.latchCalls()));

    // Refused while deregistered ...
    assertExit(10, launch(client, "dereg", 0, "init"));
    assertEquals(2, host.connected.get()); // the refused connection never reached the host
    // ... accepted again once the host registers it.
    registerClient("dereg", 0);
    assertEquals(2, server.snapshot().namespace("dereg").orElseThrow().nlocalprocs());
    assertExit(0, launch(client, "dereg", 0, "init"));
    checkQuiescent();
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace("dereg"));
    LifecycleInvariants.check(
        server.snapshot(),
        LifecycleInvariants.expect().quiescent().deregistered("dereg")
            .latchCalls(host.latchCalls()));
    assertEquals(1, host.latchCalls().get("dereg"));
    assertEquals(List.of("rank0"), epilogs); // a rank's epilog runs once
  }

  @Test
  void deregisteringANamespaceWithLiveFinalizedAndNeverConnectedRanks() throws Exception {
    start();
    register("mixed", 3);
    register("other", 1);
    List<String> epilogs = new CopyOnWriteArrayList<>();
    for (int r = 0; r < 3; r++) {
      String name = "rank" + r;
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerEpilog(Proc.of("mixed", r), () -> epilogs.add(name)));
    }
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerEpilog(Proc.wildcard("mixed"), () -> epilogs.add("nspace")));
    assertExit(0, launch(client, "mixed", 0, "init")); // finalized: a tombstone
    Launched live = launch(client, "mixed", 1, "hold"); // connected, not finalized
    Launched bystander = launch(client, "other", 0, "hold"); // another job, untouched
    assertTrue(live.awaitLine("sync=held", WAIT), describe(live));
    assertTrue(bystander.awaitLine("sync=held", WAIT), describe(bystander));
    // rank 2 never connects
    ServerSnapshot before = awaitSnapshot(x -> x.peers().size() == 3);
    assertFalse(before.namespace("mixed").orElseThrow().localAppFiniFired());

    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace("mixed"));
    ServerSnapshot s = server.snapshot();
    assertTrue(s.namespace("mixed").isEmpty());
    LifecycleInvariants.check(
        s,
        LifecycleInvariants.expect()
            .liveProcesses(1)
            .deregistered("mixed")
            .latchCalls(host.latchCalls()));
    assertEquals(1, s.peers().size()); // only the other job's client
    awaitCondition(() -> epilogs.size() == 4);
    assertEquals(List.of("rank0", "rank1", "rank2", "nspace"), epilogs);
    awaitCondition(() -> host.latchCalls().getOrDefault("mixed", 0) == 1);

    // The live client lost its server; the namespace is gone, so nobody of it may connect.
    live.release();
    assertTrue(live.await(WAIT) != -1, () -> describe(live));
    assertExit(10, launch(client, "mixed", 0, "init"));
    bystander.release();
    assertExit(0, bystander);
    checkQuiescent("mixed");
    assertEquals(1, host.latchCalls().get("mixed"));
  }

  @Test
  void eightRanksCyclingFiftyTimesWithRandomKills() throws Exception {
    start();
    String ns = "stress";
    register(ns, 8);
    long seed = Long.getLong("pmix.stress.seed", System.nanoTime());
    Random rnd = new Random(seed);
    List<String> log = new ArrayList<>();
    // Rounds: eight ranks cycle 50 times each, fencing; one to three of them are killed at
    // random moments (mid-fence, mid-get, finalizing, between cycles); the survivors then fail
    // (their fence or their peer's data is gone) and exit without finalizing. Everything the
    // rounds leave behind (tombstones, lost peers, departed ranks) carries into the next one.
    for (int round = 0; round < 5; round++) {
      for (int r = 0; r < 8; r++) {
        registerClient(ns, r); // a launcher restarting the job registers its ranks again
      }
      Launched[] ranks = new Launched[8];
      for (int r = 0; r < 8; r++) {
        // A fence timeout: a rank killed right after its FINALIZE reached us finalized, as far
        // as PMIx can tell, so the next cycle's fence keeps waiting for it to init again.
        ranks[r] = launch(client, ns, r, "cycles", "50", "3");
      }
      Thread.sleep(100 + rnd.nextInt(500));
      int nkills = 1 + rnd.nextInt(3);
      List<Integer> killed = new ArrayList<>();
      for (int k = 0; k < nkills; k++) {
        int r = rnd.nextInt(8);
        if (ranks[r].process.isAlive()) {
          ranks[r].process.destroyForcibly();
          killed.add(r);
        }
        Thread.sleep(rnd.nextInt(30));
      }
      List<Integer> exits = new ArrayList<>();
      for (Launched p : ranks) {
        // Nobody may hang.
        int rc = p.await(TestTiming.seconds(30));
        int round0 = round;
        assertTrue(
            rc != -1,
            () -> "seed " + seed + " round " + round0 + " " + log + describe(p) + "\nserver: "
                + server.snapshot().toJson() + " " + server.snapshot().references());
        exits.add(rc);
        if (rc == 106 || rc == 105) {
          String[] lines = p.stdout().split("\n", -1);
          log.add("  " + lines[Math.max(0, lines.length - 2)]);
        }
      }
      log.add("round " + round + ": killed " + killed + ", exits " + exits);
      checkQuiescent();
      // A fence may still wait for a rank that finalized and was killed: it times out.
      assertTrue(awaitSnapshot(x -> x.references().isEmpty()).references().isEmpty());
    }
    System.out.println("stress: seed " + seed + "\n  " + String.join("\n  ", log));
    ServerSnapshot s = server.snapshot();
    assertEquals(8, s.namespace(ns).orElseThrow().ranks().size());

    // No drift: registered again, all eight cycle cleanly.
    for (int r = 0; r < 8; r++) {
      registerClient(ns, r);
    }
    assertEquals(8, server.snapshot().namespace(ns).orElseThrow().nlocalprocs());
    List<Launched> again = launchAll(client, ns, 8, "cycles", "3");
    for (Launched p : again) {
      assertExit(0, p);
      assertEquals("3", p.values().get("cycles"), describe(p));
    }
    checkQuiescent();
    s = server.snapshot();
    assertEquals(8, s.namespace(ns).orElseThrow().nfinalized(), s.toJson());
    assertEquals(8, s.peers().size(), s.toJson());
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace(ns));
    checkQuiescent(ns);
    awaitCondition(() -> host.latchCalls().getOrDefault(ns, 0) == 1);
  }

  private static void awaitCondition(java.util.function.BooleanSupplier ok) {
    Await.condition("the host's record", ok, Duration.ofSeconds(10));
  }
}
