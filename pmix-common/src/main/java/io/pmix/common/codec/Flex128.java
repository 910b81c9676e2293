package io.pmix.common.codec;

/**
 * OpenPMIx's flex128 integer encoding: little-endian base-128 groups with a continuation bit, at
 * most nine bytes, the ninth carrying eight value bits (so never the tenth byte LEB128 would need
 * for values of 2^63 and above). Signed types are zigzag-mapped first.
 */
final class Flex128 {
  /** The longest encoding. */
  static final int MAX_BYTES = 9;

  private Flex128() {}

  static long zigzag(long v) {
    return (v << 1) ^ (v >> 63);
  }

  static long unzigzag(long u) {
    return (u >>> 1) ^ -(u & 1);
  }

  static void write(WireBuffer out, long u) {
    for (int i = 0; i < 8; i++) {
      int b = (int) (u & 0x7f);
      u >>>= 7;
      if (u == 0) {
        out.writeByte(b);
        return;
      }
      out.writeByte(b | 0x80);
    }
    out.writeByte((int) u);
  }

  /** The number of bytes {@link #write} produces for {@code u}. */
  static int size(long u) {
    int n = 1;
    while (n < MAX_BYTES && (u >>>= 7) != 0) {
      n++;
    }
    return n;
  }
}
