package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pmix.client.PMIx;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.TeardownContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared teardown contract for the client connected to the C host server: this JVM takes the
 * place of the job's only rank (whose launched child only sleeps), cycling and nesting inits.
 */
class ClientServerTeardownIT extends TeardownContract<ClientState> {
  private static HostServerRun.Standby server;

  @BeforeAll
  static void startServer() {
    server = HostServerRun.standby(Duration.ofMinutes(10));
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected LibraryHolder<ClientState> holder() {
    return ClientHolder.holder();
  }

  @Override
  protected void init() {
    var unused = ClientHolder.init(server.env(), List.of());
  }

  @Override
  protected void finalizeOnce() {
    PMIx.finalize();
  }

  @Override
  protected void exercise() {
    Proc me = PMIx.myProc();
    assertFalse(PMIx.isSingleton());
    assertEquals(1, PMIx.get(Proc.wildcard(me.nspace()), "pmix.job.size").asInt());
    PMIx.put(Scope.GLOBAL, "contract.key", Value.of(7));
    PMIx.commit();
    PMIx.fence(Info.of("pmix.collect", true));
    assertEquals(Value.of(7), PMIx.get(me, "contract.key"));
    var unused = PMIx.registerEventHandler(List.of(), e -> {});
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIx.initialized());
  }
}
