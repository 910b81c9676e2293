package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.GdsModule.Fetched;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reader SIGKILLed inside a read (its lock taken as libpmix's client takes it: {@code
 * src/test/c/dstore_reader_peer.c}) does not cost the server its store's truth. ds21: the writer
 * waiting for that reader is handed the mutex when the reader dies, and the next writes and reads
 * go on; the lock timeout is far longer than the test takes to pass, so a writer that only gets
 * past the dead reader by timing out fails it. ds12: a dead reader's hold on the rwlock is never
 * given back, so the write times out; the store must then not answer the value the write was to
 * replace: the rank is hidden (its readers ask the server), the store retired.
 */
@Timeout(60)
class DeadReaderIT {
  private static final Duration STEP = Duration.ofSeconds(20);
  private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(40);

  @TempDir Path tmp;

  @ParameterizedTest
  @ValueSource(strings = {"read", "signal"})
  void aWriteWaitingForAKilledReaderGoesOnAndSoDoLaterOnes(String killedIn) throws Exception {
    Path peer = CPrograms.compile("src/test/c/dstore_reader_peer.c", "-pthread");
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
      assertFalse(w.retired());
      try (DstoreReader r =
          DstoreReader.attach(GdsKind.DS21, w.directory(), "job1", WireFormat.DEFAULT, STEP)) {
        assertEquals(new Fetched.Found(Value.of("during")), r.fetch(new Proc("job1", 0), "k.a"));
        assertEquals(new Fetched.Found(Value.of(7)), r.fetch(new Proc("job1", 1), "k.b"));
      }
    }
  }

  /**
   * ds12: a reader killed holding the rwlock for reading. The write that waits for it fails, and
   * what it was to replace is no longer read, by a reader attached before (its index of the
   * rank's chain knows the old record) or after; a rank nobody wrote to keeps its data; the store
   * is retired, so a later write hides its rank at once, and the namespace is still removed.
   */
  @Test
  void aDs12ReaderDeadInsideAReadLeavesNoStaleValue() throws Exception {
    Path peer = CPrograms.compile("src/test/c/dstore_reader_peer.c", "-pthread");
    // Short: this write must time out (nothing ever gives a dead reader's rwlock back).
    Duration timeout = Duration.ofSeconds(1);
    Proc r0 = new Proc("job1", 0);
    Proc r1 = new Proc("job1", 1);
    Proc job = Proc.wildcard("job1");
    try (DstoreWriter w =
        DstoreWriter.create(
            GdsKind.DS12, tmp.resolve("pmix_dstor_ds12_1"), WireFormat.DEFAULT, timeout,
            Map.of())) {
      w.addNamespace("job1", 2);
      w.store("job1", Proc.RANK_WILDCARD, Map.of("pmix.job.size", Value.uint32(2)));
      w.store("job1", 0, Map.of("k.a", Value.of("before")));
      w.store("job1", 1, Map.of("k.b", Value.of(7)));
      try (DstoreReader early =
          DstoreReader.attach(GdsKind.DS12, w.directory(), "job1", WireFormat.DEFAULT, STEP)) {
        assertEquals(new Fetched.Found(Value.of("before")), early.fetch(r0, "k.a"));
        try (CProcess reader =
            CProcess.builder(peer)
                .args(w.directory().resolve("dstore_sm.lock").toString(), "0")
                .start()) {
          assertEquals("rdlocked", reader.request("rdlock", STEP));
          ProcessHandle h = ProcessHandle.of(reader.pid()).orElseThrow();
          h.destroyForcibly();
          h.onExit().get(STEP.toSeconds(), TimeUnit.SECONDS);
        }
        PmixException e =
            assertThrows(
                PmixException.class, () -> w.store("job1", 0, Map.of("k.a", Value.of("after"))));
        assertEquals(Status.ERR_TIMEOUT, e.status());
        assertTrue(w.retired());
        assertEquals(new Fetched.NoKey(), early.fetch(r0, "k.a"));
        assertEquals(new Fetched.Found(Value.of(7)), early.fetch(r1, "k.b"));
        // Retired: hidden without waiting for the lock again.
        w.store("job1", 1, Map.of("k.b", Value.of(8)));
        assertEquals(new Fetched.NoKey(), early.fetch(r1, "k.b"));
        try (DstoreReader late =
            DstoreReader.attach(GdsKind.DS12, w.directory(), "job1", WireFormat.DEFAULT, STEP)) {
          assertEquals(new Fetched.NoKey(), late.fetch(r0, "k.a"));
          assertEquals(new Fetched.NoKey(), late.fetch(r1, "k.b"));
          assertEquals(new Fetched.Found(Value.uint32(2)), late.fetch(job, "pmix.job.size"));
        }
      }
      w.removeNamespace("job1");
      try (Stream<Path> files = Files.list(w.directory())) {
        assertEquals(
            List.of(), files.map(f -> f.getFileName().toString())
                .filter(f -> f.contains("job1")).collect(Collectors.toList()));
      }
    }
  }
}
