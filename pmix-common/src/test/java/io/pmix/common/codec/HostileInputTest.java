package io.pmix.common.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.common.base.Strings;
import com.google.common.io.BaseEncoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bytes a peer should never send, and what {@link PmixReader} makes of them: always a {@link
 * PmixException} with the status its class javadoc promises (C 4.2.2's status where C reports one),
 * never another exception, never an allocation proportional to a declared count.
 */
class HostileInputTest {
  private static final WireFormat NON_DESC = WireFormat.DEFAULT;
  private static final WireFormat FULLY_DESC = WireFormat.FULLY_DESCRIBED;
  private static final WireFormat NATIVE = new WireFormat(BufferType.NON_DESC, IntEncoding.NATIVE);
  private static final int ALL = Integer.MAX_VALUE;

  // ---- truncation ----

  static Stream<GoldenVectors.Row> rows() {
    return GoldenVectors.load().stream();
  }

  /**
   * Every golden vector cut at every length: the pack calls that lie wholly before the cut decode
   * to what they hold, and the first one that does not fails with READ_PAST_END_OF_BUFFER; a cut on
   * a pack-call boundary is the only way for the calls before it to all succeed.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void everyTruncationFailsWithReadPastEnd(GoldenVectors.Row row) {
    byte[] whole = row.bytes();
    List<Integer> ends = new ArrayList<>();
    List<List<Value>> values = new ArrayList<>();
    ByteBuf all = Unpooled.wrappedBuffer(whole);
    try {
      PmixReader r = new PmixReader(all, row.format());
      for (GoldenVectors.PackCall c : row.calls()) {
        values.add(r.unpack(c.type(), ALL));
        ends.add(all.readerIndex());
      }
      assertFalse(r.hasRemaining());
    } finally {
      all.release();
    }
    for (int cut = 0; cut < whole.length; cut++) {
      ByteBuf in = Unpooled.wrappedBuffer(whole, 0, cut);
      try {
        PmixReader r = new PmixReader(in, row.format());
        int call = 0;
        for (; call < ends.size() && ends.get(call) <= cut; call++) {
          assertEquals(values.get(call), r.unpack(row.calls().get(call).type(), ALL));
        }
        DataType next = row.calls().get(call).type();
        PmixException e =
            assertThrows(PmixException.class, () -> r.unpack(next, ALL), "cut at " + cut);
        assertEquals(
            Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, e.status(), "cut at " + cut + ": " + e);
      } finally {
        in.release();
      }
    }
  }

  @Test
  void emptyBufferIsReadPastEnd() {
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "", DataType.INT32);
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, FULLY_DESC, "", DataType.STRING);
  }

  @Test
  void varintRunningOffTheEnd() {
    // count cut
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "80", DataType.INT32);
    // value cut after one continuation byte (C 4.2.2 would return a number here)
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "02ac", DataType.UINT32);
    // eight continuation bytes, the ninth missing
    assertFails(
        Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "02ffffffffffffffff", DataType.UINT64);
    // a string length cut
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "0280", DataType.STRING);
    // a fully described tag cut
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, FULLY_DESC, "0902ff", DataType.INT32);
    // native: a 4-byte value with 2 bytes left
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NATIVE, "000000010000", DataType.INT32);
  }

  @Test
  void varintWiderThanItsTypeIsUnpackFailure() {
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "02808004", DataType.UINT16);
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "02ffffffff1f", DataType.INT32);
    // a type tag wider than 16 bits inside a value
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "02808004", DataType.VALUE);
    // a count wider than 32 bits
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "ffffffff1f", DataType.INT32);
  }

  // ---- counts and lengths ----

  @Test
  void negativeCountIsBadParam() {
    assertFails(Status.ERR_BAD_PARAM, NON_DESC, "0102", DataType.INT32);
    // FULLY_DESC bytes read as NON_DESC: the INT32 tag 09 reads as the count -5 (C says success)
    assertFails(Status.ERR_BAD_PARAM, NON_DESC, "09020902", DataType.INT32);
    assertFails(Status.ERR_BAD_PARAM, NATIVE, "ffffffff", DataType.INT32);
    // nested counts: QUERY nkeys, APP argc, REGATTR description count, inside a value
    assertFails(Status.ERR_BAD_PARAM, NON_DESC, "0201", DataType.QUERY);
    assertFails(Status.ERR_BAD_PARAM, NON_DESC, "020001", DataType.APP);
    assertFails(Status.ERR_BAD_PARAM, NON_DESC, "02000000" + "01", DataType.REGATTR);
    assertFails(Status.ERR_BAD_PARAM, NON_DESC, "022901", DataType.VALUE);
  }

  @Test
  void negativeStringLengthIsOutOfResource() {
    // C 4.2.2 answers PMIX_ERR_OUT_OF_RESOURCE for a negative string length (docs/codec.md §5.2)
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0201", DataType.STRING);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "02ffffffff0f", DataType.STRING);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0203", DataType.INFO);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "020301", DataType.VALUE);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NATIVE, "00000001ffffffff", DataType.STRING);
  }

  @Test
  void lengthBeyondWhatRemainsIsReadPastEnd() {
    // "a" claimed as 5 bytes
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "020a6100", DataType.STRING);
    // a byte object of 100 bytes holding 3
    assertFails(
        Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "0264010203", DataType.BYTE_OBJECT);
    // three INT32 announced, one present
    assertFails(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "0602", DataType.INT32);
    // an array of 5 INT32 holding 2
    assertFails(
        Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "0209050204", DataType.DATA_ARRAY);
    // a raw regex without its NUL
    assertFails(
        Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, NON_DESC, "02706d69785b", DataType.REGEX);
  }

  @Test
  void lengthBeyondTheConfiguredMaximumIsOutOfResource() {
    CodecLimits four = CodecLimits.DEFAULT.withMaxStringBytes(4);
    // "abc" is 4 bytes with its NUL: accepted; "abcd" is 5: refused though all of it is there
    assertEquals("abc", decodeOne(NON_DESC, four, "0208616263" + "00", DataType.STRING).asString());
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, four, "020a61626364" + "00", DataType.STRING);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, four, "02050102030405", DataType.BYTE_OBJECT);
    assertFails(
        Status.ERR_OUT_OF_RESOURCE, NON_DESC, four, "02" + "01" + "050102030405", DataType.BUFFER);
    assertFails(
        Status.ERR_OUT_OF_RESOURCE,
        NON_DESC,
        four,
        "02" + hexOf("pmix[ab]") + "00",
        DataType.REGEX);

    CodecLimits two = CodecLimits.DEFAULT.withMaxItems(2);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, two, "06020406", DataType.INT32);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, two, "020903020406", DataType.DATA_ARRAY);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, two, "020003", DataType.DATA_ARRAY);
    assertFails(
        Status.ERR_OUT_OF_RESOURCE, NON_DESC, two, "0201" + "03" + "010203", DataType.COORD);
  }

  @Test
  void moreItemsThanTheCallerAllowsIsInadequateSpace() {
    ByteBuf in = Unpooled.wrappedBuffer(hex("06020406"));
    try {
      PmixReader r = new PmixReader(in, NON_DESC);
      PmixException e = assertThrows(PmixException.class, () -> r.unpack(DataType.INT32, 2));
      assertEquals(Status.ERR_UNPACK_INADEQUATE_SPACE, e.status());
    } finally {
      in.release();
    }
    assertEquals(3, decode(NON_DESC, CodecLimits.DEFAULT, "06020406", DataType.INT32, 3).size());
    assertEquals(3, decode(NON_DESC, CodecLimits.DEFAULT, "06020406", DataType.INT32, 9).size());
  }

  @Test
  void sizesOfTwoToTheSixtyThreeAndAboveAreBeyondEveryLimit() {
    String max = "ffffffffffffffffff"; // 2^64-1 as a size
    // These used to escape as IllegalArgumentException (ArrayList capacity, DataArray size)
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0209" + max, DataType.DATA_ARRAY);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0200" + max, DataType.DATA_ARRAY);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0200" + max, DataType.QUERY);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0201" + max, DataType.COORD);
    // ... and these were truncated to int and read as zero elements: silently wrong values
    String lowBitsOne = "81808080f0ffffffff"; // 0xffffffff00000001 as a size
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "0200" + lowBitsOne, DataType.QUERY);
    assertFails(
        Status.ERR_OUT_OF_RESOURCE, NON_DESC, "02" + "000000" + lowBitsOne, DataType.GEOMETRY);
    assertFails(
        Status.ERR_OUT_OF_RESOURCE, NON_DESC, "02" + "0000000000" + lowBitsOne, DataType.APP);
  }

  // ---- types ----

  @Test
  void wrongTagInFullyDescribedModeIsPackMismatch() {
    // INT32 1, FULLY_DESC, read as STRING: C says "got type PMIX_INT32 when expecting PMIX_STRING"
    assertFails(Status.ERR_PACK_MISMATCH, FULLY_DESC, "09020902", DataType.STRING);
    assertFails(Status.ERR_PACK_MISMATCH, FULLY_DESC, "09020902", DataType.VALUE);
    assertFails(
        Status.ERR_PACK_MISMATCH,
        new WireFormat(BufferType.FULLY_DESC, IntEncoding.NATIVE),
        "0009000000010009" + "00000001",
        DataType.UINT32);
    // NON_DESC bytes read as FULLY_DESC: the count 02 reads as tag BYTE where INT32 must be, which
    // C 4.2.2 reports as PMIX_ERR_UNPACK_FAILURE (docs/codec.md §2.4)
    assertFails(Status.ERR_UNPACK_FAILURE, FULLY_DESC, "0202", DataType.INT32);
    ByteBuf in = Unpooled.wrappedBuffer(hex("0202"));
    try {
      PmixReader r = new PmixReader(in, FULLY_DESC);
      PmixException e = assertThrows(PmixException.class, r::unpackDescribed);
      assertEquals(Status.ERR_UNPACK_FAILURE, e.status());
    } finally {
      in.release();
    }
  }

  @Test
  void unknownTypeInsideAValueIsUnknownDataType() {
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "0246", DataType.VALUE); // 70
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "021d", DataType.VALUE); // MODEX
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "022c", DataType.VALUE); // INFO_ARRAY
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "02ffff03", DataType.VALUE); // 65535
    // inside an info, a kval, a data array's element type, a described pack call
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "02046b000046", DataType.INFO);
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "02046b0046", DataType.KVAL);
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "024600", DataType.DATA_ARRAY);
    assertFails(Status.ERR_UNKNOWN_DATA_TYPE, NON_DESC, "02274602", DataType.VALUE);
    ByteBuf in = Unpooled.wrappedBuffer(hex("09024600"));
    try {
      PmixReader r = new PmixReader(in, FULLY_DESC);
      PmixException e = assertThrows(PmixException.class, r::unpackDescribed);
      assertEquals(Status.ERR_UNKNOWN_DATA_TYPE, e.status());
    } finally {
      in.release();
    }
  }

  @Test
  void malformedItemsAreUnpackFailures() {
    // a string without its NUL
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "020861626364", DataType.STRING);
    // float texts no C printf makes
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "0208616263" + "00", DataType.FLOAT);
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "020a312e3566" + "00", DataType.DOUBLE);
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "0200", DataType.DOUBLE);
    // a pid run tagged with a non-integer type
    assertFails(Status.ERR_UNPACK_FAILURE, NON_DESC, "020305", DataType.PID);
    // a 2000-digit float: refused by length before the parser sees it
    String digits = Strings.repeat("1", 2000);
    assertFails(
        Status.ERR_UNPACK_FAILURE,
        NON_DESC,
        "02" + sizeOfStr(digits) + hexOf(digits) + "00",
        DataType.FLOAT);
  }

  /** The float syntax check used to backtrack: 16,000 digits and an "x" took 7 s. */
  @Test
  void longFloatTextIsRejectedInLinearTime() {
    String text = Strings.repeat("1", 200_000) + "x";
    long t0 = System.nanoTime();
    PmixException e = assertThrows(PmixException.class, () -> FloatText.parseDouble(text));
    assertEquals(Status.ERR_UNPACK_FAILURE, e.status());
    e = assertThrows(PmixException.class, () -> FloatText.parseFloat(text));
    assertEquals(Status.ERR_UNPACK_FAILURE, e.status());
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms < 2_000, ms + " ms");
    // just under the reader's length cap, the text reaches the syntax check
    String under = Strings.repeat("1", PmixReader.MAX_FLOAT_TEXT - 1) + "x";
    assertFails(
        Status.ERR_UNPACK_FAILURE,
        NON_DESC,
        "02" + sizeOfStr(under) + hexOf(under) + "00",
        DataType.DOUBLE);
    String ok = Strings.repeat("1", PmixReader.MAX_FLOAT_TEXT - 7) + ".500000";
    assertEquals(
        Double.parseDouble(ok),
        decodeOne(
                NON_DESC,
                CodecLimits.DEFAULT,
                "02" + sizeOfStr(ok) + hexOf(ok) + "00",
                DataType.DOUBLE)
            .asDouble());
  }

  @Test
  void missingKeysAndOversizedNamesFollowC() {
    // C: a NULL info key or a NULL proc namespace is PMIX_ERROR (docs/codec.md §8)
    assertFails(Status.ERROR, NON_DESC, "02000000", DataType.INFO);
    assertFails(Status.ERROR, NON_DESC, "020000", DataType.PROC);
    // C truncates; the Java value model cannot hold them, so they are refused as bad parameters
    String ns = Strings.repeat("n", 300);
    assertFails(
        Status.ERR_BAD_PARAM, NON_DESC, "02" + sizeOfStr(ns) + hexOf(ns) + "0000", DataType.PROC);
    String key = Strings.repeat("k", 600);
    assertFails(
        Status.ERR_BAD_PARAM,
        NON_DESC,
        "02" + sizeOfStr(key) + hexOf(key) + "000000",
        DataType.INFO);
    // the compressed "blob" regex form is not supported
    assertFails(Status.ERR_NOT_SUPPORTED, NON_DESC, "02" + hexOf("blob:") + "00", DataType.REGEX);
  }

  // ---- nesting ----

  @Test
  void nestingBeyondTheDepthLimitIsOutOfResource() {
    // An array of VALUE whose one element is an array of VALUE ... around an empty INT32 array.
    // Each wrapper is one array and one value deep; the innermost array is one more.
    for (int wrappers : new int[] {0, 1, 5, 15}) {
      String hex = nestedArrays(wrappers);
      Value v = decodeOne(NON_DESC, CodecLimits.DEFAULT, hex, DataType.DATA_ARRAY);
      assertEquals(hex, encode(DataType.DATA_ARRAY, v), "round trip of depth " + wrappers);
    }
    // 2 * 16 + 1 = 33 levels: one beyond the default limit of 32
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, nestedArrays(16), DataType.DATA_ARRAY);
    // with a limit of 3: one wrapper (3 levels) is fine, two (5) are not
    CodecLimits three = CodecLimits.DEFAULT.withMaxDepth(3);
    assertEquals(
        DataType.DATA_ARRAY,
        decodeOne(NON_DESC, three, nestedArrays(1), DataType.DATA_ARRAY).type());
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, three, nestedArrays(2), DataType.DATA_ARRAY);
    // very deep input fails on the limit, not with a StackOverflowError, and fast
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, nestedArrays(100_000), DataType.DATA_ARRAY);
  }

  @Test
  void valuesOfValuesStopAtTheDepthLimit() {
    // a VALUE whose type is VALUE, 32 times, around an UNDEF: exactly the default limit
    String at = "02" + Strings.repeat("15", 32) + "00";
    assertEquals(
        Value.Undef.INSTANCE, decodeOne(NON_DESC, CodecLimits.DEFAULT, at, DataType.VALUE));
    assertFails(
        Status.ERR_OUT_OF_RESOURCE,
        NON_DESC,
        "02" + Strings.repeat("15", 33) + "00",
        DataType.VALUE);
    assertFails(
        Status.ERR_OUT_OF_RESOURCE,
        NON_DESC,
        "02" + Strings.repeat("15", 1 << 20) + "00",
        DataType.VALUE);
  }

  /** {@code wrappers} arrays of one VALUE holding the next array, around an empty INT32 array. */
  private static String nestedArrays(int wrappers) {
    StringBuilder sb = new StringBuilder(8 * wrappers + 8).append("02");
    for (int i = 0; i < wrappers; i++) {
      sb.append("150127"); // element type VALUE, size 1, the value's tag DATA_ARRAY
    }
    return sb.append("0900").toString(); // element type INT32, size 0
  }

  @Test
  void nestedArraysAreWhatTheWriterWrites() {
    Value v = DataArray.of(DataType.INT32, List.of());
    for (int i = 0; i < 3; i++) {
      v = DataArray.of(DataType.VALUE, List.of(v));
    }
    assertEquals(nestedArrays(3), encode(DataType.DATA_ARRAY, v));
  }

  // ---- allocation ----

  /** A huge declared count with a tiny buffer fails at once, without allocating for the count. */
  @Test
  void hugeCountWithATinyBufferFailsFastWithoutAllocating() {
    // over the default item limit: refused before anything is read
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "feffffff0f02", DataType.INT32);
    assertFails(Status.ERR_OUT_OF_RESOURCE, NATIVE, "7fffffff00000002", DataType.INT32);
    // just under it (16 Mi - 1): every type fails when the bytes run out, having allocated about
    // what the bytes would hold
    String count = "feffff0f";
    for (DataType t : DataType.values()) {
      if (!t.isRegistered()) {
        continue;
      }
      for (String body : new String[] {"", "00", "02", "0e01", "0102", "00000000"}) {
        long allocated = allocatedBy(() -> decodeAll(NON_DESC, count + body, t));
        assertTrue(allocated < 256 * 1024, t + " " + body + " allocated " + allocated + " bytes");
      }
    }
    // sizes inside arrays, queries, byte objects, coordinates
    long a =
        allocatedBy(
            () -> {
              assertFails(
                  Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                  NON_DESC,
                  "0209ffffff07",
                  DataType.DATA_ARRAY);
              assertFails(
                  Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                  NON_DESC,
                  "0200ffffff07",
                  DataType.QUERY);
              assertFails(
                  Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                  NON_DESC,
                  "02ffffff1f",
                  DataType.BYTE_OBJECT);
              assertFails(
                  Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                  NON_DESC,
                  "0201ffffff07",
                  DataType.COORD);
              assertFails(
                  Status.ERR_OUT_OF_RESOURCE, NON_DESC, "02ffffffff0f", DataType.BYTE_OBJECT);
            });
    assertTrue(a < 512 * 1024, "allocated " + a);
  }

  /** POINTER items occupy no bytes: 4.2.2 writes one sentinel byte per run, whatever its length. */
  @Test
  void pointerRunsAreRationedByTheInputSize() {
    // the golden vector: three pointers, one byte
    assertEquals(3, decode(NON_DESC, CodecLimits.DEFAULT, "0601", DataType.POINTER, ALL).size());
    // 16 Mi - 1 pointers from 5 bytes: this used to allocate 16 Mi list slots
    long a =
        allocatedBy(
            () ->
                assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "feffff0f01", DataType.POINTER));
    assertTrue(a < 64 * 1024, "allocated " + a);
    // 1000 pointers from 3 bytes
    assertFails(Status.ERR_OUT_OF_RESOURCE, NON_DESC, "d00f01", DataType.POINTER);
    // many small runs inside values: 64 pointers per 4 bytes adds up too
    assertFails(
        Status.ERR_OUT_OF_RESOURCE,
        NON_DESC,
        "d00f" + Strings.repeat("271f4001", 1000),
        DataType.VALUE);
    // but an ordinary mix of pointers and data is fine
    assertEquals(
        100,
        decode(
                NON_DESC,
                CodecLimits.DEFAULT,
                "c801" + Strings.repeat("1f01", 100),
                DataType.VALUE,
                ALL)
            .size());
  }

  /**
   * Long runs of the smallest encoding of each type allocate no more per input byte than the fuzz
   * test allows ({@code 64 * length + 64 KiB}); before FLOAT text was checked by hand, a run of "0"
   * floats cost 800 bytes per input byte (a regex compiled per item).
   */
  @Test
  void longRunsOfTinyItemsAllocateInProportion() {
    String f0 = "043000"; // the FLOAT text "0"
    String[][] cases = {
      {"FLOAT", "", f0},
      {"DOUBLE", "", f0},
      {"BOOL", "", "01"},
      {"INT8", "", "00"},
      {"BYTE", "", "ff"},
      {"UINT32", "", "ffffffff0f"},
      {"PROC_RANK", "", "00"},
      {"INT64", "", "00"},
      {"PID", "0e", "00"},
      {"INT", "", "00"},
      {"SIZE", "", "00"},
      {"STATUS", "", "7f"},
      {"STRING", "", "00"},
      {"STRING", "", "046100"},
      {"REGEX", "", "00"},
      {"PROC", "", "020000"},
      {"INFO", "", "02000000"},
      {"KVAL", "", "0000"},
      {"PDATA", "", "020000020000"},
      {"VALUE", "", "00"},
      {"VALUE", "", "147f"},
      {"VALUE", "", "1f01"},
      {"VALUE", "", "270900"},
      {"VALUE", "", "270000"},
      {"DATA_ARRAY", "", "0900"},
      {"BYTE_OBJECT", "", "00"},
      {"BUFFER", "", "0100"},
      {"TIMEVAL", "", "0000"},
      {"ENVAR", "", "000000"},
      {"COORD", "", "0000"},
      {"REGATTR", "", "00000000"},
      {"QUERY", "", "0000"},
      {"APP", "", "000000000000"},
      {"PROC_INFO", "", "0200000000" + "0e0000"},
      {"GEOMETRY", "", "00000000"},
      {"DEVICE_DIST", "", "0000000000"},
      {"ENDPOINT", "", "000000"},
      {"PROC_CPUSET", "", "00"},
      {"TOPO", "", "00"},
      {"DISK_STATS", "", Strings.repeat("00", 12)},
      {"NET_STATS", "", Strings.repeat("00", 7)},
      {"NODE_STATS", "", "00" + Strings.repeat(f0, 11) + "00000000"},
      {
        "PROC_STATS",
        "",
        "00" + "020000" + "0e00" + "00" + "00" + "0000" + "00" + "00" + f0 + f0 + f0 + "00" + "0000"
      },
    };
    int n = 20_000;
    String count = "c0b802"; // 20000 as sv32
    double worst = 0;
    String worstCase = "";
    for (String[] c : cases) {
      DataType t = DataType.fromName(c[0]);
      String hex = count + c[1] + Strings.repeat(c[2], n);
      assertEquals(n, decode(NON_DESC, CodecLimits.DEFAULT, hex, t, ALL).size(), c[0] + " " + c[2]);
      int length = hex.length() / 2;
      long allocated =
          allocatedBy(
              () -> {
                List<Value> unused = decode(NON_DESC, CodecLimits.DEFAULT, hex, t, ALL);
              });
      assertTrue(
          allocated <= 64L * length + 64 * 1024,
          String.format(
              "%s of %s x %d: %d bytes allocated for %d bytes (%.1f per byte)",
              c[0], c[2], n, allocated, length, (double) allocated / length));
      if ((double) allocated / length > worst) {
        worst = (double) allocated / length;
        worstCase = c[0] + " of " + c[2];
      }
    }
    System.out.printf(
        java.util.Locale.ROOT,
        "HostileInputTest: runs of %d tiny items: at most %.1f bytes allocated per input byte"
            + " (%s)%n",
        n,
        worst,
        worstCase);
  }

  // ---- helpers ----

  private static void assertFails(Status expected, WireFormat f, String hex, DataType type) {
    assertFails(expected, f, CodecLimits.DEFAULT, hex, type);
  }

  /** Decoding one pack call of {@code type} from {@code hex} fails with {@code expected}. */
  private static void assertFails(
      Status expected, WireFormat f, CodecLimits limits, String hex, DataType type) {
    ByteBuf in = Unpooled.wrappedBuffer(hex(hex));
    try {
      PmixReader r = new PmixReader(in, f, limits);
      List<Value> got;
      try {
        got = r.unpack(type, ALL);
      } catch (PmixException e) {
        assertEquals(
            expected, e.status(), type + " from " + abbreviate(hex) + ": " + e.getMessage());
        return;
      } catch (RuntimeException | StackOverflowError | OutOfMemoryError x) {
        throw new AssertionError(
            type + " from " + abbreviate(hex) + " threw " + x + " instead of " + expected, x);
      }
      fail(type + " from " + abbreviate(hex) + " gave " + got + " instead of " + expected);
    } finally {
      in.release();
    }
  }

  private static List<Value> decode(
      WireFormat f, CodecLimits limits, String hex, DataType type, int maxItems) {
    ByteBuf in = Unpooled.wrappedBuffer(hex(hex));
    try {
      PmixReader r = new PmixReader(in, f, limits);
      List<Value> v = r.unpack(type, maxItems);
      assertFalse(r.hasRemaining(), "bytes left over");
      return v;
    } finally {
      in.release();
    }
  }

  private static Value decodeOne(WireFormat f, CodecLimits limits, String hex, DataType type) {
    List<Value> v = decode(f, limits, hex, type, ALL);
    assertEquals(1, v.size());
    return v.get(0);
  }

  /** Decodes pack calls until the input ends or fails; only a PmixException may end it early. */
  private static void decodeAll(WireFormat f, String hex, DataType type) {
    ByteBuf in = Unpooled.wrappedBuffer(hex(hex));
    try {
      PmixReader r = new PmixReader(in, f);
      while (r.hasRemaining()) {
        List<Value> unused = r.unpack(type, ALL);
      }
    } catch (PmixException expected) {
      // what hostile input must give
    } finally {
      in.release();
    }
  }

  private static String encode(DataType type, Value v) {
    ByteBuf out = Unpooled.buffer();
    try {
      new PmixWriter(out).pack(type, List.of(v));
      return ByteBufUtil.hexDump(out);
    } finally {
      out.release();
    }
  }

  private static long allocatedBy(Runnable r) {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    r.run(); // once for class loading and string-concatenation bootstraps
    long before = mx.getCurrentThreadAllocatedBytes();
    r.run();
    return mx.getCurrentThreadAllocatedBytes() - before;
  }

  /** The sv32 length prefix of a non-NULL ASCII string. */
  private static String sizeOfStr(String s) {
    long u = 2L * (s.length() + 1);
    StringBuilder sb = new StringBuilder();
    while ((u & ~0x7fL) != 0) {
      sb.append(String.format("%02x", (u & 0x7f) | 0x80));
      u >>>= 7;
    }
    return sb.append(String.format("%02x", u)).toString();
  }

  private static String hexOf(String ascii) {
    return BaseEncoding.base16()
        .lowerCase()
        .encode(ascii.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }

  private static byte[] hex(String s) {
    return BaseEncoding.base16().lowerCase().decode(s);
  }

  private static String abbreviate(String hex) {
    return hex.length() <= 80 ? hex : hex.substring(0, 80) + "...(" + hex.length() / 2 + " bytes)";
  }
}
