package io.pmix.benchmarks;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.DataStore;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.dataserver.Identity;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Heap retained by a {@link DataStore} per stored item of 1 KiB, for {@code bin/bench-dataserver}:
 * publishes N items (each one key and a string value of {@code VALUE_BYTES} distinct characters,
 * the shape of an {@code MPI_Publish_name} port name, as the server hands them to the store) and
 * compares the used heap after full collections before and after. The store keeps its own
 * accounting figure (what the per-uid cap charges); both are printed.
 *
 * <p>Run with a stop-the-world collector ({@code -XX:+UseSerialGC}) so that {@code System.gc()}
 * is a full collection and the heap figures settle. Usage: {@code DataStoreFootprint [N [ROUNDS
 * [VALUE_BYTES]]]} (defaults 20000, 3, 1024). Prints one line per round and a summary line
 * {@code FOOTPRINT bytes_per_item=... payload=... overhead=... accounted_per_item=...}
 * (medians over the rounds). Single-threaded.
 */
public final class DataStoreFootprint {
  private DataStoreFootprint() {}

  /** Runs the measurement; see the class comment for the arguments. */
  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    int valueBytes = args.length > 2 ? Integer.parseInt(args[2]) : 1024;
    // A warm-up round loads and compiles everything the store touches, so that class metadata
    // and code do not count as data (it lives outside the heap, but their static caches do not).
    var unused = measure(Math.min(n, 2000), valueBytes);
    double[] perItem = new double[rounds];
    double[] accounted = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      double[] m = measure(n, valueBytes);
      perItem[r] = m[0];
      accounted[r] = m[1];
      System.out.printf(Locale.ROOT, "round %d: %d items, %.1f bytes of heap per item, "
          + "%.1f accounted per item%n", r + 1, n, m[0], m[1]);
    }
    double med = median(perItem);
    System.out.printf(Locale.ROOT,
        "FOOTPRINT bytes_per_item=%.0f payload=%d overhead=%.0f accounted_per_item=%.0f"
            + " items=%d rounds=%d%n",
        med, valueBytes, med - valueBytes, median(accounted), n, rounds);
  }

  /** Heap per item and accounted bytes per item for {@code n} items. */
  private static double[] measure(int n, int valueBytes) {
    // No cap and no idle timeout: every item stays, whatever n is.
    DataStore store =
        new DataStore(
            DataStoreOptions.builder().maxBytesPerUid(0).idleTimeout(Duration.ZERO).build());
    Identity publisher =
        new Identity(Proc.of("bench-job", 0), 1000, 1000, 0, Identity.UNKNOWN, "node0");
    long before = settledHeap();
    for (int i = 0; i < n; i++) {
      // Each request is garbage once published: what survives the collections below is what
      // the store keeps of it, whatever it copies or shares.
      Status s =
          store.publish(publisher, List.of(Info.of("app.port." + i, Value.of(value(i, valueBytes)))));
      if (!s.isSuccess()) {
        throw new IllegalStateException("publish " + i + ": " + s);
      }
    }
    long after = settledHeap();
    double perItem = (double) (after - before) / n;
    double accounted = (double) store.bytesHeldBy(1000) / n;
    if (store.itemCount() != n) {
      throw new IllegalStateException("the store holds " + store.itemCount() + " items, not " + n);
    }
    Reference.reachabilityFence(store);
    return new double[] {perItem, accounted};
  }

  /** A string of {@code len} characters, distinct for each {@code i}. */
  private static String value(int i, int len) {
    char[] c = new char[len];
    Arrays.fill(c, 'x');
    String id = Integer.toString(i);
    id.getChars(0, id.length(), c, 0);
    return new String(c);
  }

  /** Used heap after full collections, once two in a row agree within 1 KiB. */
  private static long settledHeap() {
    MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 20; i++) {
      System.gc();
      long used = mem.getHeapMemoryUsage().getUsed();
      if (Math.abs(used - last) < 1024) {
        return used;
      }
      last = used;
    }
    return last;
  }

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }
}
