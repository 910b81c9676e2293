package io.pmix.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.TeardownContract;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The shared teardown contract for the client, as a singleton (no server needed). */
class ClientTeardownTest extends TeardownContract<ClientState> {
  private static final Map<String, String> NO_SERVER = Map.of("PMIX_HOSTNAME", "testhost");

  @Override
  protected LibraryHolder<ClientState> holder() {
    return ClientHolder.holder();
  }

  @Override
  protected void init() {
    var unused = ClientHolder.init(NO_SERVER, List.of());
  }

  @Override
  protected void finalizeOnce() {
    PMIx.finalize();
  }

  @Override
  protected void exercise() {
    Proc me = PMIx.myProc();
    PMIx.put(Scope.GLOBAL, "contract.key", Value.of(1));
    assertEquals(Value.of(1), PMIx.get(me, "contract.key"));
    PMIx.fence();
    CompletableFuture<Event> got = new CompletableFuture<>();
    var unused = PMIx.registerEventHandler(List.of(Status.of(-4711)), got::complete);
    PMIx.notifyEvent(Status.of(-4711), DataRange.PROC_LOCAL, Info.of("k", "v"));
    try {
      assertEquals(-4711, got.get(10, TimeUnit.SECONDS).status().code());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    // A registration left in place: the teardown must drop it.
    var unused2 = PMIx.registerEventHandler(List.of(), e -> {});
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIx.initialized());
  }
}
