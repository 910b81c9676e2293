package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.junit.jupiter.api.Test;

/**
 * {@link NativeBytes#equal} says what {@code Arrays.equals} over the same ranges says, natively
 * (with pmix-java's library loaded) as in Java, whatever the offsets and lengths.
 */
class NativeBytesTest {
  @BeforeContainer
  static void load() {
    assertTrue(PmixNativeLibrary.load(), PmixNativeLibrary::failure);
  }

  @Property(tries = 400)
  void agreesWithArraysEquals(
      @ForAll @IntRange(min = 0, max = 9000) int len,
      @ForAll @IntRange(min = 0, max = 40) int aOff,
      @ForAll @IntRange(min = 0, max = 40) int bOff,
      @ForAll @IntRange(min = -1, max = 1000) int where,
      @ForAll long seed) {
    assertTrue(PmixNativeLibrary.loaded());
    Random r = new Random(seed);
    byte[] a = new byte[aOff + len + 7];
    r.nextBytes(a);
    byte[] b = new byte[bOff + len + 3];
    r.nextBytes(b);
    System.arraycopy(a, aOff, b, bOff, len);
    // One byte differs (unless where is -1): the last one at 1000, else where/1000 of the way.
    int flipAt = where < 0 ? -1 : where == 1000 ? len - 1 : (int) ((long) len * where / 1000);
    if (flipAt >= 0 && flipAt < len) {
      b[bOff + flipAt] ^= (byte) (1 + r.nextInt(255));
    }
    boolean expected = Arrays.equals(a, aOff, aOff + len, b, bOff, bOff + len);
    assertEquals(expected, NativeBytes.equal(a, aOff, b, bOff, len));
  }

  @Test
  void aDifferenceInTheLastByteOfALongRangeIsSeen() {
    byte[] a = new byte[5000];
    byte[] b = new byte[5000];
    assertTrue(NativeBytes.equal(a, 0, b, 0, 5000));
    b[4999] = 1;
    assertFalse(NativeBytes.equal(a, 0, b, 0, 5000));
    assertTrue(NativeBytes.equal(a, 0, b, 0, 4999));
    assertFalse(NativeBytes.equal(a, 1, b, 1, 4999));
  }

  @Test
  void rangesOutsideTheArraysAreRefused() {
    byte[] a = new byte[300];
    assertThrows(IndexOutOfBoundsException.class, () -> NativeBytes.equal(a, 1, a, 0, 300));
    assertThrows(IndexOutOfBoundsException.class, () -> NativeBytes.equal(a, 0, a, -1, 10));
    assertThrows(IndexOutOfBoundsException.class, () -> NativeBytes.equal(a, 0, a, 0, -1));
  }
}
