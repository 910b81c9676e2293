package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.codec.WireFormat;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Feeds {@link DstoreReader} corrupted copies of real libpmix 4.2.2 segments ({@link
 * GoldenStores}, shrunk so that an iteration is cheap) for a bounded time: random bytes, size_t
 * fields set to boundary values, truncated or missing segments. Every read must end in a value,
 * a miss or a {@link PmixException}; nothing else may escape, and no read may allocate more than
 * {@value #BYTES_PER_SEGMENT_BYTE} bytes per segment byte plus {@value #SLACK_BYTES}.
 *
 * <p>System properties: {@code pmix.fuzz.seconds} (default 5) and {@code pmix.fuzz.seed}. A
 * failure prints the seed and the iteration.
 */
@Timeout(120)
class DstoreFuzzTest {
  private static final long DEFAULT_SEED = 0x6764_7321_0422_2025L;
  private static final long BYTES_PER_SEGMENT_BYTE = 16;
  private static final long SLACK_BYTES = 256 * 1024;

  /** Fields worth setting to edge values: counts, offsets and sizes of each kind of segment. */
  private static final long[] EDGES = {
    0, 1, 7, 8, 16, 17, 24, 25, 255, 256, 4095, 4096, 0x7fffffffL, 0xffffffffL, 1L << 40,
    Long.MAX_VALUE, Long.MIN_VALUE, -1, -8, DstoreFormat.EXTENSION_FLAG | 25,
    DstoreFormat.INVALIDATED_FLAG | 33
  };

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** A golden store with its meta and data segments cut to what they use. */
  private static Map<String, byte[]> shrunk(String kind) {
    Map<String, byte[]> f = new LinkedHashMap<>(GoldenStores.load(kind));
    f.put("smseg-cjob-0", Arrays.copyOf(f.get("smseg-cjob-0"), 128));
    f.put("smdataseg-cjob-0", Arrays.copyOf(f.get("smdataseg-cjob-0"), 2048));
    f.remove("smlockseg-cjob");
    f.remove("dstore_sm.lock");
    return f;
  }

  private static final List<Proc> PROCS =
      List.of(
          Proc.wildcard("cjob"),
          Proc.of("cjob", 0),
          Proc.of("cjob", 1),
          Proc.of("cjob", 2),
          Proc.of("cjob", 174761),
          Proc.of("other", 0));

  @Test
  void corruptSegmentsNeverEscapeAsAnythingButPmixException() {
    long seed = Long.decode(System.getProperty("pmix.fuzz.seed", Long.toString(DEFAULT_SEED)));
    long seconds = Long.parseLong(System.getProperty("pmix.fuzz.seconds", "5"));
    SplittableRandom rnd = new SplittableRandom(seed);
    long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
    long iterations = 0;
    long outcomes = 0;
    for (String kind : List.of("ds21", "ds12")) {
      // Unmutated, every proc reads fine: the mutations start from a valid store.
      var unused = read(kind, shrunk(kind), seed, -1);
    }
    while (System.nanoTime() < end || iterations < 200) {
      String kind = rnd.nextBoolean() ? "ds21" : "ds12";
      Map<String, byte[]> f = shrunk(kind);
      mutate(f, rnd);
      outcomes += read(kind, f, seed, iterations);
      iterations++;
    }
    assertTrue(outcomes > 0, "no read ran to an answer in " + iterations + " iterations");
  }

  private static void mutate(Map<String, byte[]> f, SplittableRandom rnd) {
    List<String> names = List.copyOf(f.keySet());
    int n = 1 + rnd.nextInt(4);
    for (int i = 0; i < n; i++) {
      String name = names.get(rnd.nextInt(names.size()));
      byte[] seg = f.get(name);
      if (seg == null) {
        continue;
      }
      // Aim at the part that is used: the start of each segment.
      int used = Math.min(seg.length, name.startsWith("smdataseg") ? 0x680 : 0x140);
      if (used == 0) {
        continue;
      }
      switch (rnd.nextInt(6)) {
        case 0:
          seg[rnd.nextInt(used)] = (byte) rnd.nextInt(256);
          break;
        case 1:
          if (used >= 8) {
            ByteBuffer.wrap(seg)
                .order(ByteOrder.nativeOrder())
                .putLong(rnd.nextInt(used - 7), EDGES[rnd.nextInt(EDGES.length)]);
          }
          break;
        case 2:
          f.put(name, Arrays.copyOf(seg, rnd.nextInt(seg.length + 1)));
          break;
        case 3:
          if (rnd.nextInt(8) == 0) {
            f.remove(name);
          }
          break;
        case 4:
          // A second data or meta segment, full of garbage, and an entry that claims it.
          byte[] extra = new byte[seg.length];
          rnd.nextBytes(extra);
          f.put(name.replace("-0", "-1"), extra);
          break;
        default:
          int at = rnd.nextInt(used);
          int len = Math.min(used - at, 1 + rnd.nextInt(16));
          byte[] junk = new byte[len];
          rnd.nextBytes(junk);
          System.arraycopy(junk, 0, seg, at, len);
          break;
      }
    }
  }

  /** Reads everything; returns how many reads answered (value or miss) rather than failed. */
  private static long read(String kind, Map<String, byte[]> files, long seed, long iteration) {
    long budget =
        files.values().stream().mapToLong(b -> b.length).sum() * BYTES_PER_SEGMENT_BYTE
            + SLACK_BYTES;
    long answered = 0;
    DstoreReader r =
        new DstoreReader(
            kind.equals("ds21") ? GdsKind.DS21 : GdsKind.DS12,
            new MemorySegments(files),
            new UncontendedLock(),
            WireFormat.DEFAULT,
            Duration.ofSeconds(1));
    try (r) {
      for (Proc p : PROCS) {
        for (int op = 0; op < 3; op++) {
          long before = THREADS.getCurrentThreadAllocatedBytes();
          try {
            Object unused =
                switch (op) {
                  case 0 -> r.fetchAll(p);
                  case 1 -> r.fetch(p, "pmix.job.size");
                  default -> r.fetch(p, "test.gstr");
                };
            answered++;
          } catch (PmixException e) {
            if (iteration < 0) {
              fail("the unmutated " + kind + " store failed for " + p + ": " + e, e);
            }
          } catch (RuntimeException | Error e) {
            fail(
                "seed "
                    + Long.toHexString(seed)
                    + " iteration "
                    + iteration
                    + " "
                    + kind
                    + " "
                    + p
                    + " op "
                    + op
                    + ": "
                    + e,
                e);
          }
          long used = THREADS.getCurrentThreadAllocatedBytes() - before;
          // The unmutated warm-up reads load classes; they are not measured.
          if (iteration >= 0 && used > budget) {
            fail(
                "seed " + Long.toHexString(seed) + " iteration " + iteration + " allocated "
                    + used + " bytes for " + p + " op " + op);
          }
        }
      }
    }
    return answered;
  }
}
