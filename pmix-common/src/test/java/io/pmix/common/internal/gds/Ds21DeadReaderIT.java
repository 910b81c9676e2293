package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.GdsModule.Fetched;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A ds21 reader SIGKILLed inside a read (its mutexes taken with glibc's plain {@code
 * pthread_mutex_lock}, as libpmix's client does: {@code src/test/c/ds21_reader_peer.c}) does not
 * cost the server its store: the writer waiting for that reader is handed the lock when the
 * reader dies, and the next writes and reads go on. The lock timeout is far longer than the test
 * takes to pass, so a writer that only gets past the dead reader by timing out fails it.
 */
@Timeout(60)
class Ds21DeadReaderIT {
  private static final Duration STEP = Duration.ofSeconds(20);
  private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(40);

  @TempDir Path tmp;

  @ParameterizedTest
  @ValueSource(strings = {"read", "signal"})
  void aWriteWaitingForAKilledReaderGoesOnAndSoDoLaterOnes(String killedIn) throws Exception {
    Path peer = CPrograms.compile("src/test/c/ds21_reader_peer.c", "-pthread");
    try (DstoreWriter w =
        DstoreWriter.create(
            GdsKind.DS21, tmp.resolve("pmix_dstor_ds21_1"), WireFormat.DEFAULT, LOCK_TIMEOUT,
            Map.of())) {
      w.addNamespace("job1", 2);
      w.store("job1", 0, Map.of("k.a", Value.of("before")));
      Path lockFile = w.directory().resolve("smlockseg-job1");
      try (CProcess reader = CProcess.builder(peer).args(lockFile.toString(), "1").start()) {
        String answer = killedIn.equals("read") ? "locked" : "signalled";
        assertEquals(answer, reader.request(killedIn, STEP));
        // The write waits for the reader's mutex; the reader dies holding it.
        CompletableFuture<Void> write =
            CompletableFuture.runAsync(
                () -> w.store("job1", 0, Map.of("k.a", Value.of("during"))));
        ProcessHandle.of(reader.pid()).orElseThrow().destroyForcibly();
        write.get(STEP.toSeconds(), TimeUnit.SECONDS);
      }
      w.store("job1", 1, Map.of("k.b", Value.of(7)));
      try (DstoreReader r =
          DstoreReader.attach(GdsKind.DS21, w.directory(), "job1", WireFormat.DEFAULT, STEP)) {
        assertEquals(new Fetched.Found(Value.of("during")), r.fetch(new Proc("job1", 0), "k.a"));
        assertEquals(new Fetched.Found(Value.of(7)), r.fetch(new Proc("job1", 1), "k.b"));
      }
    }
  }
}
