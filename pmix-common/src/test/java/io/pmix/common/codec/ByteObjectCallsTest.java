package io.pmix.common.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Value;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link PmixWriter#packByteObject} and {@link PmixReader#unpackByteObject}, the copy-free calls
 * for data blobs, mean exactly what packing and unpacking a BYTE_OBJECT {@link Value} means: the
 * same bytes on the wire in every format, the same bytes read, the same failures.
 */
class ByteObjectCallsTest {
  private static final int LIMIT = 1000;
  private static final List<WireFormat> FORMATS = DecoderFuzzTest.FORMATS;

  @Provide
  Arbitrary<byte[]> blobs() {
    return Arbitraries.oneOf(
        Arbitraries.bytes().array(byte[].class).ofMaxSize(300),
        Arbitraries.bytes().array(byte[].class).ofMinSize(16_000).ofMaxSize(70_000));
  }

  @Property(tries = 200)
  void writesAndReadsWhatAValueWrites(@ForAll("blobs") byte[] blob) {
    for (WireFormat f : FORMATS) {
      WireBuffer viaValue = WireBuffer.allocate();
      new PmixWriter(viaValue, f).pack(Value.of(blob)).packInt32(7);
      WireBuffer direct = WireBuffer.allocate();
      new PmixWriter(direct, f).packByteObject(blob).packInt32(7);
      byte[] wire = direct.toByteArray();
      assertArrayEquals(viaValue.toByteArray(), wire, f.toString());

      PmixReader r = new PmixReader(WireBuffer.wrap(wire), f);
      byte[] read = r.unpackByteObject();
      assertArrayEquals(blob, read, f.toString());
      assertEquals(7, r.unpackInt32(), "the next call starts where the blob ended, " + f);
      assertEquals(false, r.hasRemaining());

      PmixReader s = new PmixReader(WireBuffer.wrap(wire), f);
      WireBuffer view = s.unpackByteObjectSlice();
      assertArrayEquals(blob, view.toByteArray(), f.toString());
      assertEquals(7, s.unpackInt32(), "the next call starts where the view ended, " + f);
      assertEquals(false, s.hasRemaining());
    }
  }

  @Test
  void theArrayReadIsTheCallersOwn() {
    byte[] wire = packed(WireFormat.DEFAULT, new byte[] {1, 2, 3});
    byte[] first = new PmixReader(WireBuffer.wrap(wire), WireFormat.DEFAULT).unpackByteObject();
    first[0] = 9;
    byte[] again = new PmixReader(WireBuffer.wrap(wire), WireFormat.DEFAULT).unpackByteObject();
    assertNotSame(first, again);
    assertArrayEquals(new byte[] {1, 2, 3}, again);
  }

  @Test
  void failsAsUnpackOneFailsOnAnythingButOneByteObject() {
    for (WireFormat f : FORMATS) {
      List<byte[]> inputs =
          List.of(
              new byte[0], // nothing left
              callOf(f, DataType.BYTE_OBJECT, List.of()), // no item
              callOf(f, DataType.BYTE_OBJECT, List.of(Value.of(new byte[1]), Value.of(new byte[2]))),
              truncated(packed(f, new byte[40])), // the blob cut short
              packed(f, new byte[LIMIT + 1])); // longer than the reader's limit
      for (byte[] in : inputs) {
        PmixException viaValue =
            assertThrows(
                PmixException.class, () -> reader(in, f).unpackOne(DataType.BYTE_OBJECT));
        PmixException direct =
            assertThrows(PmixException.class, () -> reader(in, f).unpackByteObject());
        assertEquals(viaValue.status(), direct.status(), f + " " + HexFormat.of().formatHex(in));
        PmixException slice =
            assertThrows(PmixException.class, () -> reader(in, f).unpackByteObjectSlice());
        assertEquals(viaValue.status(), slice.status(), f + " " + HexFormat.of().formatHex(in));
      }
      byte[] atLimit = packed(f, new byte[LIMIT]);
      assertEquals(LIMIT, reader(atLimit, f).unpackByteObject().length);
      assertEquals(LIMIT, reader(atLimit, f).unpackByteObjectSlice().writerIndex());
      if (f.bufferType() == BufferType.FULLY_DESC) {
        byte[] string = callOf(f, DataType.STRING, List.of(Value.of("x")));
        PmixException e = assertThrows(PmixException.class, () -> reader(string, f).unpackByteObject());
        PmixException viaValue =
            assertThrows(
                PmixException.class, () -> reader(string, f).unpackOne(DataType.BYTE_OBJECT));
        assertEquals(viaValue.status(), e.status());
      }
    }
  }

  /** A reader whose limit on a byte object's length is {@link #LIMIT}. */
  private static PmixReader reader(byte[] in, WireFormat f) {
    return new PmixReader(WireBuffer.wrap(in), f, CodecLimits.DEFAULT.withMaxStringBytes(LIMIT));
  }

  private static byte[] packed(WireFormat f, byte[] blob) {
    WireBuffer b = WireBuffer.allocate();
    new PmixWriter(b, f).packByteObject(blob);
    return b.toByteArray();
  }

  private static byte[] callOf(WireFormat f, DataType type, List<Value> items) {
    WireBuffer b = WireBuffer.allocate();
    new PmixWriter(b, f).pack(type, items);
    return b.toByteArray();
  }

  private static byte[] truncated(byte[] wire) {
    return Arrays.copyOf(wire, wire.length - 10);
  }
}
