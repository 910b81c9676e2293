package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jspecify.annotations.Nullable;

/**
 * A Java client told to read a ds12 store that our server then retires (a reader lost inside a
 * read keeps the store's rwlock: here the test keeps it) gets what the server has for the data
 * written after the retirement: its commit cannot be written, so its rank is hidden, rank-level
 * job data included, and those gets go to the server (docs/gds.md §10, "A lost lock"). A
 * namespace registered after the retirement lives in a fresh ds12 store, which its client is told
 * of and runs on; the retired store is removed once its last namespace is gone. The clients run in
 * this JVM, one after the other, each as rank 0 of a namespace registered by hand.
 */
@Timeout(120)
class RetiredStoreJavaClientIT {
  private static final String NSPACE = "retired";
  private static final Proc RANK0 = Proc.of(NSPACE, 0);
  private static final Duration WAIT = Duration.ofSeconds(30);

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
      Await.until(() -> storedJobSize(ds12, NSPACE), Value.uint32(3)::equals, WAIT);
      try (HeldReaderLock lock = HeldReaderLock.takeDs12(ds12)) {
        // Another namespace's job data cannot take the lock: the store is retired.
        HandRegistered.rankZero(server, "later", 1);
        Await.until(
            () -> server.server().setupFork(RANK0).get("PMIX_GDS_MODULE"), "hash"::equals, WAIT);
        long getnbs = getnbs(server);
        assertEquals(RANK0, ClientHolder.init(env, List.of()).me());
        try {
          assertEquals(3, PMIx.get(Proc.wildcard(NSPACE), "pmix.job.size").asInt());
          PMIx.put(Scope.GLOBAL, "k.retired", Value.of("mine"));
          PMIx.commit();
          PMIx.fence();
          assertEquals(Value.of("mine"), PMIx.get(RANK0, "k.retired"));
          // Rank-level job data, hidden with the rank's records when its commit came.
          assertEquals(0, PMIx.get(RANK0, "pmix.lrank").asInt());
          assertEquals(0, PMIx.get(RANK0, "pmix.nrank").asInt());
          assertTrue(getnbs(server) > getnbs, "the rank's job data was not asked of the server");
        } finally {
          PMIx.finalize();
        }
        TeardownContract.assertNothingRemains(ClientHolder.holder());

        HandRegistered.rankZero(server, "fresh", 2);
        Proc fresh = Proc.of("fresh", 0);
        Map<String, String> freshEnv = server.server().setupFork(fresh);
        assertEquals("ds12,hash", freshEnv.get("PMIX_GDS_MODULE"), freshEnv::toString);
        Path dir = Path.of(freshEnv.get(GdsKind.ESH_BASE_PATH));
        assertFalse(dir.equals(ds12), dir::toString);
        Await.until(() -> storedJobSize(dir, "fresh"), Value.uint32(2)::equals, WAIT);
        assertEquals(fresh, ClientHolder.init(freshEnv, List.of()).me());
        try {
          assertEquals(2, PMIx.get(Proc.wildcard("fresh"), "pmix.job.size").asInt());
          assertEquals(0, PMIx.get(fresh, "pmix.lrank").asInt());
        } finally {
          PMIx.finalize();
        }
        TeardownContract.assertNothingRemains(ClientHolder.holder());

        assertTrue(Files.isDirectory(ds12), "removed while namespaces live in it");
        assertEquals(Status.OPERATION_SUCCEEDED, server.server().deregisterNspace(NSPACE));
        assertEquals(Status.OPERATION_SUCCEEDED, server.server().deregisterNspace("later"));
        Await.until(() -> Files.exists(ds12), Boolean.FALSE::equals, WAIT);
      }
    }
  }

  /** What a ds12 reader of {@code dir} finds as {@code nspace}'s job size now, or null. */
  private static @Nullable Value storedJobSize(Path dir, String nspace) {
    try (DstoreReader r =
        DstoreReader.attach(GdsKind.DS12, dir, nspace, WireFormat.DEFAULT, Duration.ofSeconds(5))) {
      return r.fetch(Proc.wildcard(nspace), "pmix.job.size") instanceof GdsModule.Fetched.Found f
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
