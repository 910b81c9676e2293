package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataType;
import io.pmix.common.Value;
import io.pmix.common.codec.GoldenVectors;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link DecodeTool}, the Java side of {@code bin/pmix-decode}, run on golden vectors. */
class DecodeToolTest {
  private static final Map<String, GoldenVectors.Row> ROWS = new HashMap<>();

  static {
    for (GoldenVectors.Row r : GoldenVectors.load()) {
      ROWS.put(r.name() + " " + r.mode(), r);
    }
  }

  /** What one run printed, and its exit status. */
  private record Run(int status, String out, String err) {}

  private static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      status = DecodeTool.run(args, o, e);
    }
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static String hex(String name) {
    return row(name, "NON_DESC").hex();
  }

  private static GoldenVectors.Row row(String name, String mode) {
    GoldenVectors.Row r = ROWS.get(name + " " + mode);
    if (r == null) {
      throw new AssertionError("no vector " + name + " " + mode);
    }
    return r;
  }

  private static void assertDecodes(String expected, String... args) {
    Run r = run(args);
    assertEquals("", r.err());
    assertEquals(0, r.status());
    assertEquals(expected, r.out());
  }

  // ---- the formatter on golden vectors ----

  @Test
  void strings() {
    assertDecodes("PMIX_STRING hello world\n", "--types", "PMIX_STRING", hex("string.hello"));
    assertDecodes("PMIX_STRING h\u00e9llo \u20ac\n", "--types", "string", hex("string.utf8"));
    assertDecodes("PMIX_STRING NULL\n", "--types", "PMIX_STRING", hex("string.null"));
    assertDecodes("PMIX_STRING \"\"\n", "--types", "PMIX_STRING", hex("string.empty"));
    assertDecodes(
        "PMIX_STRING[3]\n  PMIX_STRING a\n  PMIX_STRING NULL\n  PMIX_STRING \"\"\n",
        "--types",
        "PMIX_STRING",
        hex("string.array3"));
    assertDecodes("PMIX_STRING[0]\n", "--types", "PMIX_STRING", hex("string.count0"));
  }

  @Test
  void info() {
    assertDecodes(
        "PMIX_INFO key=pmix.test flags=0x0\n  PMIX_INT32 42\n",
        "--types",
        "PMIX_INFO",
        hex("info.int32"));
    assertDecodes(
        "PMIX_INFO key=pmix.timeout flags=0x9 (REQD|QUALIFIER)\n  PMIX_BOOL true\n",
        "--types",
        "PMIX_INFO",
        hex("info.flags_qualifier"));
  }

  @Test
  void dataArrayOfInfo() {
    assertDecodes(
        """
        PMIX_DATA_ARRAY type=PMIX_INFO size=2
          PMIX_INFO key=a flags=0x0
            PMIX_INT32 5
          PMIX_INFO key=b flags=0x2 (ARRAY_END)
            PMIX_STRING t
        """,
        "--types",
        "PMIX_DATA_ARRAY",
        hex("darray.info"));
  }

  @Test
  void valueHoldingAProc() {
    assertDecodes(
        "PMIX_VALUE\n  PMIX_PROC nspace=ns rank=3\n", "--types", "PMIX_VALUE", hex("value.proc"));
  }

  private static final String SEQ =
      """
      PMIX_STRING spawn
      PMIX_INT32 7
      PMIX_INFO key=k flags=0x0
        PMIX_UINT16 1
      """;

  @Test
  void severalPackCalls() {
    assertDecodes(SEQ, "--types", "PMIX_STRING,PMIX_INT32,PMIX_INFO", hex("seq.string_int32_info"));
    // bare names, a split list, a type code
    assertDecodes(SEQ, "--types=string, int32,24", hex("seq.string_int32_info"));
  }

  @Test
  void fullyDescribedBuffersDescribeThemselves() {
    assertDecodes(SEQ, "--fully-described", row("seq.string_int32_info", "FULLY_DESC").hex());
  }

  @Test
  void nativeIntegers() {
    assertDecodes(
        SEQ,
        "--native",
        "--types",
        "PMIX_STRING,PMIX_INT32,PMIX_INFO",
        row("seq.string_int32_info", "NON_DESC+psquash=native").hex());
  }

  /** Every vector prints, and the fully described form prints what the typed form does. */
  @Test
  void everyGoldenVectorPrints() {
    Map<String, String> nonDesc = new HashMap<>();
    for (GoldenVectors.Row r : GoldenVectors.load()) {
      StringJoiner types = new StringJoiner(",");
      for (GoldenVectors.PackCall c : r.calls()) {
        types.add(c.type().pmixName());
      }
      Run run;
      switch (r.mode()) {
        case "NON_DESC":
          run = run("--types", types.toString(), r.hex());
          nonDesc.put(r.name(), run.out());
          break;
        case "FULLY_DESC":
          run = run("--fully-described", r.hex());
          break;
        default:
          run = run("--native", "--types", types.toString(), r.hex());
      }
      assertEquals("", run.err(), r.toString());
      assertEquals(0, run.status(), r.toString());
      assertTrue(run.out().endsWith("\n"), r.toString());
    }
    for (GoldenVectors.Row r : GoldenVectors.load()) {
      if (r.mode().equals("FULLY_DESC") && !r.name().equals("data_buffer.int32")) {
        assertEquals(nonDesc.get(r.name()), run("--fully-described", r.hex()).out(), r.toString());
      }
    }
  }

  @Test
  void controlCharactersAreEscaped() {
    assertEquals("a\\nb\\tc\\\\d\\x01", DecodeTool.text("a\nb\tc\\d\u0001"));
    assertEquals(
        "PMIX_STRING a\\nb\n",
        DecodeTool.formatCall(DataType.STRING, List.of(Value.of("a\nb"))));
  }

  // ---- input forms ----

  @Test
  void hexWithWhitespaceAndPrefixes() {
    assertDecodes("PMIX_INT32 7\n", "--types", "PMIX_INT32", "0x02 0E");
    assertDecodes("PMIX_INT32 7\n", "--types", "PMIX_INT32", "0x02", "0x0e");
    assertDecodes("PMIX_INT32 7\n", "--types", "PMIX_INT32", " 02\n0e\t");
  }

  @Test
  void files(@TempDir Path dir) throws IOException {
    Path raw = dir.resolve("raw.bin");
    Files.write(raw, new byte[] {0x02, 0x0e});
    assertDecodes("PMIX_INT32 7\n", "--types", "PMIX_INT32", raw.toString());
    Path text = dir.resolve("buffer.hex");
    Files.writeString(text, "0x020c737061776e00\n020e\n02046b00000d01\n");
    assertDecodes(SEQ, "--types", "PMIX_STRING,PMIX_INT32,PMIX_INFO", text.toString());
    // a binary file that is not hex text is taken as it is, even though it holds 0x0a bytes
    Path bin = dir.resolve("seq.bin");
    Files.write(bin, new byte[] {0x02, 0x0a, 0x61, 0x62, 0x63, 0x64, 0x00});
    assertDecodes("PMIX_STRING abcd\n", "--types", "PMIX_STRING", bin.toString());
  }

  // ---- errors ----

  @Test
  void malformedBytesExitOneWithStatusAndOffset() {
    String seq = hex("seq.string_int32_info");
    Run r = run("--types", "PMIX_STRING,PMIX_INT32,PMIX_INFO", seq.substring(0, seq.length() - 2));
    assertEquals(1, r.status());
    assertEquals("PMIX_STRING spawn\nPMIX_INT32 7\n", r.out());
    assertEquals(
        "pmix-decode: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER at byte 16, in pack call 3"
            + " (PMIX_INFO) starting at byte 10: varint cut off by the end of the buffer\n",
        r.err());

    // NON_DESC bytes read as fully described
    r = run("--fully-described", seq);
    assertEquals(1, r.status());
    assertTrue(
        r.err().startsWith("pmix-decode: PMIX_ERR_UNPACK_FAILURE at byte 1, in pack call 1"),
        r.err());

    // an unknown type inside a value
    r = run("--types", "PMIX_VALUE", "0246");
    assertEquals(1, r.status());
    assertTrue(r.err().startsWith("pmix-decode: PMIX_ERR_UNKNOWN_DATA_TYPE at byte 2,"), r.err());
  }

  @Test
  void leftOverBytesExitOne() {
    Run r = run("--types", "PMIX_STRING", hex("seq.string_int32_info"));
    assertEquals(1, r.status());
    assertEquals("PMIX_STRING spawn\n", r.out());
    assertEquals(
        "pmix-decode: 9 bytes left over at byte 8, after 1 pack calls: 020e02046b00000d01\n",
        r.err());
  }

  @Test
  void usageErrorsExitTwo() {
    assertEquals(2, run().status());
    assertEquals(2, run("0200").status()); // neither mode
    assertEquals(2, run("--fully-described", "--types", "PMIX_INT32", "0200").status());
    assertEquals(2, run("--types", "PMIX_NOPE", "0200").status());
    assertEquals(2, run("--types").status());
    assertEquals(2, run("--types", "PMIX_INT32", "xyz").status());
    assertEquals(2, run("--types", "PMIX_INT32", "020").status()); // odd number of digits
    assertEquals(2, run("--bogus", "0200").status());
    Run r = run("--types", "PMIX_INT32");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("usage: pmix-decode"), r.err());
    r = run("--help");
    assertEquals(0, r.status());
    assertTrue(r.out().startsWith("usage: pmix-decode"), r.out());
  }
}
