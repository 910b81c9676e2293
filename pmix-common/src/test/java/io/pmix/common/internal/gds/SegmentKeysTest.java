package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The key reads of {@link Segment} (a NUL-ended key read in bulk, an in-place key comparison) at
 * the lengths where the bulk read changes path, and the lock deadline's arithmetic in {@link
 * PosixLocks}.
 */
@Timeout(10)
class SegmentKeysTest {
  private static Segment segmentWith(int at, byte[] bytes, int size) {
    ByteBuffer b = ByteBuffer.allocateDirect(size);
    b.put(at, bytes);
    return new Segment("test-segment", b);
  }

  private static byte[] key(int length) {
    byte[] k = new byte[length];
    for (int i = 0; i < length; i++) {
      k[i] = (byte) ('a' + i % 26);
    }
    return k;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 12, 63, 64, 65, 127, 200, 511})
  void aKeyIsReadUpToItsNulWhateverItsLength(int length) {
    byte[] k = key(length);
    Segment s = segmentWith(100, k, 2048); // the NUL after it: the buffer is zeroed
    assertArrayEquals(k, s.cString(100, 100 + 512));
    assertTrue(s.holdsKey(100, k, 100 + 512));
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 63, 64, 65, 300})
  void noNulBeforeTheLimitIsNoKey(int length) {
    byte[] k = key(length);
    Segment s = segmentWith(10, k, 1024);
    assertNull(s.cString(10, 10 + length), "the NUL lies at the limit, outside");
    assertFalse(s.holdsKey(10, k, 10 + length));
  }

  @Test
  void theSegmentsEndBoundsTheRead() {
    byte[] k = key(70);
    Segment s = segmentWith(1024 - 70, k, 1024); // the key's last byte is the segment's last
    assertNull(s.cString(1024 - 70, 1_000_000));
    assertFalse(s.holdsKey(1024 - 70, k, 1_000_000));
    assertNull(s.cString(1024, 2048), "nothing left at the end");
    PmixException e = assertThrows(PmixException.class, () -> s.cString(1025, 2048));
    assertEquals(Status.ERR_UNPACK_FAILURE, e.status());
  }

  @Test
  void anotherKeyOrALongerOneIsNotHeld() {
    byte[] k = "bench.dm.42".getBytes(StandardCharsets.US_ASCII);
    Segment s = segmentWith(0, k, 256);
    assertFalse(s.holdsKey(0, "bench.dm.43".getBytes(StandardCharsets.US_ASCII), 256));
    assertFalse(s.holdsKey(0, "bench.dm.4".getBytes(StandardCharsets.US_ASCII), 256));
    assertFalse(s.holdsKey(0, "bench.dm.421".getBytes(StandardCharsets.US_ASCII), 256));
    assertArrayEquals(k, s.cString(0, 256));
  }

  @Test
  void aKeyBeyondTheBulkChunkIsCutAtItsFirstNul() {
    byte[] bytes = key(150);
    bytes[90] = 0;
    Segment s = segmentWith(0, bytes, 512);
    assertArrayEquals(Arrays.copyOf(bytes, 90), s.cString(0, 512));
  }

  @Test
  void aDeadlineSplitsIntoTheTimedCallsSecondsAndNanoseconds() {
    long before = System.currentTimeMillis();
    long d = PosixLocks.deadline(Duration.ofMillis(2_500));
    long after = System.currentTimeMillis();
    assertTrue(d >= before + 2_500 && d <= after + 2_500, "deadline " + d);
    assertEquals(1_234, PosixLocks.seconds(1_234_567));
    assertEquals(567_000_000, PosixLocks.nanos(1_234_567));
    assertEquals(Long.MAX_VALUE, PosixLocks.deadline(Duration.ofSeconds(Long.MAX_VALUE)));
    assertEquals(Long.MAX_VALUE, PosixLocks.deadline(Duration.ofMillis(Long.MAX_VALUE - 5)));
    long zero = PosixLocks.deadline(Duration.ofMillis(-5));
    assertTrue(zero >= before && zero <= System.currentTimeMillis(), "a past deadline is now");
  }
}
