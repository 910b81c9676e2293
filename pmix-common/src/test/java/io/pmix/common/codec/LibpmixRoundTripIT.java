package io.pmix.common.codec;

import static java.util.Objects.requireNonNull;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.common.io.BaseEncoding;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Value;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.statistics.Statistics;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Live cross-check of the Java codec with OpenPMIx 4.2.2 itself: the C program {@code
 * src/test/c/codec_peer.c} unpacks what Java packed with the library's own {@code PMIx_Data_unpack}
 * and packs it again with {@code PMIx_Data_pack}; the bytes must come back unchanged, and Java must
 * read them back as the values it sent (after {@link WireNormalizer}: floats keep six decimals, a
 * PROC_INFO loses its exit code). One peer process runs per buffer mode, since C picks the mode
 * once per process.
 *
 * <ul>
 *   <li>Every golden vector whose {@code c_roundtrip} column says {@code ok}, NON_DESC and
 *       FULLY_DESC, goes through C unchanged; the rows that record a 4.2.2 defect ({@code
 *       repack-differs}, {@code unpack-failed}) still show exactly that defect.
 *   <li>An empty pack call of every type is byte-identical to what C writes for no items.
 *   <li>Properties (jqwik, 1,500 tries per mode): generated pack calls of every type C can
 *       round-trip, {@link CRoundTripValues} says which and with which limits. A failure's message
 *       starts with the seed that reproduces it ({@code @Property(seed = "...")}) and the shrunk
 *       sample; jqwik's report on stdout has the original sample too.
 *   <li>The DATA_TYPE defect (C reads a type code as a signed varint) behaves as documented.
 * </ul>
 *
 * <p>Not covered here, because C 4.2.2 cannot round-trip them: TOPO other than the golden one,
 * PROC_STATS, NODE_STATS with disk or net statistics, non-empty cpusets, non-zero type codes in
 * DATA_TYPE and REGATTR (other than as the defect), the data-array element types and value payloads
 * listed in {@link CRoundTripValues}. Not covered either: native psquash, several pack calls in one
 * buffer (each request is one call), malformed input. Needs gcc, pkg-config and the OpenPMIx
 * development files; without them it is skipped, or fails under {@code CI=true}.
 */
@AddLifecycleHook(LibpmixRoundTripIT.SeedInFailure.class)
class LibpmixRoundTripIT {
  private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(10);
  private static final List<BufferType> MODES = List.of(BufferType.NON_DESC, BufferType.FULLY_DESC);
  private static final BaseEncoding HEX = BaseEncoding.base16().lowerCase();

  private static final Peers PEERS = new Peers();

  // The golden rows run under JUnit Jupiter, the properties under jqwik: each engine has its own
  // lifecycle hooks. Both share the peers, which start on first use. jqwik reports an abort in
  // @BeforeContainer or in a lifecycle hook as an error; an abort while it sets up the property's
  // generators skips the property, so the @Provide methods build the peer.

  // Per test rather than @BeforeAll: surefire counts the tests of a class aborted in @BeforeAll
  // as neither run nor skipped, which hides the skip.
  @BeforeEach
  void buildPeerForJupiter() {
    PEERS.build();
  }

  @AfterAll
  static void stopPeersForJupiter() {
    PEERS.close();
  }

  @AfterContainer
  static void stopPeersForJqwik() {
    PEERS.close();
  }

  // ---- golden vectors ----

  static Stream<GoldenVectors.Row> goldenRowsC() {
    return GoldenVectors.load().stream()
        .filter(r -> r.mode().equals("NON_DESC") || r.mode().equals("FULLY_DESC"));
  }

  static Stream<GoldenVectors.Row> okRows() {
    return goldenRowsC().filter(r -> r.cRoundtrip().equals("ok"));
  }

