package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.PMIx;
import io.pmix.client.TeardownChecks;
import io.pmix.client.internal.ClientHolder;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * This test JVM itself as the client, so the teardown can be inspected from inside: the C host
 * server registers a job of one whose launched child only sleeps, and this JVM connects in that
 * child's place with the environment the server would have given it.
 */
class InProcessClientIT {
  private HostServerRun.Standby server;
  private Map<String, String> env;

  @BeforeEach
  void startServer() {
    // Upcalls logged: a test waits for the host's log of a request instead of sleeping.
    server = HostServerRun.standby(Duration.ofMinutes(5), true);
    env = server.env();
  }

  @AfterEach
  void stop() {
    while (ClientHolder.peek() != null) {
      PMIx.finalize();
    }
    server.close();
    TeardownChecks.assertNothingRemains();
  }

  @Test
  void singletonThenClientThenSingletonAgain() {
    Proc single = ClientHolder.init(Map.of(), List.of()).me();
    assertTrue(PMIx.isSingleton());
    PMIx.put(Scope.GLOBAL, "left.over", Value.of("from the singleton"));
    PMIx.fence();
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();

    Proc me = ClientHolder.init(env, List.of()).me();
    assertFalse(PMIx.isSingleton(), "the singleton flag of the previous cycle must not survive");
    assertEquals(Proc.of(env.get("PMIX_NAMESPACE"), 0), me);
    assertEquals(1, PMIx.get(Proc.wildcard(me.nspace()), "pmix.job.size").asInt());
    assertThrows(PmixException.class, () -> PMIx.get(me, "left.over"));
    PMIx.put(Scope.GLOBAL, "k", Value.of(42));
    PMIx.commit();
    PMIx.fence(Info.of("pmix.collect", true));
    assertEquals(Value.of(42), PMIx.get(me, "k"));
    // This cycle's own threads: the progress thread, and the callback thread if something was
    // handed to it (it starts with its first task).
    List<String> names = new java.util.ArrayList<>();
    for (Thread t : TeardownChecks.libraryThreads()) {
      names.add(t.getName());
    }
    assertTrue(names.contains("pmix-client-progress"), names::toString);
    assertTrue(names.size() == 1 || names.contains("pmix-client-callback"), names::toString);
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();

    Proc again = ClientHolder.init(Map.of(), List.of()).me();
    assertTrue(PMIx.isSingleton());
    assertEquals(single, again);
    PMIx.finalize();
  }

  @Test
  void aCompressedStringComesBackFromGetAsItsText() throws Exception {
    Proc me = ClientHolder.init(env, List.of()).me();
    String text = "node-0001,".repeat(1_000);
    byte[] plain = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
    zipped.write(new byte[] {(byte) plain.length, (byte) (plain.length >> 8), 0, 0});
    try (java.util.zip.DeflaterOutputStream z = new java.util.zip.DeflaterOutputStream(zipped)) {
      z.write(plain);
    }
    PMIx.put(
        Scope.GLOBAL,
        "long.list",
        new Value.Bytes(io.pmix.common.DataType.COMPRESSED_STRING, zipped.toByteArray()));
    PMIx.commit();
    PMIx.fence(Info.of("pmix.collect", true));
    assertEquals(Value.of(text), PMIx.get(me, "long.list"), "get expands as libpmix's get does");
    PMIx.finalize();
  }

  @Test
  void nestedInitUnderAServer() {
    Proc a = ClientHolder.init(env, List.of()).me();
    List<Thread> threads = TeardownChecks.libraryThreads();
    Proc b = ClientHolder.init(env, List.of()).me();
    assertEquals(a, b);
    PMIx.finalize();
    assertTrue(PMIx.initialized());
    assertTrue(
        TeardownChecks.libraryThreads().containsAll(threads), "a nested finalize stops nothing");
    PMIx.fence();
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();
  }

  /**
   * Job information of our own namespace is answered on the calling thread (the future is
   * complete when returned), and the same as a get the progress thread answers (a directive
   * sends it there); other gets still go the usual way.
   */
  @Test
  void jobInformationIsAnsweredOnTheCallingThread() throws Exception {
    Proc me = ClientHolder.init(env, List.of()).me();
    Proc job = Proc.wildcard(me.nspace());
    for (String key : List.of("pmix.job.size", "pmix.local.size", "pmix.univ.size")) {
      CompletableFuture<Value> here = PMIx.getAsync(job, key);
      assertTrue(here.isDone(), key);
      Value there = PMIx.get(job, key, Info.of("pmix.timeout", Value.of(5)));
      assertEquals(there, here.get(), key);
    }
    assertEquals(1, PMIx.get(job, "pmix.job.size").asInt());
    PmixException e =
        assertThrows(PmixException.class, () -> PMIx.get(job, "pmix.no.such.key"));
    assertEquals(Status.ERR_NOT_FOUND, e.status());
    PMIx.finalize();
    assertThrows(IllegalStateException.class, () -> PMIx.get(job, "pmix.job.size"));
  }

  @Test
  void aGetOfAKeyNobodyPutFailsFromTheServer() {
    Proc me = ClientHolder.init(env, List.of()).me();
    // A reserved key that the job data lacks: one GETNB with pmix.immediate, answered NOT_FOUND.
    PmixException e =
        assertThrows(PmixException.class, () -> PMIx.get(me, "pmix.no.such.key"));
    assertEquals(Status.ERR_NOT_FOUND, e.status());
    // The server of a 4.2.2 library cannot answer queries it has no host support for, or can.
    try {
      List<Info> r = PMIx.query(List.of(new Value.Query(List.of("pmix.qry.ns"), List.of())));
      assertFalse(r.isEmpty());
    } catch (PmixException q) {
      assertTrue(q.status().code() < 0);
    }
    PMIx.log(List.of(Info.of("pmix.log.stderr", "log line from the Java client\n")));
    PMIx.finalize();
  }

  @Test
  void losingTheServerFailsPendingWorkAndRaisesAnEvent() throws Exception {
    var unused = ClientHolder.init(env, List.of());
    CompletableFuture<Event> lost = new CompletableFuture<>();
    PMIx.registerEventHandler(List.of(Status.ERR_LOST_CONNECTION), lost::complete);
    // A waiting lookup of a key nobody publishes stays parked at the host: once the host has
    // logged the lookup (a wait for a key it does not hold, which it parks), it is not done.
    CompletableFuture<String> atHost =
        server.server().watchStderr(l -> l.startsWith("HOSTDBG lookup ") && l.contains(" wait=1"));
    CompletableFuture<List<Value.PData>> pending =
        PMIx.lookupAsync(
            List.of("never.published"),
            Info.of("pmix.wait", Value.of(1)),
            Info.of("pmix.timeout", Value.of(120)));
    String logged = Await.get(atHost, Duration.ofSeconds(30));
    assertTrue(logged.contains("nkeys=1"), logged);
    assertFalse(pending.isDone(), () -> "lookup answered: " + pending);
    server.close();
    Event e = Await.get(lost, Duration.ofSeconds(30));
    assertEquals(Status.ERR_LOST_CONNECTION, e.status());
    ExecutionException x =
        assertThrows(ExecutionException.class, () -> Await.get(pending, Duration.ofSeconds(30)));
    assertTrue(x.getCause() instanceof PmixException, x.toString());
    PmixException after = assertThrows(PmixException.class, () -> PMIx.fence());
    assertEquals(Status.ERR_LOST_CONNECTION, after.status());
    // Finalize after the server went away returns at once and cleans up.
    PMIx.finalize();
    TeardownChecks.assertNothingRemains();
  }
}
