package io.pmix.common.internal;

import java.util.Arrays;
import java.util.Objects;

/**
 * Byte-range comparison through pmix-java's native library once it is loaded. The JDK's {@code
 * Arrays.equals} is an intrinsic of the JIT's compilers only: a fresh JVM runs it in the
 * interpreter, 8 bytes a loop turn, ~25-40 µs for the few KiB a client compares at each
 * direct-modex answer (docs/architecture.md, "Data blobs without copies"); a {@code memcmp} of them
 * is a few microseconds with the call. Thread-safe.
 */
public final class NativeBytes {
  /** Below this, the Java comparison is as quick as the native call. */
  static final int NATIVE_FROM = 256;

  private NativeBytes() {}

  /**
   * Whether {@code a[aOff, aOff+len)} and {@code b[bOff, bOff+len)} hold the same bytes, as {@link
   * Arrays#equals(byte[], int, int, byte[], int, int)} says.
   *
   * @throws IndexOutOfBoundsException if either range lies outside its array
   */
  public static boolean equal(byte[] a, int aOff, byte[] b, int bOff, int len) {
    Objects.checkFromIndexSize(aOff, len, a.length);
    Objects.checkFromIndexSize(bOff, len, b.length);
    if (len >= NATIVE_FROM && PmixNativeLibrary.loaded()) {
      int same = equal0(a, aOff, b, bOff, len);
      if (same >= 0) {
        return same == 1;
      }
    }
    return Arrays.equals(a, aOff, aOff + len, b, bOff, bOff + len);
  }

  /** 1 for the same bytes, 0 for others, -1 when the arrays could not be pinned. */
  private static native int equal0(byte[] a, int aOff, byte[] b, int bOff, int len);
}
