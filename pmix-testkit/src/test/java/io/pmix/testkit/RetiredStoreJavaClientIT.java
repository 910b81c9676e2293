package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.PMIx;
import io.pmix.client.internal.ClientHolder;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.DstoreReader;
import io.pmix.common.internal.gds.GdsKind;
import io.pmix.common.internal.gds.GdsModule;
import io.pmix.common.internal.gds.HeldReaderLock;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.TeardownContract;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jspecify.annotations.Nullable;

/**
 * A Java client told to read ds12 whose store our server then retires (a reader lost inside a
 * read keeps the store's rwlock: here the test keeps it) gets what the server has, not what the
 * store held: the namespace's job data (3 processes), written while the lock was free, is stale
 * once the namespace is registered again (1 process); that write cannot take the lock, the store
 * is retired and hides the namespace, and the client's gets go to the server (docs/gds.md §10,
 * "A lost lock"). The client runs in this JVM, as rank 0 of a namespace
 * registered by hand.
 */
@Timeout(120)
class RetiredStoreJavaClientIT {
  private static final String NSPACE = "retired";
  private static final Proc RANK0 = Proc.of(NSPACE, 0);

  @Test
  void aJavaClientOfARetiredStoreReadsTheServersData() {
    try (TestingPmixServer server =
        TestingPmixServer.builder()
            .serverOptions(o -> o.gds("ds12,hash").storeLockTimeout(Duration.ofSeconds(1)))
            .build()) {
      HandRegistered.rankZero(server, NSPACE, 3);
      Map<String, String> env = server.server().setupFork(RANK0);
      assertEquals("ds12,hash", env.get("PMIX_GDS_MODULE"), env::toString);
      Path ds12 = server.server().gdsDirectories().get(0);
      // The job data lands in the store on the server's writer thread, after registration.
      Await.until(() -> storedJobSize(ds12), Value.uint32(3)::equals, Duration.ofSeconds(30));
      try (HeldReaderLock lock = HeldReaderLock.takeDs12(ds12)) {
        // Registered again with another job size: the job data the store holds is stale now.
        assertEquals(Status.OPERATION_SUCCEEDED, server.server().deregisterNspace(NSPACE));
        HandRegistered.rankZero(server, NSPACE, 1);
        long getnbs = getnbs(server);
        assertEquals(RANK0, ClientHolder.init(env, List.of()).me());
        try {
          assertEquals(1, PMIx.get(Proc.wildcard(NSPACE), "pmix.job.size").asInt());
          assertTrue(getnbs(server) > getnbs, "the job size was not asked of the server");
          // Rank-level job data, hidden with the rank's records in the store.
          assertEquals(0, PMIx.get(RANK0, "pmix.lrank").asInt());
          assertEquals(0, PMIx.get(RANK0, "pmix.nrank").asInt());
          PMIx.put(Scope.GLOBAL, "k.retired", Value.of("mine"));
          PMIx.commit();
          PMIx.fence();
          assertEquals(Value.of("mine"), PMIx.get(RANK0, "k.retired"));
        } finally {
          PMIx.finalize();
        }
        TeardownContract.assertNothingRemains(ClientHolder.holder());
        Await.until(
            () -> server.server().setupFork(RANK0).get("PMIX_GDS_MODULE"),
            "hash"::equals,
            Duration.ofSeconds(30));
      }
    }
  }

  /** What a ds12 reader finds as the namespace's job size now, or null. */
  private static @Nullable Value storedJobSize(Path dir) {
    try (DstoreReader r =
        DstoreReader.attach(GdsKind.DS12, dir, NSPACE, WireFormat.DEFAULT, Duration.ofSeconds(5))) {
      return r.fetch(Proc.wildcard(NSPACE), "pmix.job.size") instanceof GdsModule.Fetched.Found f
          ? f.value()
          : null;
    } catch (RuntimeException e) {
      return null; // not written yet
    }
  }

  private static long getnbs(TestingPmixServer server) {
    return server.server().requestCounts().getOrDefault("GETNB", 0L);
  }
}
