package io.pmix.common.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The one-item calls ({@code packString}, {@code unpackRank}, ...) write and read their item
 * directly rather than as a {@link Value} in a list; they must mean exactly what {@code
 * pack(Value)} and {@code unpackOne(type)} mean: the same bytes in every format, the same value
 * read, the same failure statuses.
 */
class TypedCallsTest {
  private static final List<WireFormat> FORMATS = DecoderFuzzTest.FORMATS;

  /** One typed call: its type, how it writes a value, how it reads one back as a Value. */
  private record Call(
      DataType type, BiConsumer<PmixWriter, Value> write, Function<PmixReader, Value> read) {}

  private static final List<Call> CALLS =
      List.of(
          new Call(
              DataType.STRING,
              (w, v) -> w.packString(((Value.Str) v).value()),
              r -> Value.of(r.unpackString())),
          new Call(
              DataType.INT32,
              (w, v) -> w.packInt32((int) ((Value.Int) v).value()),
              r -> Value.of(r.unpackInt32())),
          new Call(
              DataType.UINT32,
              (w, v) -> w.packUInt32((int) ((Value.UInt) v).value()),
              r -> Value.uint32(Integer.toUnsignedLong(r.unpackUInt32()))),
          new Call(
              DataType.SIZE,
              (w, v) -> w.packSize(((Value.UInt) v).value()),
              r -> Value.size(r.unpackSize())),
          new Call(
              DataType.STATUS,
              (w, v) -> w.packStatus(((Value.StatusValue) v).status()),
              r -> Value.status(r.unpackStatus())),
          new Call(DataType.PROC, (w, v) -> w.packProc((Proc) v), PmixReader::unpackProc),
          new Call(
              DataType.PROC_RANK,
              (w, v) -> w.packRank((int) ((Value.UInt) v).value()),
              r -> Value.rank(r.unpackRank())),
          new Call(
              DataType.BOOL,
              (w, v) -> w.packBool(((Value.Bool) v).value()),
              r -> Value.of(r.unpackBool())),
          new Call(
              DataType.COMMAND,
              (w, v) -> w.packByteEnum(DataType.COMMAND, (int) ((Value.UInt) v).value()),
              r -> Value.unsigned(DataType.COMMAND, r.unpackByteEnum(DataType.COMMAND))),
          new Call(
              DataType.SCOPE,
              (w, v) -> w.packByteEnum(DataType.SCOPE, (int) ((Value.UInt) v).value()),
              r -> Value.unsigned(DataType.SCOPE, r.unpackByteEnum(DataType.SCOPE))));

  @Provide
  Arbitrary<Long> numbers() {
    // Edges of every width (signed and unsigned), and anything between.
    return Arbitraries.oneOf(
        Arbitraries.of(
            0L, 1L, -1L, 127L, 128L, 255L, 256L, 65_535L, 0x7fff_ffffL, 0x8000_0000L,
            0xffff_ffffL, 0x1_0000_0000L, Long.MAX_VALUE, Long.MIN_VALUE),
        Arbitraries.longs());
  }

