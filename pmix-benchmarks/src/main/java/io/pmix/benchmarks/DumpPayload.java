package io.pmix.benchmarks;

import java.util.HexFormat;

/**
 * Prints the Java-packed {@link ModexPayload} as one line of lowercase hex, for {@code
 * bin/bench-codec} to compare with the bytes libpmix packs. Stateless.
 */
public final class DumpPayload {
  private DumpPayload() {}

  /** Prints the hex to standard output; takes no arguments. */
  public static void main(String[] args) {
    System.out.println(HexFormat.of().formatHex(ModexPayload.packed()));
  }
}
