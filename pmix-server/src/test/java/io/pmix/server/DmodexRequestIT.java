package io.pmix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PMIxServer#dmodexRequest} against real OpenPMIx 4.2.2 C clients (mode {@code dmodex} of
 * server_it_client.c: sync=ready, put and commit, sync=committed, finalize): what the host gets
 * for a committed process, one that commits later, one that never does in time, one that dies,
 * and processes the server does not host.
 */
class DmodexRequestIT {
  private static final Duration WAIT = TestTiming.seconds(60);
  private static Path client;

  private PMIxServer server;
  private final List<Launched> launched = new ArrayList<>();

  @BeforeAll
  static void compile() {
    client = CPrograms.compile("src/test/c/server_it_client.c");
  }

  @BeforeEach
  void start() {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.builder().hostname("dmxnode").build());
  }

  @AfterEach
  void stop() throws Exception {
    for (Launched p : launched) {
      if (p.process.isAlive()) {
        p.process.destroyForcibly();
        p.process.waitFor();
      }
      p.cleanup();
    }
    server.close();
    assertTrue(server.isTerminated());
  }

  /** Registers {@code nspace} with {@code size} ranks, of which ranks 0..local-1 are here. */
  private void register(String nspace, int size, int local) {
    List<Info> infos =
        List.of(
            Info.of(Keys.JOB_SIZE, Value.uint32(size)),
            Info.of(Keys.UNIV_SIZE, Value.uint32(size)),
            Info.of(Keys.JOBID, Value.of("job-" + nspace)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace(nspace, local, infos));
    for (int r = 0; r < local; r++) {
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerClient(Proc.of(nspace, r), Launched.myUid(), Launched.myGid()));
    }
  }

  /** Starts rank {@code rank} in mode dmodex and waits until it is at sync=ready. */
  private Launched launchReady(String nspace, int rank) throws Exception {
    Launched p = Launched.start(client, server.setupFork(Proc.of(nspace, rank)), "dmodex");
    launched.add(p);
    assertTrue(p.awaitLine("sync=ready", WAIT), () -> output(p));
    return p;
  }

  private static String output(Launched p) {
    try {
      return "stdout:\n" + p.stdout() + "\nstderr:\n" + p.stderr();
    } catch (Exception e) {
      return "(no output)";
    }
  }

  private static void finish(Launched p) throws Exception {
    p.release(); // past "committed"
    assertEquals(0, p.await(WAIT), () -> output(p));
    assertTrue(p.stdout().contains("\ndone\n"), () -> output(p));
  }

  private static List<Info> timeout(int seconds) {
    return List.of(Info.of(Keys.TIMEOUT, Value.of(seconds)));
  }

  /** The blob as the asking node's server reads it: bare native KVAL units, nothing else. */
  private static Map<String, Value> kvals(byte[] blob) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(blob), WireFormat.DEFAULT);
    Map<String, Value> m = new LinkedHashMap<>();
    while (r.hasRemaining()) {
      Value.KVal kv = (Value.KVal) r.unpackOne(DataType.KVAL);
      m.put(kv.key(), kv.value());
    }
    return m;
  }

  private static byte[] get(CompletionStage<byte[]> stage) throws Exception {
    return stage.toCompletableFuture().get(WAIT.toNanos(), TimeUnit.NANOSECONDS);
  }

  private static Status failure(CompletionStage<byte[]> stage) throws Exception {
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () -> stage.toCompletableFuture().get(WAIT.toNanos(), TimeUnit.NANOSECONDS));
    return assertInstanceOf(PmixException.class, e.getCause()).status();
  }

  /**
   * Waits until the server holds the host's request for {@code nspace:rank} parked (its snapshot
   * names the process in a DMODEX_REQUEST reference): the request has reached the point where it
   * waits, so a future still not done afterwards proves it waits rather than that it is slow.
   */
  private void awaitParked(String nspace, int rank) {
    Await.until(
        server::snapshot,
        s -> s.references().stream()
            .anyMatch(r -> r.kind() == ServerSnapshot.ReferenceKind.DMODEX_REQUEST
                && r.nspace().equals(nspace) && r.rank() == rank),
        WAIT,
        s -> "no parked request for " + nspace + ":" + rank + " in " + s.references());
  }

  /** The REMOTE scope: the remote and global puts, not the local one. */
  private static void assertRankData(int rank, Map<String, Value> data) {
    assertTrue(data.containsKey("test.rem") && data.containsKey("test.glob"), data.toString());
    assertEquals("rank" + rank + "-remote", data.get("test.rem").asString(), data.toString());
    assertEquals(1000 + rank, data.get("test.glob").asLong(), data.toString());
    assertFalse(data.containsKey("test.loc"), data.toString());
  }

  @Test
  void aCommittedProcessIsAnsweredAtOnceWithItsRemoteData() throws Exception {
    register("dmx1", 2, 2);
    Launched p0 = launchReady("dmx1", 0);
    Launched p1 = launchReady("dmx1", 1);
    p1.release();
    assertTrue(p1.awaitLine("sync=committed", WAIT), () -> output(p1));
    long t0 = System.nanoTime();
    Map<String, Value> data = kvals(get(server.dmodexRequest(Proc.of("dmx1", 1), List.of())));
    assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(2).toNanos());
    assertRankData(1, data);
    // Rank 0 has not committed: its request waits (and the server's shutdown later ends it).
    CompletableFuture<byte[]> early =
        server.dmodexRequest(Proc.of("dmx1", 0), List.of()).toCompletableFuture();
    awaitParked("dmx1", 0);
    assertFalse(early.isDone());
    p0.release();
    assertRankData(0, kvals(get(early)));
    finish(p0);
    finish(p1);
  }

  @Test
  void aRequestWaitsForTheCommit() throws Exception {
    register("dmx2", 1, 1);
    Launched p = launchReady("dmx2", 0);
    CompletableFuture<byte[]> f =
        server.dmodexRequest(Proc.of("dmx2", 0), timeout(30)).toCompletableFuture();
    awaitParked("dmx2", 0);
    assertFalse(f.isDone(), "answered before the commit");
    p.release();
    assertRankData(0, kvals(get(f)));
    finish(p);
    assertTrue(server.snapshot().references().isEmpty(), () -> server.snapshot().toString());
  }

  @Test
  void aProcessThatDoesNotCommitInTimeTimesOut() throws Exception {
    register("dmx3", 1, 1);
    Launched p = launchReady("dmx3", 0);
    long t0 = System.nanoTime();
    assertEquals(Status.ERR_TIMEOUT, failure(server.dmodexRequest(Proc.of("dmx3", 0), timeout(1))));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(ms >= 900 && ms < 10_000, "timed out after " + ms + " ms");
    assertTrue(server.snapshot().references().isEmpty(), () -> server.snapshot().toString());
    // The process is unaffected: it commits and finalizes, and is then served at once.
    p.release();
    assertTrue(p.awaitLine("sync=committed", WAIT), () -> output(p));
    assertRankData(0, kvals(get(server.dmodexRequest(Proc.of("dmx3", 0), timeout(1)))));
    finish(p);
  }

  @Test
  void aProcessThatDiesWhileWaitedForFailsTheRequest() throws Exception {
    register("dmx4", 1, 1);
    Launched p = launchReady("dmx4", 0);
    CompletableFuture<byte[]> f =
        server.dmodexRequest(Proc.of("dmx4", 0), List.of()).toCompletableFuture();
    awaitParked("dmx4", 0);
    assertFalse(f.isDone());
    p.process.destroyForcibly();
    p.process.waitFor();
    assertEquals(Status.ERR_LOST_CONNECTION, failure(f));
    assertTrue(server.snapshot().references().isEmpty(), () -> server.snapshot().toString());
  }

  @Test
  void deregisteringTheRankFailsTheRequest() throws Exception {
    register("dmx5", 1, 1);
    Launched p = launchReady("dmx5", 0);
    CompletableFuture<byte[]> f =
        server.dmodexRequest(Proc.of("dmx5", 0), List.of()).toCompletableFuture();
    awaitParked("dmx5", 0);
    assertFalse(f.isDone());
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterClient(Proc.of("dmx5", 0)));
    assertEquals(Status.ERR_NOT_FOUND, failure(f));
    p.process.destroyForcibly();
  }

  @Test
  void processesThisServerDoesNotHost() throws Exception {
    // Rank 1 of a fully registered namespace lives elsewhere: it will never commit here.
    register("dmx6", 2, 1);
    assertEquals(Status.ERR_NOT_FOUND, failure(server.dmodexRequest(Proc.of("dmx6", 1), List.of())));
    // The wildcard of an unknown namespace: no job data to give.
    assertEquals(
        Status.ERR_NOT_FOUND, failure(server.dmodexRequest(Proc.wildcard("nosuch"), List.of())));
    // A rank of an unknown namespace may yet be registered (the request can outrun the
    // registration, 4.2.2 waits for it): it waits, here until its timeout.
    assertEquals(Status.ERR_TIMEOUT, failure(server.dmodexRequest(Proc.of("nosuch", 0), timeout(1))));
    // The wildcard of a known namespace: its job-level data.
    Map<String, Value> job = kvals(get(server.dmodexRequest(Proc.wildcard("dmx6"), List.of())));
    assertEquals(2, job.get(Keys.JOB_SIZE.name()).asLong(), job.toString());
    assertEquals("job-dmx6", job.get(Keys.JOBID.name()).asString(), job.toString());
  }

  @Test
  void aRequestThatOutrunsTheRegistrationIsAnsweredAfterTheCommit() throws Exception {
    CompletableFuture<byte[]> f =
        server.dmodexRequest(Proc.of("dmx7", 0), timeout(60)).toCompletableFuture();
    awaitParked("dmx7", 0);
    assertFalse(f.isDone());
    register("dmx7", 1, 1);
    Launched p = launchReady("dmx7", 0);
    assertFalse(f.isDone(), "answered before the commit");
    p.release();
    assertRankData(0, kvals(get(f)));
    finish(p);
  }

  @Test
  void outsideTheServersLifeTheRequestFails() throws Exception {
    PMIxServer notStarted =
        PMIxServer.create(new HostModule() {}, ServerOptions.builder().build());
    assertEquals(Status.ERR_INIT, failure(notStarted.dmodexRequest(Proc.of("x", 0), List.of())));
    notStarted.close();
    register("dmx8", 1, 1);
    CompletableFuture<byte[]> waiting =
        server.dmodexRequest(Proc.of("dmx8", 0), List.of()).toCompletableFuture();
    awaitParked("dmx8", 0);
    assertFalse(waiting.isDone());
    server.close();
    assertEquals(Status.ERR_LOST_CONNECTION, failure(waiting));
    assertEquals(
        Status.ERR_NOT_AVAILABLE, failure(server.dmodexRequest(Proc.of("dmx8", 0), List.of())));
    assertThrows(
        IllegalArgumentException.class,
        () -> server.dmodexRequest(Proc.of("dmx8", Proc.RANK_UNDEF), List.of()));
  }
}
