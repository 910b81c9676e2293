package io.pmix.benchmarks;

import java.time.Instant;

/**
 * What {@link ClientBenchmark} and {@link ToolBenchmark} print: one {@code BENCH <metric>
 * <nanoseconds>} line per sample, flushed at once, as the C benchmarks do (bin/bench-client reads
 * them).
 */
final class BenchOutput {
  private BenchOutput() {}

  /** The wall clock in nanoseconds since the epoch (to compare with the launching shell's stamp). */
  static long epochNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** One sample line. */
  static void line(String metric, long ns) {
    System.out.println("BENCH " + metric + " " + ns);
    System.out.flush();
  }
}
