package io.pmix.dataserver;

import static io.pmix.dataserver.Futures.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.server.HostModule;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The adapter that serves a PMIxServer's publish/lookup/unpublish upcalls from a DataService. */
class DataServiceHostModuleTest {
  private final LocalDataService service = LocalDataService.create();
  private final HostModule host =
      new DataServiceHostModule(service, IdentityResolver.fromServerInfo("node0"));

  @AfterEach
  void close() {
    service.close();
  }

  /** The info a PMIx server hands the host: the client's, plus the uid (and gid) it appends. */
  private static List<Info> fromServer(int uid, int gid, Info... clientInfo) {
    List<Info> info = new ArrayList<>(List.of(clientInfo));
    info.add(Info.of(Keys.USERID, Value.uint32(uid)));
    info.add(Info.of(Keys.GRPID, Value.uint32(gid)));
    return info;
  }

  private static Status failure(CompletionStage<?> stage) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> stage.toCompletableFuture().get());
    assertTrue(e.getCause() instanceof PmixException, e.toString());
    return ((PmixException) e.getCause()).status();
  }

  @Test
  void upcallsAreServedFromTheStore() {
    Proc server = Proc.of("job", 0);
    Proc client = Proc.of("job", 1);
    Void unused = get(host.publish(server, fromServer(1000, 100, Info.of("svc", "port"))));
    List<Value.PData> found = get(host.lookup(client, List.of("svc"), fromServer(1000, 100)));
    assertEquals(List.of(new Value.PData(server, "svc", Value.of("port"))), found);
    Void unused2 = get(host.unpublish(client, List.of("svc"), fromServer(1000, 100)));
    assertEquals(Status.ERR_NOT_FOUND, failure(host.lookup(client, List.of("svc"), fromServer(1000, 100))));
  }

  @Test
  void theStoresRefusalsReachTheClientAsTheirStatus() {
    Proc p = Proc.of("job", 0);
    Void unused = get(host.publish(p, fromServer(1000, 100, Info.of("svc", "port"))));
    assertEquals(
        Status.ERR_DUPLICATE_KEY, failure(host.publish(Proc.of("job", 1), fromServer(1000, 100, Info.of("svc", "x")))));
    assertEquals(
        Status.ERR_NO_PERMISSIONS, failure(host.lookup(Proc.of("other", 0), List.of("svc"), fromServer(2000, 200))));
  }

  @Test
  void partialResultsAreAnsweredWithTheDataFound() {
    Proc p = Proc.of("job", 0);
    Void unused = get(host.publish(p, fromServer(1000, 100, Info.of("a", "1"))));
    List<Value.PData> found = get(host.lookup(p, List.of("a", "b"), fromServer(1000, 100)));
    assertEquals(1, found.size());
  }

  @Test
  void aCallerWithoutAUidIsRefused() {
    assertEquals(
        Status.ERR_NO_PERMISSIONS, failure(host.publish(Proc.of("job", 0), List.of(Info.of("a", "1")))));
    assertEquals(Status.ERR_NO_PERMISSIONS, failure(host.lookup(Proc.of("job", 0), List.of("a"), List.of())));
    assertEquals(Status.ERR_NO_PERMISSIONS, failure(host.unpublish(Proc.of("job", 0), List.of("a"), List.of())));
  }

  @Test
  void aResolverPlacesTheCaller() {
    IdentityResolver r = IdentityResolver.fromServerInfo("n3", p -> p.rank() % 2, p -> 7);
    Identity id = r.resolve(Proc.of("job", 3), fromServer(1000, 100));
    assertEquals(new Identity(Proc.of("job", 3), 1000, 100, 1, 7, "n3"), id);
    Identity noGid =
        r.resolve(Proc.of("job", 2), List.of(Info.of(Keys.USERID, Value.uint32(1000))));
    assertEquals(Identity.UNKNOWN, noGid.gid());
  }
}
