package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.PMIx;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.Proc;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.ProcessResources;
import io.pmix.common.testing.ProcessResources.Snapshot;
import io.pmix.common.testing.TeardownContract;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.ServerSnapshot.NamespaceView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * pmix-client's 1,000 init/finalize cycles and 100 nested init/init/finalize/finalize (its {@code
 * ClientCyclesIT} does the same against libpmix's C server) against our own {@code PMIxServer},
 * both in this JVM: the client connects over the server's real socket as rank 0 of a namespace
 * registered by hand. Afterwards the process (server included: its per-connection channels and
 * peers) holds what it held before the cycles: no extra thread or descriptor, every object of
 * every client cycle unreachable, no growth of the heap surviving a full collection; and the
 * server's accounting is honest (docs/lifecycle.md §6.2.10): one tombstone for the rank,
 * never one per cycle, and {@code nfinalized} no higher than {@code nlocalprocs}.
 */
class ClientCyclesJavaServerIT {
  private static final String NSPACE = "cycles";
  private static final Proc RANK0 = Proc.of(NSPACE, 0);

  /** As in pmix-client's ClientCyclesIT, where the reasoning is written down. */
  private static final long HEAP_GROWTH_BOUND = 256 * 1024;

  private TestingPmixServer server;
  // Static so that the per-cycle helpers are static and keep nothing of a cycle in a frame.
  private static Map<String, String> env;

  @BeforeEach
  void start() {
    server = TestingPmixServer.start();
    HandRegistered.rankZero(server, NSPACE, 1);
    env = server.server().setupFork(RANK0);
  }

  @AfterEach
  void stop() {
    while (ClientHolder.refCount() > 0) {
      PMIx.finalize();
    }
    TeardownContract.assertNothingRemains(ClientHolder.holder());
    server.close();
  }

  @Test
  void thousandCyclesLeaveNothingBehind() {
    for (int i = 0; i < 5; i++) {
      oneCycle(null, i);
    }
    Snapshot baseline = ProcessResources.snapshot();
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    long t0 = System.nanoTime();
    long heapAt100 = -1;
    for (int i = 1; i <= 1000; i++) {
      oneCycle(refs, i);
      if (i % 100 == 0) {
        ProcessResources.assertNoFdsBeyond(baseline.fds());
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
        "ClientCyclesJavaServerIT: 1000 cycles in %d ms; baseline %s; after %s; heap after full"
            + " GC at cycle 100: %d, at cycle 1000: %d (growth %d, bound %d)%n",
        elapsedMs, baseline, ProcessResources.snapshot(), heapAtHundred, heapAtEnd,
        heapAtEnd - heapAtHundred, HEAP_GROWTH_BOUND);
    assertTrue(
        heapAtEnd <= heapAtHundred + HEAP_GROWTH_BOUND,
        () -> "heap after full GC grew from " + heapAtHundred + " to " + heapAtEnd);
  }

  @Test
  void hundredNestedCyclesLeaveNothingBehind() {
    for (int i = 0; i < 5; i++) {
      oneCycle(null, i);
    }
    Snapshot baseline = ProcessResources.snapshot();
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    for (int i = 1; i <= 100; i++) {
      oneNestedCycle(refs, i);
    }
    assertBackToBaseline(baseline, refs);
    assertHonestAccounting();
    long heapAfter = ProcessResources.heapAfterFullGc();
    assertTrue(
        heapAfter <= baseline.heapAfterGc() + HEAP_GROWTH_BOUND,
        () -> "heap after full GC grew from " + baseline.heapAfterGc() + " to " + heapAfter);
  }

  private static void oneCycle(ProcessResources.Reachability refs, int i) {
    ClientState s = ClientHolder.init(env, List.of());
    if (refs != null) {
      remember(refs, i, s);
    }
    assertWorks(i);
    PMIx.finalize();
    TeardownContract.assertNothingRemains(ClientHolder.holder());
  }

  private static void oneNestedCycle(ProcessResources.Reachability refs, int i) {
    ClientState outer = ClientHolder.init(env, List.of());
    assertSame(outer, ClientHolder.init(env, List.of()), "a nested init builds nothing");
    remember(refs, i, outer);
    assertWorks(i);
    PMIx.finalize();
    assertTrue(PMIx.initialized(), "nested finalize " + i + " tore the library down");
    assertSame(outer, ClientHolder.peek());
    assertWorks(i);
    PMIx.finalize();
    TeardownContract.assertNothingRemains(ClientHolder.holder());
  }

  private static void assertWorks(int i) {
    assertEquals(RANK0, PMIx.myProc(), "cycle " + i);
    assertFalse(PMIx.isSingleton(), "cycle " + i);
    assertEquals(1, PMIx.get(Proc.wildcard(NSPACE), "pmix.job.size").asInt());
    assertEquals(0, PMIx.get(RANK0, "pmix.rank").asInt(), "cycle " + i);
    PMIx.fence();
  }

  private static void remember(ProcessResources.Reachability refs, int i, ClientState s) {
    refs.track("cycle " + i + " state", s);
    for (Map.Entry<String, Object> e : s.resources().entrySet()) {
      refs.track("cycle " + i + " " + e.getKey(), e.getValue());
    }
  }

  /** At most one (tombstoned) peer for the rank, and finalized accounting within bounds. */
  private void assertHonestAccounting() {
    ServerSnapshot snap = server.snapshot();
    long peers = snap.peers().stream().filter(p -> p.nspace().equals(NSPACE)).count();
    assertTrue(peers <= 1, snap::toString);
    NamespaceView ns = snap.namespace(NSPACE).orElseThrow();
    assertTrue(ns.nfinalized() <= ns.nlocalprocs(), snap::toString);
  }

  private static void assertBackToBaseline(Snapshot baseline, ProcessResources.Reachability refs) {
    TeardownContract.assertNothingRemains(ClientHolder.holder());
    assertEquals(List.of(), TeardownContract.libraryThreads(Role.CLIENT));
    ProcessResources.assertNoThreadsBeyond(baseline.threads());
    ProcessResources.assertNoFdsBeyond(baseline.fds());
    refs.assertAllCleared();
  }
}
