package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.GdsModule.Fetched;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * ds12's fcntl lock (libpmix builds without process-shared rwlocks) between this JVM and another
 * process taking the locks exactly as libpmix's server does ({@code src/test/c/fcntl_peer.c}:
 * {@code F_WRLCK} on the whole file): the C writer holds off the Java reader, and the Java
 * reader's lock holds off the C writer.
 */
@Timeout(60)
class Ds12FcntlLockIT {
  private static final Duration STEP = Duration.ofSeconds(20);

  @TempDir Path dir;

  @Test
  void javaReadersAndAnFcntlWriterExcludeEachOther() throws IOException {
    Map<String, byte[]> files = GoldenStores.load("ds12");
    files.put("dstore_sm.lock", new byte[0]);
    GoldenStores.write(dir, files);
    Path peer = CPrograms.compile("src/test/c/fcntl_peer.c");
    try (CProcess writer =
            CProcess.builder(peer).args(dir.resolve("dstore_sm.lock").toString()).start();
        DstoreReader r =
            DstoreReader.attach(
                GdsKind.DS12, dir, "cjob", WireFormat.DEFAULT, Duration.ofMillis(300))) {
      Proc wild = Proc.wildcard("cjob");
      assertEquals(new Fetched.Found(Value.uint32(2)), r.fetch(wild, "pmix.job.size"));

      assertEquals("locked", writer.request("wrlock", STEP));
      PmixException e = assertThrows(PmixException.class, () -> r.fetch(wild, "pmix.job.size"));
      assertEquals(Status.ERR_TIMEOUT, e.status());
      assertEquals("unlocked", writer.request("unlock", STEP));
      assertEquals(new Fetched.Found(Value.uint32(2)), r.fetch(wild, "pmix.job.size"));

      try (Ds12FcntlLock reader = Ds12FcntlLock.open(dir.resolve("dstore_sm.lock"))) {
        reader.lock(STEP);
        try {
          assertEquals("busy", writer.request("trywrlock", STEP));
        } finally {
          reader.unlock();
        }
        assertEquals("granted", writer.request("trywrlock", STEP));
        assertEquals("unlocked", writer.request("unlock", STEP));
      }
    }
  }
}