  @Provide
  Arbitrary<String> strings() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(300),
        Arbitraries.strings().withCharRange('a', 'z').ofMaxLength(20),
        Arbitraries.just(""));
  }

  /** A value of {@code c}'s type made from the drawn number and string. */
  private static Value valueFor(Call c, long n, String s, boolean nullString) {
    switch (c.type()) {
      case STRING:
        return Value.of(nullString ? null : s);
      case INT32:
        return Value.of((int) n);
      case UINT32:
        return Value.uint32(n & 0xffff_ffffL);
      case SIZE:
        return Value.size(n);
      case STATUS:
        return Value.status(Status.of((int) n));
      case PROC:
        return Proc.of(s.isEmpty() ? "ns" : s.substring(0, Math.min(s.length(), 200)), (int) n);
      case PROC_RANK:
        return Value.rank((int) n);
      case BOOL:
        return Value.of((n & 1) != 0);
      default:
        return Value.unsigned(c.type(), n & 0xff);
    }
  }

  @Property(tries = 300)
  void writesReadsAndFailsAsTheValueCalls(
      @ForAll("numbers") long n,
      @ForAll("strings") String s,
      @ForAll boolean nullString,
      @ForAll @IntRange(min = 1, max = 6) int cut) {
    for (Call c : CALLS) {
      Value v;
      try {
        v = valueFor(c, n, s, nullString);
      } catch (IllegalArgumentException tooLong) {
        continue; // a namespace over PMIx's length: no value to write
      }
      for (WireFormat f : FORMATS) {
        String where = c.type() + " " + f + " " + v;
        WireBuffer viaValue = WireBuffer.allocate();
        new PmixWriter(viaValue, f).pack(v).packInt32(7);
        WireBuffer typed = WireBuffer.allocate();
        PmixWriter w = new PmixWriter(typed, f);
        c.write().accept(w, v);
        w.packInt32(7);
        byte[] wire = typed.toByteArray();
        assertArrayEquals(viaValue.toByteArray(), wire, where);

        PmixReader r = new PmixReader(WireBuffer.wrap(wire), f);
        assertEquals(new PmixReader(WireBuffer.wrap(wire), f).unpackOne(c.type()), c.read().apply(r), where);
        assertEquals(7, r.unpackInt32(), "the next call starts where the item ended, " + where);
        assertFalse(r.hasRemaining(), where);

        // The item cut short: the same failure as the Value call's.
        WireBuffer alone = WireBuffer.allocate();
        c.write().accept(new PmixWriter(alone, f), v);
        byte[] item = alone.toByteArray();
        sameFailure(c, f, Arrays.copyOf(item, Math.max(0, item.length - cut)));
      }
    }
  }

  @Test
  void failsAsUnpackOneFailsOnAnythingButOneItem() {
    for (Call c : CALLS) {
      for (WireFormat f : FORMATS) {
        Value one = valueFor(c, 5, "x", false);
        List<byte[]> inputs = new ArrayList<>();
        inputs.add(new byte[0]); // nothing left
        inputs.add(callOf(f, c.type(), List.of())); // no item
        inputs.add(callOf(f, c.type(), List.of(one, one))); // two items
        if (f.bufferType() == BufferType.FULLY_DESC) {
          inputs.add(callOf(f, DataType.INT64, List.of(Value.of(5L)))); // another type
        }
        for (byte[] in : inputs) {
          sameFailure(c, f, in);
        }
      }
    }
  }

  @Test
  void aByteEnumCallOfAnotherTypeMeansWhatItMeantBefore() {
    // Any unsigned type is written as pack(Value.unsigned(...)) writes it; the rest is refused.
    for (WireFormat f : FORMATS) {
      WireBuffer viaValue = WireBuffer.allocate();
      new PmixWriter(viaValue, f).pack(Value.unsigned(DataType.UINT16, 300));
      WireBuffer typed = WireBuffer.allocate();
      new PmixWriter(typed, f).packByteEnum(DataType.UINT16, 300);
      assertArrayEquals(viaValue.toByteArray(), typed.toByteArray(), f.toString());
      assertEquals(
          300, new PmixReader(WireBuffer.wrap(typed.toByteArray()), f).unpackByteEnum(DataType.UINT16));
    }
    WireBuffer b = WireBuffer.allocate();
    assertThrows(
        IllegalArgumentException.class,
        () -> new PmixWriter(b, WireFormat.DEFAULT).packByteEnum(DataType.INT8, 3));
    assertThrows(
        IllegalArgumentException.class,
        () -> new PmixWriter(b, WireFormat.DEFAULT).packByteEnum(DataType.COMMAND, 256));
    assertThrows(
        IllegalArgumentException.class,
        () -> new PmixWriter(b, WireFormat.DEFAULT).packByteEnum(DataType.COMMAND, -1));
    assertEquals(0, b.readableBytes(), "a refused call writes nothing");
  }

  /** Reading {@code in} with {@code c} fails exactly as {@code unpackOne(c.type())} does. */
  private static void sameFailure(Call c, WireFormat f, byte[] in) {
    String where = c.type() + " " + f + " " + HexFormat.of().formatHex(in);
    PmixException viaValue =
        assertThrows(
            PmixException.class,
            () -> new PmixReader(WireBuffer.wrap(in), f).unpackOne(c.type()),
            where);
    PmixException typed =
        assertThrows(
            PmixException.class, () -> c.read().apply(new PmixReader(WireBuffer.wrap(in), f)), where);
    assertEquals(viaValue.status(), typed.status(), where);
  }

  private static byte[] callOf(WireFormat f, DataType type, List<Value> items) {
    WireBuffer b = WireBuffer.allocate();
    new PmixWriter(b, f).pack(type, items);
    return b.toByteArray();
  }
}
