package io.pmix.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.internal.ClientHolder;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A client whose environment names no server: a job of one, and the init/finalize discipline. */
class SingletonTest {
  private static final Map<String, String> NO_SERVER = Map.of("PMIX_HOSTNAME", "testhost");

  @AfterEach
  void nothingLeft() {
    while (ClientHolder.peek() != null) {
      PMIx.finalize();
    }
    TeardownChecks.assertNothingRemains();
  }

  @Test
  void singletonPutGetFenceAndJobKeys() {
    Proc me = ClientHolder.init(NO_SERVER, List.of()).me();
    assertTrue(PMIx.isSingleton());
    assertEquals(0, me.rank());
    assertEquals("singleton.testhost." + ProcessHandle.current().pid(), me.nspace());
    PMIx.put(Scope.GLOBAL, "my.key", Value.of("v"));
    PMIx.put(Scope.INTERNAL, "my.internal", Value.of(7));
    assertEquals(Value.of("v"), PMIx.get(me, "my.key"));
    assertEquals(Value.of(7), PMIx.get(me, "my.internal"));
    PMIx.commit();
    PMIx.fence();
    PMIx.fence(List.of(me), Info.of("pmix.collect", true));
    Proc wild = Proc.wildcard(me.nspace());
    assertEquals(1, PMIx.get(wild, "pmix.job.size").asInt());
    assertEquals(1, PMIx.get(wild, "pmix.local.size").asInt());
    assertEquals("0", PMIx.get(wild, "pmix.lpeers").asString());
    assertEquals(1, PMIx.get(wild, "pmix.univ.size").asInt());
    assertEquals("testhost", PMIx.get(me, "pmix.hname").asString());
    assertEquals(0, PMIx.get(me, "pmix.rank").asInt());
    assertEquals(me, PMIx.get(me, "pmix.procid"));
    PmixException e = assertThrows(PmixException.class, () -> PMIx.get(me, "no.such.key"));
    assertEquals(Status.ERR_NOT_FOUND, e.status());
    PmixException u = assertThrows(PmixException.class, () -> PMIx.publish(Info.of("a", "b")));
    assertEquals(Status.ERR_UNREACH, u.status());
    // Connect and spawn need a server: UNREACH, as the C client answers when not connected.
    PmixException ns =
        assertThrows(PmixException.class, () -> PMIx.connect(List.of(me)));
    assertEquals(Status.ERR_UNREACH, ns.status());
    PmixException sp =
        assertThrows(
            PmixException.class,
            () -> PMIx.spawn(List.of(new Value.App("/bin/true", List.of(), List.of(), null, 1,
                List.of()))));
    assertEquals(Status.ERR_UNREACH, sp.status());
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();
  }

  @Test
  void localEventsReachOwnHandlers() throws Exception {
    var unused = ClientHolder.init(NO_SERVER, List.of());
    CompletableFuture<Event> got = new CompletableFuture<>();
    long id = PMIx.registerEventHandler(List.of(Status.of(-4242)), got::complete);
    PMIx.notifyEvent(Status.of(-4242), DataRange.PROC_LOCAL, Info.of("x", "y"));
    Event e = got.get(10, TimeUnit.SECONDS);
    assertEquals(-4242, e.status().code());
    assertEquals(PMIx.myProc(), e.source());
    assertEquals("y", e.find("x").orElseThrow().value().asString());
    PMIx.deregisterEventHandler(id);
  }

  @Test
  void nestedInitOnlyCountsAndTheLastFinalizeTearsDown() {
    Proc a = ClientHolder.init(NO_SERVER, List.of()).me();
    List<Thread> threads = TeardownChecks.libraryThreads();
    // The callback thread starts with the first callback: init needs none.
    assertEquals(1, threads.size(), "one progress thread");
    Proc b = ClientHolder.init(NO_SERVER, List.of()).me();
    assertEquals(a, b);
    PMIx.put(Scope.LOCAL, "k", Value.of(1));
    PMIx.finalize();
    assertTrue(PMIx.initialized());
    assertTrue(TeardownChecks.libraryThreads().containsAll(threads), "a nested finalize stops nothing");
    assertEquals(Value.of(1), PMIx.get(a, "k"));
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();
  }

  @Test
  void cyclesStartFromACleanSlate() {
    for (int i = 0; i < 50; i++) {
      Proc me = ClientHolder.init(NO_SERVER, List.of()).me();
      // Init's future is nobody else's: the progress thread completes it even when it is done
      // before the caller waits, so no callback thread starts (checked each cycle: a race).
      assertEquals(1, TeardownChecks.libraryThreads().size(), "cycle " + i + ": one thread");
      // A value put in an earlier cycle must not survive it.
      assertThrows(PmixException.class, () -> PMIx.get(me, "cycle.key"));
      PMIx.put(Scope.GLOBAL, "cycle.key", Value.of(i));
      PMIx.finalize();
      TeardownChecks.assertNothingRemains();
    }
  }

  @Test
  void blockingCallsFromCallbacksFailFast() throws Exception {
    var unused = ClientHolder.init(NO_SERVER, List.of());
    CompletableFuture<Throwable> fence = new CompletableFuture<>();
    CompletableFuture<Throwable> fin = new CompletableFuture<>();
    long id =
        PMIx.registerEventHandler(
            List.of(Status.of(-4243)),
            e -> {
              fence.complete(attempt(PMIx::fence));
              fin.complete(attempt(() -> PMIx.finalize()));
            });
    PMIx.notifyEvent(Status.of(-4243), DataRange.PROC_LOCAL);
    assertTrue(fence.get(10, TimeUnit.SECONDS) instanceof IllegalStateException);
    assertTrue(fin.get(10, TimeUnit.SECONDS) instanceof IllegalStateException);
    assertTrue(PMIx.initialized());
    PMIx.deregisterEventHandler(id);
  }

  private static Throwable attempt(Runnable r) {
    try {
      r.run();
      return new AssertionError("no exception");
    } catch (RuntimeException e) {
      return e;
    }
  }

  @Test
  void callerMistakes() {
    assertThrows(IllegalStateException.class, () -> PMIx.put(Scope.LOCAL, "k", Value.of(1)));
    assertThrows(IllegalStateException.class, PMIx::commit);
    assertThrows(IllegalStateException.class, () -> PMIx.finalize());
    var unused = ClientHolder.init(NO_SERVER, List.of());
    assertThrows(IllegalArgumentException.class, () -> PMIx.put(Scope.UNDEF, "k", Value.of(1)));
    assertThrows(
        IllegalArgumentException.class, () -> PMIx.put(Scope.LOCAL, "x".repeat(512), Value.of(1)));
    assertThrows(NullPointerException.class, () -> PMIx.put(Scope.LOCAL, "k", null));
  }

  @Test
  void callsAfterTheLastFinalizeAreCallerMistakes() {
    var unused = ClientHolder.init(NO_SERVER, List.of());
    PMIx.finalize();
    assertThrows(IllegalStateException.class, () -> PMIx.getAsync(Proc.of("x", 0), "k"));
    assertThrows(IllegalStateException.class, PMIx::myProc);
  }
}
