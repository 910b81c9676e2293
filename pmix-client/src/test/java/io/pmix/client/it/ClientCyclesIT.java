package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.PMIx;
import io.pmix.client.TeardownChecks;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.Proc;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.ProcessResources;
import io.pmix.common.testing.ProcessResources.Snapshot;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The cycling guarantee of docs/lifecycle.md §6.2.8 at volume, in this JVM,
 * against the real libpmix C host server (pmix_host_server.c, a separate process): 1,000
 * init/finalize cycles and 100 nested init/init/finalize/finalize, each cycle proving it got a
 * working client, and afterwards the process holds exactly what it held before: no extra live
 * thread, no extra open descriptor, every object of every finished cycle unreachable, and no
 * growth of the heap that survives a full collection.
 *
 * <p>This JVM takes the place of the job's only rank (the launched child only sleeps), as in
 * {@link ClientServerTeardownIT}. The baseline is taken after a few warm-up cycles, so that what a
 * first init loads once for the life of the JVM (classes, Netty's native epoll library and its
 * static buffers, JIT code) is in the baseline and not counted as growth.
 */
class ClientCyclesIT {

  private static final int CYCLES = 1000;
  private static final int NESTED = 100;
  private static final int WARMUP = 5;
  private static final String PROGRESS = Role.CLIENT.progressThread();
  private static final String CALLBACK = Role.CLIENT.callbackThread();

  /**
   * The allowed growth of the heap surviving a full collection between cycle 100 and cycle 1,000.
   * One cycle's state retains tens of kilobytes (its session with a Netty event loop group and
   * executor, two threads with their stacks' Java objects, the job data cached at init; the test
   * prints the measured figure), so one leaked state per cycle would add tens of megabytes over
   * those 900 cycles, and even a leak of 300 bytes per cycle (an entry in a static map) would
   * exceed this bound. What the bound absorbs is the JVM's own noise between two full collections
   * in a JVM shared with other tests (JIT deoptimisation records, a lazily grown internal table),
   * seen here at well under 100 KiB.
   */
  private static final long HEAP_GROWTH_BOUND = 256 * 1024;

  private static HostServerRun.Standby server;
  private static Map<String, String> env;
  private static Proc rank0;

