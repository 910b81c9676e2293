package io.pmix.common.codec;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.common.io.BaseEncoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Feeds {@link PmixReader} random buffers and mutated golden vectors for a bounded time, decoding
 * each as every {@link DataType} in both buffer kinds and both integer encodings (and, for fully
 * described readers, as a self-describing buffer). Only {@link PmixException} may escape, and no
 * decode may allocate more than {@value #BYTES_PER_INPUT_BYTE} bytes per input byte plus {@value
 * #SLACK_BYTES} bytes, measured with the thread's allocation counter.
 *
 * <p>System properties: {@code pmix.fuzz.seconds} (default 10) and {@code pmix.fuzz.seed} (decimal
 * or 0x-hex; the default is fixed so that a normal test run is reproducible). A failure prints the
 * seed, the iteration, the format, the type and the input in hex, which is all a unit test in
 * {@link HostileInputTest} needs.
 */
class DecoderFuzzTest {
  private static final long DEFAULT_SEED = 0x504d_4978_f022_2025L;
  private static final long BYTES_PER_INPUT_BYTE = 64;
  private static final long SLACK_BYTES = 64 * 1024;

  /** Every buffer kind with every integer encoding (ByteObjectCallsTest uses them too). */
  static final List<WireFormat> FORMATS =
      List.of(
          new WireFormat(BufferType.NON_DESC, IntEncoding.FLEX128),
          new WireFormat(BufferType.FULLY_DESC, IntEncoding.FLEX128),
          new WireFormat(BufferType.NON_DESC, IntEncoding.NATIVE),
          new WireFormat(BufferType.FULLY_DESC, IntEncoding.NATIVE));

  private static final DataType[] TYPES = DataType.values();

  /** Bytes that mean something to the codec: small counts, type tags, varint edges. */
  private static final byte[] INTERESTING = {
    0x00,
    0x01,
    0x02,
    0x03,
    0x04,
    0x05,
    0x09,
    0x0e,
    0x0f,
    0x15,
    0x16,
    0x18,
    0x1a,
    0x1b,
    0x1c,
    0x1f,
    0x27,
    0x29,
    0x2c,
    0x31,
    0x38,
    0x40,
    0x41,
    0x46,
    0x7e,
    0x7f,
    (byte) 0x80,
    (byte) 0x81,
    (byte) 0xfe,
    (byte) 0xff,
    'p',
    'm',
    'i',
    'x',
    'r',
    'a',
    'w',
    ':',
    'b',
    'l',
    'o'
  };

  /** Varints a hostile peer puts where a count or a length goes. */
  private static final byte[][] HUGE_VARINTS = {
    hex("feffffff0f"), // INT32_MAX (zigzag)
    hex("ffffffff0f"), // INT32_MIN (zigzag) / UINT32_MAX
    hex("80808010"), // 2^25 zigzag = 16 Mi, the default item limit
    hex("feffff0f"), // just under the default item limit
    hex("80808040"), // 64 Mi (zigzag), exactly the default string limit
    hex("82808040"), // 64 Mi + 1 (zigzag)
    hex("80808020"), // 64 Mi unsigned (a size)
    hex("ffffffffffffffffff"), // 2^64-1
    hex("808080808080808080"), // 2^63
    hex("ffffffffffffff7f"), // 2^56-1
    hex("ffffffffffffffff01"), // 9 bytes, top byte 1
    hex("01"), // -1
    hex("03"), // -2
    hex("8080"), // continuation bits running into the bytes that follow
  };

  @Test
  void onlyPmixExceptionEscapesAndAllocationStaysProportional() {
    long seed = Long.decode(System.getProperty("pmix.fuzz.seed", "" + DEFAULT_SEED));
    double seconds = Double.parseDouble(System.getProperty("pmix.fuzz.seconds", "10"));
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assertTrue(mx.isThreadAllocatedMemorySupported(), "allocation counter needed");
    mx.setThreadAllocatedMemoryEnabled(true);
    System.out.printf(
        Locale.ROOT,
        "DecoderFuzzTest: seed 0x%x (-Dpmix.fuzz.seed=0x%x), %.1f s (-Dpmix.fuzz.seconds)%n",
        seed,
        seed,
        seconds);

    List<GoldenVectors.Row> rows = GoldenVectors.load();
    List<byte[]> corpus = new ArrayList<>();
    for (GoldenVectors.Row r : rows) {
      corpus.add(r.bytes());
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    Stats stats = new Stats();
    long start = System.nanoTime();
    long deadline = start + (long) (seconds * 1e9);
    long iteration = 0;
    do {
      byte[] input = nextInput(rnd, corpus);
      stats.inputBytes += input.length;
      for (WireFormat f : FORMATS) {
        for (DataType t : TYPES) {
          check(mx, stats, seed, iteration, input, f, t);
        }
        if (f.bufferType() == BufferType.FULLY_DESC) {
          check(mx, stats, seed, iteration, input, f, null);
        }
      }
      iteration++;
    } while (System.nanoTime() < deadline);
    double elapsed = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "DecoderFuzzTest: %d inputs (avg %.1f bytes), %d decodes in %.1f s = %.0f decodes/s,"
            + " %d ended by a PmixException; allocation bound %d x length + %d bytes%n",
        iteration,
        (double) stats.inputBytes / iteration,
        stats.decodes,
        elapsed,
        stats.decodes / elapsed,
        stats.failures,
        BYTES_PER_INPUT_BYTE,
        SLACK_BYTES);
    System.out.printf(
        Locale.ROOT,
        "DecoderFuzzTest: largest warm allocation %d bytes (%s)%n",
        stats.maxAllocated,
        stats.maxAllocatedCase);
    System.out.printf(
        Locale.ROOT,
        "DecoderFuzzTest: largest warm allocation per input byte, inputs of 16+ bytes: %.1f (%s)%n",
        stats.maxRatio,
        stats.maxRatioCase);
  }

  private static final class Stats {
    long decodes;
    long failures;
    long inputBytes;
    long maxAllocated;
    String maxAllocatedCase = "";
    double maxRatio;
    String maxRatioCase = "";
  }

  private void check(
      com.sun.management.ThreadMXBean mx,
      Stats stats,
      long seed,
      long iteration,
      byte[] input,
      WireFormat format,
      @Nullable DataType type) {
    long bound = BYTES_PER_INPUT_BYTE * input.length + SLACK_BYTES;
    long allocated = decodeMeasured(mx, seed, iteration, input, format, type, stats);
    if (allocated > bound) {
      // The first time a code path runs it may bootstrap string concatenation or load classes;
      // only an allocation that repeats counts.
      allocated = decodeMeasured(mx, seed, iteration, input, format, type, null);
      if (allocated > bound) {
        fail(
            describe(seed, iteration, input, format, type)
                + ": allocated "
                + allocated
                + " bytes, more than "
                + bound);
      }
    }
    stats.decodes++;
    boolean newMax =
        allocated > stats.maxAllocated
            || (input.length >= 16 && (double) allocated / input.length > stats.maxRatio);
    if (newMax) {
      // Statistics of warm decodes only: one-time class loading and bootstraps are not the
      // reader's doing.
      allocated =
          Math.min(allocated, decodeMeasured(mx, seed, iteration, input, format, type, null));
      if (allocated > stats.maxAllocated) {
        stats.maxAllocated = allocated;
        stats.maxAllocatedCase = describe(seed, iteration, input, format, type);
      }
      if (input.length >= 16 && (double) allocated / input.length > stats.maxRatio) {
        stats.maxRatio = (double) allocated / input.length;
        stats.maxRatioCase = describe(seed, iteration, input, format, type);
      }
    }
  }

  /** Decodes {@code input} as a sequence of pack calls until it ends or fails; bytes allocated. */
  private static long decodeMeasured(
      com.sun.management.ThreadMXBean mx,
      long seed,
      long iteration,
      byte[] input,
      WireFormat format,
      @Nullable DataType type,
      @Nullable Stats stats) {
    ByteBuf in = Unpooled.wrappedBuffer(input);
    try {
      PmixReader r = new PmixReader(in, format, CodecLimits.DEFAULT);
      long before = mx.getCurrentThreadAllocatedBytes();
      try {
        while (r.hasRemaining()) {
          if (type == null) {
            r.unpackDescribed();
          } else {
            r.unpack(type, Integer.MAX_VALUE);
          }
        }
      } catch (PmixException e) {
        if (stats != null) {
          stats.failures++;
        }
      } catch (Throwable t) {
        throw new AssertionError(describe(seed, iteration, input, format, type) + ": " + t, t);
      }
      return mx.getCurrentThreadAllocatedBytes() - before;
    } finally {
      in.release();
    }
  }

  static String describe(
      long seed, long iteration, byte[] input, WireFormat format, @Nullable DataType type) {
    return String.format(
        Locale.ROOT,
        "seed 0x%x iteration %d, %s/%s reading %s, input (%d bytes) %s",
        seed,
        iteration,
        format.bufferType(),
        format.intEncoding(),
        type == null ? "a described buffer" : type.pmixName(),
        input.length,
        BaseEncoding.base16().lowerCase().encode(input));
  }

  // ---- inputs ----

  private static byte[] nextInput(SplittableRandom rnd, List<byte[]> corpus) {
    int kind = rnd.nextInt(10);
    if (kind < 2) {
      return randomBytes(rnd, rnd.nextInt(0, 49));
    }
    byte[] b = corpus.get(rnd.nextInt(corpus.size()));
    int mutations = 1 + rnd.nextInt(3);
    for (int i = 0; i < mutations; i++) {
      b = mutate(rnd, b, corpus);
    }
    return b;
  }

  private static byte[] randomBytes(SplittableRandom rnd, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] =
          rnd.nextBoolean()
              ? (byte) rnd.nextInt(256)
              : INTERESTING[rnd.nextInt(INTERESTING.length)];
    }
    return b;
  }

  private static byte[] mutate(SplittableRandom rnd, byte[] b, List<byte[]> corpus) {
    int n = b.length;
    switch (rnd.nextInt(8)) {
      case 0: // bit flips
        {
          byte[] c = b.clone();
          if (n > 0) {
            for (int i = 0, k = 1 + rnd.nextInt(4); i < k; i++) {
              c[rnd.nextInt(n)] ^= (byte) (1 << rnd.nextInt(8));
            }
          }
          return c;
        }
      case 1: // interesting byte replaced
        {
          byte[] c = b.clone();
          if (n > 0) {
            c[rnd.nextInt(n)] = INTERESTING[rnd.nextInt(INTERESTING.length)];
          }
          return c;
        }
      case 2: // insertion
        return splice(b, rnd.nextInt(n + 1), 0, randomBytes(rnd, 1 + rnd.nextInt(8)));
      case 3: // deletion
        {
          if (n == 0) {
            return b;
          }
          int at = rnd.nextInt(n);
          return splice(b, at, 1 + rnd.nextInt(Math.min(8, n - at)), new byte[0]);
        }
      case 4: // splice with another vector: this prefix, that suffix
        {
          byte[] o = corpus.get(rnd.nextInt(corpus.size()));
          int at = rnd.nextInt(n + 1);
          int from = rnd.nextInt(o.length + 1);
          return splice(b, at, n - at, Arrays.copyOfRange(o, from, o.length));
        }
      case 5: // a chunk of another vector inserted
        {
          byte[] o = corpus.get(rnd.nextInt(corpus.size()));
          int from = rnd.nextInt(o.length + 1);
          int to = from + rnd.nextInt(o.length - from + 1);
          return splice(b, rnd.nextInt(n + 1), 0, Arrays.copyOfRange(o, from, to));
        }
      case 6: // a length or count replaced by a huge value
        {
          if (n == 0) {
            return HUGE_VARINTS[rnd.nextInt(HUGE_VARINTS.length)].clone();
          }
          int at = rnd.nextInt(n);
          int len = varintLength(b, at);
          return splice(b, at, len, HUGE_VARINTS[rnd.nextInt(HUGE_VARINTS.length)]);
        }
      default: // truncation or duplication of a chunk
        {
          if (n == 0) {
            return b;
          }
          if (rnd.nextBoolean()) {
            return Arrays.copyOf(b, rnd.nextInt(n));
          }
          int from = rnd.nextInt(n);
          int to = from + 1 + rnd.nextInt(n - from);
          return splice(b, to, 0, Arrays.copyOfRange(b, from, to));
        }
    }
  }

  /** The length of the flex128 varint starting at {@code at} (bounded by the array). */
  private static int varintLength(byte[] b, int at) {
    int i = at;
    while (i < b.length && i - at < 8 && (b[i] & 0x80) != 0) {
      i++;
    }
    return Math.min(i + 1, b.length) - at;
  }

  private static byte[] splice(byte[] b, int at, int remove, byte[] insert) {
    ByteArrayOutputStream o = new ByteArrayOutputStream(b.length - remove + insert.length);
    o.write(b, 0, at);
    o.write(insert, 0, insert.length);
    o.write(b, at + remove, b.length - at - remove);
    return o.toByteArray();
  }

  private static byte[] hex(String s) {
    return BaseEncoding.base16().lowerCase().decode(s);
  }
}
