package io.pmix.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.ScriptedServer;
import io.pmix.common.testing.TeardownContract;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared teardown contract for the client connected to a server (the scripted one, as the
 * tool's ToolFakeServerTeardownTest): each cycle puts, commits, fences, gets, publishes, looks
 * up, queries, logs, receives a pushed event and leaves a registration and a publication behind,
 * so the teardown has a connection, a store and registrations to drop.
 */
class ClientScriptedServerTeardownTest extends TeardownContract<ClientState> {
  private static ScriptedServer server;

  @BeforeAll
  static void start() {
    server = new ScriptedServer();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Override
  protected LibraryHolder<ClientState> holder() {
    return ClientHolder.holder();
  }

  @Override
  protected void init() {
    var unused = ClientHolder.init(server.clientEnvironment(0), List.of());
  }

  @Override
  protected void finalizeOnce() {
    PMIx.finalize();
  }

  @Override
  protected void exercise() {
    assertFalse(PMIx.isSingleton());
    Proc me = PMIx.myProc();
    assertEquals(Proc.of(ScriptedServer.CLIENT_NSPACE, 0), me);
    assertEquals(
        ScriptedServer.JOB_SIZE,
        PMIx.get(Proc.wildcard(ScriptedServer.CLIENT_NSPACE), "pmix.job.size").asInt());
    PMIx.put(Scope.GLOBAL, "contract.key", Value.of(7));
    PMIx.commit();
    PMIx.fence();
    assertEquals(Value.of(7), PMIx.get(me, "contract.key"));
    PMIx.publish(Info.of("contract.svc", "here"));
    assertEquals(Value.of("here"), PMIx.lookup(List.of("contract.svc")).get(0).value());
    PMIx.log(List.of(Info.of("pmix.log.stderr", "from the contract\n")));
    CompletableFuture<Event> pushed = new CompletableFuture<>();
    // With a directive the registration reaches the server every time (it would not for a code
    // the server knows already), and the server pushes its cached event on each.
    var unused =
        PMIx.registerEventHandler(
            List.of(ScriptedServer.PUSHED_EVENT), pushed::complete, Info.of("pmix.evname", "c"));
    try {
      assertEquals(ScriptedServer.PUSHED_EVENT, pushed.get(10, TimeUnit.SECONDS).status());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIx.initialized());
  }
}
