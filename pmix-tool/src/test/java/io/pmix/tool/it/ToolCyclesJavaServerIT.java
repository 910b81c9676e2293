package io.pmix.tool.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.ProcessResources;
import io.pmix.common.testing.ProcessResources.Snapshot;
import io.pmix.common.testing.TeardownContract;
import io.pmix.server.HostModule;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import io.pmix.tool.PMIxTool;
import io.pmix.tool.internal.ToolHolder;
import io.pmix.tool.internal.ToolState;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tool's cycling guarantee at the client's depth (pmix-testkit's ClientCyclesJavaServerIT is
 * the client's): 750 {@code PMIxTool} init/finalize cycles and 100 nested init/init/finalize/
 * finalize against our own {@link PMIxServer} with tool support, both in this JVM, each cycle
 * proving it got a working tool (the server's name from the handshake, a query and a get answered
 * over this cycle's connection). Afterwards the process (server included) holds what it held
 * before: no extra thread or descriptor, every object of every finished cycle (its state and every
 * resource {@link ToolState#resources} lists) unreachable, no growth of the heap surviving a full
 * collection; and the server never holds more than the current cycle's tool peer.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ToolCyclesJavaServerIT {
  private static final String HOST = "cyclehost";
  private static final String SERVER_NSPACE = "csrv";
  private static final String JOB = "cjob";
  private static final Proc SERVER = Proc.of(SERVER_NSPACE, 0);

  /**
   * Fewer than the client's 1,000 to stay within about 30 s: a tool init here costs about 16 ms
   * (measured: the connect, handshake and REQ; settings and locating take microseconds), against
   * about 7 ms for a whole client cycle under libpmix.
   */
  private static final int CYCLES = 750;
  private static final int NESTED = 100;
  private static final int WARMUP = 5;

  /**
   * As in the client's cycling tests, where the reasoning is written down: one leaked state per
   * cycle (tens of kilobytes: an event loop group, an executor, two threads, the peer store) would
   * add tens of megabytes over the 650 cycles between the two measurements, and a leak of 400
   * bytes per cycle (an entry in a static map) more than this bound.
   */
  private static final long HEAP_GROWTH_BOUND = 256 * 1024;

  @TempDir Path tmp;
  private PMIxServer server;
  // Static so that the per-cycle helpers are static and keep nothing of a cycle in a frame.
  private static Map<String, String> env;
  private static List<Info> target;

  @BeforeEach
  void start() {
    server =
        PMIxServer.init(
            new HostModule() {},
            ServerOptions.builder()
                .serverNspace(SERVER_NSPACE)
                .serverRank(0)
                .hostname(HOST)
                .tmpdir(tmp)
                .systemTmpdir(tmp)
                .toolSupport(true)
                .build());
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(JOB, 2, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(2)))));
    env = new HashMap<>();
    env.put("PMIX_HOSTNAME", HOST);
    env.put("PMIX_SYSTEM_TMPDIR", tmp.toString());
    target = List.of(Info.of("pmix.srvr.uri", server.uri()));
  }

  @AfterEach
  void stop() {
    while (ToolHolder.peek() != null) {
      PMIxTool.finalize();
    }
    TeardownContract.assertNothingRemains(ToolHolder.holder());
    server.close();
  }

  @Test
  void thousandCyclesLeaveNothingBehind() {
    for (int i = 0; i < WARMUP; i++) {
      oneCycle(null, i);
    }
    Snapshot baseline = ProcessResources.snapshot();
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    long t0 = System.nanoTime();
    long heapAt100 = -1;
    for (int i = 1; i <= CYCLES; i++) {
      oneCycle(refs, i);
      if (i % 100 == 0) {
        ProcessResources.assertNoFdsBeyond(baseline.fds());
        assertEquals(List.of(), TeardownContract.libraryThreads(Role.TOOL), "after cycle " + i);
        assertHonestAccounting();
      }
      if (i == 100) {
        refs.assertAllCleared();
        heapAt100 = ProcessResources.heapAfterFullGc();
      }
    }
    long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
    assertBackToBaseline(baseline, refs);
    long heapAtEnd = ProcessResources.heapAfterFullGc();
    long heapAtHundred = heapAt100;
    System.out.printf(
        "ToolCyclesJavaServerIT: %d cycles in %d ms (%d objects tracked); baseline %s; after %s;"
            + " heap after full GC at cycle 100: %d, at cycle %d: %d (growth %d, bound %d)%n",
        CYCLES, elapsedMs, refs.tracked(), baseline, ProcessResources.snapshot(), heapAtHundred,
        CYCLES, heapAtEnd, heapAtEnd - heapAtHundred, HEAP_GROWTH_BOUND);
    assertTrue(
        heapAtEnd <= heapAtHundred + HEAP_GROWTH_BOUND,
        () -> "heap after full GC grew from " + heapAtHundred + " to " + heapAtEnd);
  }

  @Test
  void hundredNestedCyclesLeaveNothingBehind() {
    for (int i = 0; i < WARMUP; i++) {
      oneCycle(null, i);
    }
    Snapshot baseline = ProcessResources.snapshot();
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    for (int i = 1; i <= NESTED; i++) {
      oneNestedCycle(refs, i);
    }
    assertBackToBaseline(baseline, refs);
    assertHonestAccounting();
    long heapAfter = ProcessResources.heapAfterFullGc();
    System.out.printf(
        "ToolCyclesJavaServerIT: %d nested cycles; heap after full GC %d (growth %d)%n",
        NESTED, heapAfter, heapAfter - baseline.heapAfterGc());
    assertTrue(
        heapAfter <= baseline.heapAfterGc() + HEAP_GROWTH_BOUND,
        () -> "heap after full GC grew from " + baseline.heapAfterGc() + " to " + heapAfter);
  }

  private static void oneCycle(ProcessResources.Reachability refs, int i) {
    ToolState s = ToolHolder.init(env, target);
    if (refs != null) {
      remember(refs, i, s);
    }
    assertWorks(i);
    PMIxTool.finalize();
    TeardownContract.assertNothingRemains(ToolHolder.holder());
  }

  private static void oneNestedCycle(ProcessResources.Reachability refs, int i) {
    ToolState outer = ToolHolder.init(env, target);
    assertSame(outer, ToolHolder.init(env, target), "a nested init builds nothing");
    remember(refs, i, outer);
    assertWorks(i);
    PMIxTool.finalize();
    assertTrue(PMIxTool.initialized(), "nested finalize " + i + " tore the library down");
    assertSame(outer, ToolHolder.peek());
    assertWorks(i);
    PMIxTool.finalize();
    TeardownContract.assertNothingRemains(ToolHolder.holder());
  }

  /** The handshake named our server, and a query and a get made round trips through it. */
  private static void assertWorks(int i) {
    assertEquals(SERVER, PMIxTool.server().orElseThrow(), "cycle " + i);
    assertTrue(PMIxTool.isConnected(), "cycle " + i);
    assertTrue(PMIxTool.queryNamespaces().contains(JOB), "cycle " + i);
    assertEquals(2, PMIxTool.get(Proc.wildcard(JOB), "pmix.job.size").asInt(), "cycle " + i);
  }

  private static void remember(ProcessResources.Reachability refs, int i, ToolState s) {
    refs.track("cycle " + i + " state", s);
    Map<String, Object> resources = s.resources();
    assertTrue(resources.containsKey("channel"), resources::toString);
    for (Map.Entry<String, Object> e : resources.entrySet()) {
      refs.track("cycle " + i + " " + e.getKey(), e.getValue());
    }
  }

  /** At most the current cycle's tool peer: a tool's peer is freed at its close. */
  private void assertHonestAccounting() {
    ServerSnapshot snap = server.snapshot();
    long tools = snap.peers().stream().filter(p -> p.role() == ServerSnapshot.Role.TOOL).count();
    assertTrue(tools <= 1, snap::toString);
  }

  private static void assertBackToBaseline(Snapshot baseline, ProcessResources.Reachability refs) {
    TeardownContract.assertNothingRemains(ToolHolder.holder());
    assertEquals(List.of(), TeardownContract.libraryThreads(Role.TOOL));
    ProcessResources.assertNoThreadsBeyond(baseline.threads());
    ProcessResources.assertNoFdsBeyond(baseline.fds());
    refs.assertAllCleared();
  }
}
