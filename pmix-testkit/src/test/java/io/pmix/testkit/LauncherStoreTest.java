package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.dataserver.LocalDataService;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where the launcher's publish/lookup store runs: on its server's progress thread (pmixrun and
 * {@link TestingPmixServer}), so that the server may call the host's data calls there; and what a
 * host asked before it has its store answers.
 */
class LauncherStoreTest {

  @Test
  void theTestingServersStoreRunsOnTheServersProgressThread() throws Exception {
    try (TestingPmixServer pmix = TestingPmixServer.start()) {
      assertTrue(pmix.host().dataCallsReturnAtOnce());
      LocalDataService store = (LocalDataService) pmix.host().dataService();
      String thread =
          store
              .inspect(s -> Thread.currentThread().getName())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      assertEquals(progressThreadOf(pmix.server()), thread);
    }
  }

  @Test
  void aHostWithoutItsStoreYetRefusesDataCallsAtOnceAndTakesItsStoreOnce() throws Exception {
    SingleNodeHost host = SingleNodeHost.storeOnServerThread("node");
    assertThrows(IllegalStateException.class, host::dataService);
    CompletableFuture<Void> early =
        host.publish(Proc.of("job", 0), List.of(Info.of("k", "v"))).toCompletableFuture();
    ExecutionException e = assertThrows(ExecutionException.class, () -> early.get(10, TimeUnit.SECONDS));
    assertTrue(
        e.getCause() instanceof PmixException p && p.status() == Status.ERR_NOT_AVAILABLE,
        e.toString());
    try (PMIxServer server = PMIxServer.init(host, ServerOptions.defaults())) {
      host.storeOn(server, DataStoreOptions.defaults());
      assertThrows(
          IllegalStateException.class, () -> host.storeOn(server, DataStoreOptions.defaults()));
      String thread =
          ((LocalDataService) host.dataService())
              .inspect(s -> Thread.currentThread().getName())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      assertEquals(progressThreadOf(server), thread);
    } finally {
      host.close();
    }
  }

  /** The name of the thread the server's progress executor runs tasks on. */
  private static String progressThreadOf(PMIxServer server) throws Exception {
    return server
        .progressExecutor()
        .submit(() -> Thread.currentThread().getName())
        .get(10, TimeUnit.SECONDS);
  }
}