  @BeforeAll
  static void startServer() {
    server = HostServerRun.standby(Duration.ofMinutes(15));
    env = server.env();
    rank0 = server.rank0();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void finalizeLeftovers() {
    while (ClientHolder.refCount() > 0) {
      PMIx.finalize();
    }
    TeardownChecks.assertNothingRemains();
  }

  @Test
  void thousandCyclesLeaveNothingBehind() {
    for (int i = 0; i < WARMUP; i++) {
      var unused = oneCycle(i, null);
    }
    Snapshot baseline = ProcessResources.snapshot();
    long perCycleHeap = heapOfOneLiveCycle(baseline);
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    long t0 = System.nanoTime();
    long heapAt100 = -1;
    for (int i = 1; i <= CYCLES; i++) {
      List<String> names = oneCycle(i, refs);
      // The progress thread, and the callback thread where something was handed to it (it
      // starts with its first task): each once, nothing else.
      assertTrue(
          names.equals(List.of(PROGRESS)) || names.equals(List.of(CALLBACK, PROGRESS)),
          "cycle " + i + " runs " + names);
      if (i % 100 == 0) {
        // Between cycles: no descriptor, no library thread beyond the baseline, at every hundred.
        ProcessResources.assertNoFdsBeyond(baseline.fds());
        assertEquals(List.of(), TeardownChecks.libraryThreads(), "after cycle " + i);
      }
      if (i == 100) {
        // Every finished cycle is collectable already here; and the tracker then holds nothing,
        // as at the end, so the two heap figures compare like with like.
        refs.assertAllCleared();
        heapAt100 = ProcessResources.heapAfterFullGc();
      }
    }
    long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
    assertBackToBaseline(baseline, refs);
    long heapAtEnd = ProcessResources.heapAfterFullGc();
    long heapAtHundred = heapAt100;
    System.out.printf(
        "ClientCyclesIT: %d cycles in %d ms; baseline %s; after %s; one live cycle holds about %d"
            + " bytes; heap after full GC at cycle 100: %d, at cycle %d: %d (growth %d, bound %d)%n",
        CYCLES, elapsedMs, baseline, ProcessResources.snapshot(), perCycleHeap, heapAt100, CYCLES,
        heapAtEnd, heapAtEnd - heapAtHundred, HEAP_GROWTH_BOUND);
    assertTrue(
        heapAtEnd <= heapAtHundred + HEAP_GROWTH_BOUND,
        () -> "heap after full GC grew from " + heapAtHundred + " (cycle 100) to " + heapAtEnd
            + " (cycle " + CYCLES + ")");
  }

  @Test
  void hundredNestedCyclesLeaveNothingBehind() {
    for (int i = 0; i < WARMUP; i++) {
      var unused = oneCycle(i, null);
    }
    Snapshot baseline = ProcessResources.snapshot();
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    WeakReference<ClientState> previous = new WeakReference<>(null);
    long t0 = System.nanoTime();
    for (int i = 1; i <= NESTED; i++) {
      previous = oneNestedCycle(i, refs, previous);
    }
    long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
    assertBackToBaseline(baseline, refs);
    long heapAfter = ProcessResources.heapAfterFullGc();
    System.out.printf(
        "ClientCyclesIT: %d nested cycles in %d ms; baseline %s; heap after full GC at the end %d"
            + " (growth %d)%n",
        NESTED, elapsedMs, baseline, heapAfter, heapAfter - baseline.heapAfterGc());
    assertTrue(
        heapAfter <= baseline.heapAfterGc() + HEAP_GROWTH_BOUND,
        () -> "heap after full GC grew from " + baseline.heapAfterGc() + " to " + heapAfter);
  }

  /**
   * init, init, finalize, finalize: the nested pair builds and tears down nothing, the library
   * keeps working in between, and the last finalize leaves nothing. A method of its own so that no
   * local variable of the test's frame keeps the cycle's state reachable afterwards.
   *
   * @return a weak reference to the cycle's state
   */
  private static WeakReference<ClientState> oneNestedCycle(
      int i, ProcessResources.Reachability refs, WeakReference<ClientState> previous) {
    ClientState outer = ClientHolder.init(env, List.of());
    List<Thread> threads = TeardownChecks.libraryThreads();
    ClientState inner = ClientHolder.init(env, List.of());
    assertSame(outer, inner, "a nested init builds nothing");
    assertEquals(2, ClientHolder.refCount());
    assertFalse(previous.refersTo(outer), "nested cycle " + i + " reuses the previous state");
    remember(refs, i, outer);
    assertWorks(i);
    PMIx.finalize();
    // The nested finalize leaves the library running, untouched, and still working.
    assertTrue(PMIx.initialized(), "nested finalize " + i + " tore the library down");
    assertEquals(1, ClientHolder.refCount());
    assertSame(outer, ClientHolder.peek());
    // Stopped nothing (the callback thread starts with its first task: it may have since).
    assertTrue(
        TeardownChecks.libraryThreads().containsAll(threads),
        () -> "nested finalize " + i + " stopped one of " + threads);
    assertWorks(i);
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();
    return new WeakReference<>(outer);
  }

  /**
   * One init, proof of a working client, one finalize, the holder pristine again. Records weak
   * references to the cycle's state and every object it owns when {@code refs} is given.
   *
   * @return the names of the library threads the cycle ran, in a stable order
   */
  private static List<String> oneCycle(int i, ProcessResources.Reachability refs) {
    ClientState s = ClientHolder.init(env, List.of());
    assertEquals(1, ClientHolder.refCount());
    if (refs != null) {
      remember(refs, i, s);
    }
    assertWorks(i);
    List<String> names =
        TeardownChecks.libraryThreads().stream().map(Thread::getName).sorted()
            .collect(Collectors.toList());
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();
    return names;
  }

  /**
   * The cycle got a working client, the same as the first: it is rank 0 of the server's job under
   * a server (not a singleton, whatever an earlier cycle was), the job data of init is there, and
   * a fence makes a round trip through the server on this cycle's connection.
   */
  private static void assertWorks(int i) {
    assertEquals(rank0, PMIx.myProc(), "cycle " + i);
    assertFalse(PMIx.isSingleton(), "cycle " + i);
    assertEquals(1, PMIx.get(Proc.wildcard(rank0.nspace()), "pmix.job.size").asInt());
    assertEquals(0, PMIx.get(rank0, "pmix.rank").asInt(), "cycle " + i);
    PMIx.fence();
  }

  private static void remember(ProcessResources.Reachability refs, int i, ClientState s) {
    refs.track("cycle " + i + " state", s);
    for (Map.Entry<String, Object> e : s.resources().entrySet()) {
      refs.track("cycle " + i + " " + e.getKey(), e.getValue());
    }
  }

  /**
   * What one live cycle adds to the heap surviving a full collection, for the figure in the
   * report and the reasoning behind {@link #HEAP_GROWTH_BOUND}.
   */
  private static long heapOfOneLiveCycle(Snapshot baseline) {
    var unused = ClientHolder.init(env, List.of());
    assertWorks(0);
    long live = ProcessResources.heapAfterFullGc();
    PMIx.finalize();
    return live - baseline.heapAfterGc();
  }

  private static void assertBackToBaseline(
      Snapshot baseline, ProcessResources.Reachability refs) {
    TeardownChecks.assertNothingRemains();
    ProcessResources.assertNoThreadsBeyond(baseline.threads());
    ProcessResources.assertNoFdsBeyond(baseline.fds());
    refs.assertAllCleared();
  }
}
