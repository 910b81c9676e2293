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

  /**
   * One sample of a burst (a line per operation), its value twice, as {@code bench_output.h}'s
   * {@code line_checked}: mpirun forwards a rank's output in chunks that can end inside a line and
   * puts the other rank's between, so bin/bench-client takes such a line only when both agree.
   */
  static void lineChecked(String metric, long ns) {
    System.out.println("BENCH " + metric + " " + ns + " " + ns);
    System.out.flush();
  }
}