  static Stream<GoldenVectors.Row> defectRows() {
    return goldenRowsC()
        .filter(
            r ->
                r.cRoundtrip().startsWith("repack-differs")
                    || r.cRoundtrip().startsWith("unpack-failed"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("okRows")
  void cRepacksGoldenVectorUnchanged(GoldenVectors.Row row) {
    GoldenVectors.PackCall call = onlyCall(row);
    Reply r =
        PEERS.roundTrip(row.format().bufferType(), call.type(), call.items().size(), row.bytes());
    assertEquals(Reply.ok(row.hex()), r, () -> row + ": C did not re-pack the vector unchanged");
  }

  private static final Pattern REPACKED = Pattern.compile("repack-differs .*repacked=([0-9a-f]+)");
  private static final Pattern FAILED = Pattern.compile("unpack-failed rc=(-?\\d+).*");

  @ParameterizedTest(name = "{0}")
  @MethodSource("defectRows")
  void cStillShowsTheRecordedDefect(GoldenVectors.Row row) {
    GoldenVectors.PackCall call = onlyCall(row);
    Reply expected;
    Matcher m = REPACKED.matcher(row.cRoundtrip());
    if (m.matches()) {
      expected = Reply.ok(m.group(1));
    } else {
      Matcher f = FAILED.matcher(row.cRoundtrip());
      assertTrue(f.matches(), "unexpected c_roundtrip " + row.cRoundtrip());
      expected = Reply.error(Integer.parseInt(f.group(1)), "unpack");
    }
    Reply r =
        PEERS.roundTrip(row.format().bufferType(), call.type(), call.items().size(), row.bytes());
    assertEquals(expected, r, () -> row + ": the 4.2.2 defect recorded in the vectors changed");
  }

  private static GoldenVectors.PackCall onlyCall(GoldenVectors.Row row) {
    assertEquals(1, row.calls().size(), row + " has several pack calls");
    return row.calls().get(0);
  }

  // ---- empty pack calls ----

  static Stream<Arguments> modesAndTypes() {
    List<Arguments> r = new ArrayList<>();
    for (BufferType mode : MODES) {
      for (DataType t : DataType.values()) {
        if (t.isRegistered() && t != DataType.UNDEF) {
          r.add(Arguments.of(mode, t));
        }
      }
    }
    return r.stream();
  }

  /**
   * A pack call of no items is not always just its count: C adds PID's run tag and POINTER's
   * sentinel byte. C itself cannot read back the empty calls of its varint types when they end the
   * buffer ({@link CRoundTripValues#NO_EMPTY_CALL}); that is checked too, as a known defect.
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("modesAndTypes")
  void emptyPackCallIsWhatCWrites(BufferType mode, DataType type) {
    Reply c = PEERS.request(mode, "EMPTY " + type.code());
    assertTrue(c.isOk(), () -> "C could not pack 0 items of " + type + ": " + c);
    byte[] java = pack(WireFormat.of(mode), type, List.of());
    assertEquals(c.hex(), HEX.encode(java), "0 items of " + type);
    assertEquals(List.of(), unpack(WireFormat.of(mode), type, c.bytes()));

    Reply back = PEERS.roundTrip(mode, type, 0, java);
    if (CRoundTripValues.NO_EMPTY_CALL.contains(type)) {
      assertEquals(Reply.error(-50, "unpack"), back, "C reading 0 items of " + type);
    } else {
      assertEquals(Reply.ok(c.hex()), back, "C round trip of 0 items of " + type);
    }
  }

  // ---- properties ----

  @Provide
  Arbitrary<GoldenVectors.PackCall> packCalls() {
    PEERS.build();
    return CRoundTripValues.packCalls();
  }

  @Property(tries = 1500)
  void cRepacksWhatJavaPacksNonDescribed(@ForAll("packCalls") GoldenVectors.PackCall call) {
    countType(call);
    assertCRoundTrip(BufferType.NON_DESC, call);
  }

  @Property(tries = 1500)
  void cRepacksWhatJavaPacksFullyDescribed(@ForAll("packCalls") GoldenVectors.PackCall call) {
    countType(call);
    assertCRoundTrip(BufferType.FULLY_DESC, call);
  }

  /** Every type must have been tried (the jqwik report also lists how often). */
  private static void countType(GoldenVectors.PackCall call) {
    Statistics.label("pack call type").collect(call.type().name());
    Statistics.label("pack call type")
        .coverage(
            c -> {
              for (DataType t : CRoundTripValues.PACK_TYPES) {
                c.check(t.name()).count(n -> n > 0);
              }
            });
  }

  @Provide
  Arbitrary<BufferType> modes() {
    PEERS.build();
    return Arbitraries.of(MODES);
  }

  /**
   * docs/codec.md §7 item 1: C packs a type code as an unsigned varint but unpacks it as a signed
   * (zigzag) one, so it re-packs {@code code} as {@code unzigzag(code)} read as 16 unsigned bits (3
   * becomes 65534). Holds for DATA_TYPE items and for the type field of REGATTR.
   */
  @Property(tries = 300)
  void cReadsTypeCodesAsSignedVarints(
      @ForAll("modes") BufferType mode,
      @ForAll @IntRange(min = 0, max = 0xffff) int code,
      @ForAll boolean inRegAttr) {
    int seen = ((code >>> 1) ^ -(code & 1)) & 0xffff;
    WireFormat f = WireFormat.of(mode);
    DataType type = inRegAttr ? DataType.REGATTR : DataType.DATA_TYPE;
    byte[] sent = pack(f, type, List.of(typeCodeItem(inRegAttr, code)));
    byte[] expected = pack(f, type, List.of(typeCodeItem(inRegAttr, seen)));
    assertEquals(Reply.ok(HEX.encode(expected)), PEERS.roundTrip(mode, type, 1, sent));
  }

  private static Value typeCodeItem(boolean inRegAttr, int code) {
    return inRegAttr
        ? new Value.RegAttr("PMIX_X", "pmix.x", code, List.of("d"))
        : Value.unsigned(DataType.DATA_TYPE, code);
  }

  // ---- the round trip ----

  private static void assertCRoundTrip(BufferType mode, GoldenVectors.PackCall call) {
    WireFormat f = WireFormat.of(mode);
    byte[] sent = pack(f, call.type(), call.items());
    Reply r = PEERS.roundTrip(mode, call.type(), call.items().size(), sent);
    if (!r.isOk()) {
      fail(
          "C could not round-trip "
              + call.type()
              + " x"
              + call.items().size()
              + ": "
              + r
              + "\nJava sent "
              + HEX.encode(sent));
    }
    if (!HEX.encode(sent).equals(r.hex())) {
      fail(
          "C re-packed other bytes, first difference at byte "
              + firstDifference(sent, r.bytes())
              + "\nJava: "
              + HEX.encode(sent)
              + "\nC:    "
              + r.hex());
    }
    List<Value> expected = new ArrayList<>();
    for (Value v : call.items()) {
      expected.add(WireNormalizer.normalize(v));
    }
    assertEquals(expected, unpack(f, call.type(), r.bytes()), "values read back from C's bytes");
  }

  private static int firstDifference(byte[] a, byte[] b) {
    int n = Math.min(a.length, b.length);
    for (int i = 0; i < n; i++) {
      if (a[i] != b[i]) {
        return i;
      }
    }
    return n;
  }

  private static byte[] pack(WireFormat f, DataType type, List<? extends Value> items) {
    ByteBuf out = Unpooled.buffer();
    try {
      new PmixWriter(out, f).pack(type, items);
      byte[] b = new byte[out.readableBytes()];
      out.readBytes(b);
      return b;
    } finally {
      out.release();
    }
  }

  private static List<Value> unpack(WireFormat f, DataType type, byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    try {
      PmixReader r = new PmixReader(in, f);
      List<Value> v = r.unpack(type, Integer.MAX_VALUE);
      assertFalse(r.hasRemaining(), () -> r.remaining() + " bytes left unread by Java");
      return v;
    } finally {
      in.release();
    }
  }

  /**
   * Puts the seed and the shrunk sample of a failed property into its failure message, so that they
   * reach the test report and not only jqwik's report on stdout.
   */
  public static final class SeedInFailure implements AroundPropertyHook {
    /** Declared on the class, meant for its properties. */
    @Override
    public PropagationMode propagateTo() {
      return PropagationMode.DIRECT_DESCENDANTS;
    }

    @Override
    public PropertyExecutionResult aroundProperty(
        PropertyLifecycleContext context, PropertyExecutor property) {
      PropertyExecutionResult r = property.execute();
      if (r.status() != PropertyExecutionResult.Status.FAILED) {
        return r;
      }
      String seed = r.seed().orElse("unknown");
      String sample = r.falsifiedParameters().map(Object::toString).orElse("none");
      if (sample.length() > 4000) {
        sample = sample.substring(0, 4000) + "...";
      }
      Throwable cause = r.throwable().orElse(null);
      AssertionError e =
          new AssertionError(
              "jqwik seed "
                  + seed
                  + " (rerun: @Property(seed = \""
                  + seed
                  + "\")), shrunk sample "
                  + sample
                  + "\n"
                  + (cause != null ? cause.getMessage() : ""),
              cause);
      return r.mapToFailed(e);
    }
  }

  // ---- the peers ----

  /** One reply line of the peer: {@code OK <hex>} or {@code ERR <status> <stage>}. */
  record Reply(@Nullable String hex, int status, @Nullable String stage) {
    static Reply ok(String hex) {
      return new Reply(hex, 0, null);
    }

    static Reply error(int status, String stage) {
      return new Reply(null, status, stage);
    }

    static Reply parse(String line) {
      String[] f = line.split(" ", -1);
      if (f[0].equals("OK") && f.length == 2) {
        return ok(f[1]);
      }
      if (f[0].equals("ERR") && f.length == 3) {
        return error(Integer.parseInt(f[1]), f[2]);
      }
      throw new AssertionError("not a codec_peer reply: " + line);
    }

    boolean isOk() {
      return hex != null;
    }

    byte[] bytes() {
      if (hex == null) {
        throw new AssertionError("no bytes in " + this);
      }
      return HEX.decode(hex);
    }

    @Override
    public String toString() {
      return hex != null ? "OK " + hex : "ERR " + status + " (" + stage + ")";
    }
  }

  /** The codec_peer processes, one per buffer mode, started on first use and after a crash. */
  private static final class Peers {
    @GuardedBy("this")
    private @Nullable Path executable;

    @GuardedBy("this")
    private final Map<BufferType, CProcess> running = new EnumMap<>(BufferType.class);

    /** Compiles the peer (or skips the tests when the C toolchain or libpmix is missing). */
    synchronized void build() {
      if (executable == null) {
        executable = CPrograms.compile("src/test/c/codec_peer.c");
      }
    }

    Reply roundTrip(BufferType mode, DataType type, int count, byte[] bytes) {
      return request(mode, type.code() + " " + count + " " + HEX.encode(bytes));
    }

    synchronized Reply request(BufferType mode, String line) {
      CProcess p = peer(mode);
      try {
        return Reply.parse(p.request(line, REPLY_TIMEOUT));
      } catch (AssertionError e) {
        // A crash or a hang: report it with the peer's stderr, and start afresh next time.
        running.remove(mode);
        p.close();
        throw new AssertionError(
            "codec_peer failed on: " + abbreviate(line) + "\n" + p.describe(), e);
      }
    }

    private synchronized CProcess peer(BufferType mode) {
      CProcess p = running.get(mode);
      if (p != null && p.isAlive()) {
        return p;
      }
      if (p != null) {
        p.close();
      }
      build();
      CProcess.Builder b =
          CProcess.builder(requireNonNull(executable, "executable")).name("codec_peer-" + mode);
      // A clean PMIx environment: nothing inherited may change the codec under test.
      for (String k : System.getenv().keySet()) {
        if (k.startsWith("PMIX_")) {
          b.unsetEnv(k);
        }
      }
      b.env(
          "PMIX_BFROP_BUFFER_TYPE",
          mode == BufferType.FULLY_DESC
              ? "PMIX_BFROP_BUFFER_FULLY_DESC"
              : "PMIX_BFROP_BUFFER_NON_DESC");
      p = b.start();
      String hello = p.readLine(REPLY_TIMEOUT);
      if (!hello.startsWith("READY " + mode + " ")) {
        String d = p.describe();
        p.close();
        throw new AssertionError("codec_peer did not start in " + mode + ": " + hello + "\n" + d);
      }
      running.put(mode, p);
      return p;
    }

    synchronized void close() {
      for (CProcess p : running.values()) {
        p.close();
      }
      running.clear();
    }

    private static String abbreviate(String line) {
      return line.length() <= 2000
          ? line
          : line.substring(0, 2000) + "... (" + line.length() + " chars)";
    }
  }
}
