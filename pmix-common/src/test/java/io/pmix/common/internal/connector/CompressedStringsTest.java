package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.common.base.Strings;
import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;

class CompressedStringsTest {

  /** libpmix's layout: 4-byte little-endian length, then a zlib stream of the text. */
  static byte[] compress(byte[] text, int declaredLength) {
    Deflater d = new Deflater(9);
    try {
      d.setInput(text);
      d.finish();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.writeBytes(
          ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(declaredLength).array());
      byte[] chunk = new byte[4096];
      while (!d.finished()) {
        out.write(chunk, 0, d.deflate(chunk));
      }
      return out.toByteArray();
    } finally {
      d.end();
    }
  }

  static Value compressed(String s) {
    byte[] text = s.getBytes(StandardCharsets.UTF_8);
    return new Value.Bytes(DataType.COMPRESSED_STRING, compress(text, text.length));
  }

  @Test
  void aCompressedStringExpandsToTheText() {
    String text = Strings.repeat("rank-17 lives on node-3 ", 2000) + "é€";
    assertEquals(Value.of(text), CompressedStrings.expand(compressed(text)));
  }

  @Test
  void anEmptyCompressedStringIsTheEmptyString() {
    assertEquals(Value.of(""), CompressedStrings.expand(compressed("")));
  }

  @Test
  void otherValuesAreReturnedAsTheyAre() {
    Value plain = Value.of("plain");
    Value bytes = new Value.Bytes(DataType.BYTE_OBJECT, new byte[] {1, 2, 3});
    Value cbo = new Value.Bytes(DataType.COMPRESSED_BYTE_OBJECT, new byte[] {1, 2, 3});
    assertSame(plain, CompressedStrings.expand(plain));
    assertSame(bytes, CompressedStrings.expand(bytes));
    assertSame(cbo, CompressedStrings.expand(cbo));
  }

  @Test
  void malformedCompressedStringsAreUnpackFailures() {
    byte[] good = ((Value.Bytes) compressed(Strings.repeat("x", 10_000))).bytes();
    byte[][] bad = {
      {},
      {1, 0, 0},
      Arrays.copyOf(good, good.length - 3), // stream cut short
      withLength(good, 9_999), // declares fewer bytes than the stream holds
      withLength(good, 10_001), // declares more
      withLength(good, -1), // UINT32_MAX, which C refuses too
      {5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'}, // not zlib
    };
    for (byte[] b : bad) {
      PmixException e =
          assertThrows(
              PmixException.class,
              () -> CompressedStrings.expand(new Value.Bytes(DataType.COMPRESSED_STRING, b)),
              () -> Arrays.toString(b));
      assertEquals(Status.ERR_UNPACK_FAILURE, e.status());
    }
  }

  private static byte[] withLength(byte[] b, int length) {
    byte[] c = b.clone();
    ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN).putInt(0, length);
    return c;
  }
}
