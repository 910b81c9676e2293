package io.pmix.common.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
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
 * {@link PmixReader#unpackBufferReader}, the copy-free read of a BUFFER unit (a commit's sections),
 * reads what unpacking the BUFFER {@link Value} and reading its bytes in the format it names reads,
 * in every outer and inner format, and fails as that does.
 */
class BufferReaderTest {
  private static final int LIMIT = 1000;
  private static final List<WireFormat> FORMATS = DecoderFuzzTest.FORMATS;

  @Provide
  Arbitrary<List<Value.KVal>> kvals() {
    Arbitrary<Value> value =
        Arbitraries.oneOf(
            Arbitraries.integers().map(Value::of),
            Arbitraries.strings().alpha().ofMaxLength(40).map(Value::of),
            Arbitraries.bytes().array(byte[].class).ofMaxSize(600).map(Value::of));
    return Arbitraries.strings()
        .alpha()
        .ofMinLength(1)
        .ofMaxLength(12)
        .flatMap(k -> value.map(v -> new Value.KVal(k, v)))
        .list()
        .ofMaxSize(8);
  }

  @Property(tries = 100)
  void readsWhatTheBufferValueHolds(@ForAll("kvals") List<Value.KVal> kvals) {
    for (WireFormat outer : FORMATS) {
      for (BufferType innerType : BufferType.values()) {
        byte[] wire = bufferOf(outer, innerType, kvals, 42);
        PmixReader r = new PmixReader(WireBuffer.wrap(wire), outer);
        PmixReader inner = r.unpackBufferReader();
        assertEquals(innerType, inner.format().bufferType());
        for (Value.KVal kv : kvals) {
          assertEquals(kv, inner.unpackOne(DataType.KVAL), outer + " " + innerType);
        }
        assertFalse(inner.hasRemaining(), "the inner reader ends where the buffer ends");
        assertEquals(42, r.unpackInt32(), "the next call starts after the buffer, " + outer);
        assertFalse(r.hasRemaining());
      }
    }
  }

  @Test
  void failsAsUnpackingTheBufferValueFails() {
    for (WireFormat f : FORMATS) {
      byte[] ok = callOf(f, List.of(new Value.Buffer(1, new byte[40])));
      List<byte[]> inputs =
          List.of(
              new byte[0], // nothing left
              callOf(f, List.of()), // no item
              callOf(f, List.of(new Value.Buffer(1, new byte[1]), new Value.Buffer(1, new byte[2]))),
              Arrays.copyOf(ok, ok.length - 2), // the contents cut short
              callOf(f, List.of(new Value.Buffer(1, new byte[LIMIT + 1])))); // over the limit
      for (byte[] in : inputs) {
        PmixException viaValue =
            assertThrows(PmixException.class, () -> reader(in, f).unpackOne(DataType.BUFFER));
        PmixException direct =
            assertThrows(PmixException.class, () -> reader(in, f).unpackBufferReader());
        assertEquals(viaValue.status(), direct.status(), f + " " + HexFormat.of().formatHex(in));
      }
      // A buffer type neither format has: the value reads, its format does not exist.
      byte[] unknown = callOf(f, List.of(new Value.Buffer(7, new byte[3])));
      PmixException e =
          assertThrows(PmixException.class, () -> reader(unknown, f).unpackBufferReader());
      assertEquals(Status.ERR_BAD_PARAM, e.status());
      if (f.bufferType() == BufferType.FULLY_DESC) {
        WireBuffer b = WireBuffer.allocate();
        new PmixWriter(b, f).pack(DataType.STRING, List.of(Value.of("x")));
        byte[] s = b.toByteArray(); // a call of another type
        PmixException other = assertThrows(PmixException.class, () -> reader(s, f).unpackBufferReader());
        PmixException viaValue =
            assertThrows(PmixException.class, () -> reader(s, f).unpackOne(DataType.BUFFER));
        assertEquals(viaValue.status(), other.status());
      }
    }
  }

  private static PmixReader reader(byte[] in, WireFormat f) {
    return new PmixReader(WireBuffer.wrap(in), f, CodecLimits.DEFAULT.withMaxStringBytes(LIMIT));
  }

  /** A BUFFER unit of {@code kvals} packed in {@code inner}'s format, then an INT32 {@code next}. */
  private static byte[] bufferOf(WireFormat outer, BufferType inner, List<Value.KVal> kvals, int next) {
    WireBuffer contents = WireBuffer.allocate();
    PmixWriter iw = new PmixWriter(contents, WireFormat.of(inner));
    for (Value.KVal kv : kvals) {
      iw.pack(kv);
    }
    WireBuffer b = WireBuffer.allocate();
    new PmixWriter(b, outer)
        .pack(new Value.Buffer(inner.code(), contents.toByteArray()))
        .packInt32(next);
    return b.toByteArray();
  }

  private static byte[] callOf(WireFormat f, List<Value> items) {
    WireBuffer b = WireBuffer.allocate();
    new PmixWriter(b, f).pack(DataType.BUFFER, items);
    return b.toByteArray();
  }
}
