package io.pmix.common.codec;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * jqwik generators of pack calls that OpenPMIx 4.2.2 can unpack and re-pack unchanged, for {@link
 * LibpmixRoundTripIT}. The type lists below are where the limits of the C codec (docs/codec.md
 * §7, and what the live peer showed) are written down; everything else is generated freely, with a
 * strong bias towards edges: integer extremes and varint boundaries (2^7k, 2^55, 2^56, 2^63), NULL
 * versus empty strings, UTF-8 up to four bytes per character, strings at their length limits, long
 * strings, empty lists and arrays, NaN, infinities and negative zero, the special ranks, info flags
 * with and without the reserved bits, and containers nested up to {@value #MAX_DEPTH} deep (info
 * arrays inside values inside infos, values inside arrays, ...).
 */
final class CRoundTripValues {
  /** How deep containers (VALUE, INFO, PDATA, KVAL, APP, QUERY, DATA_ARRAY) nest. */
  static final int MAX_DEPTH = 3;

  /**
   * Types whose pack calls C round-trips. Left out: UNDEF, MODEX and INFO_ARRAY (C knows no storage
   * or codec for them), TOPO (needs an hwloc topology; a NULL one crashes C's packer; the golden
   * vector covers a real one) and PROC_STATS (C's unpacker reads one float more than its packer
   * writes). DATA_TYPE and REGATTR are generated with type code 0 only: C unpacks the code as a
   * signed varint, and 0 is the only value that survives (the defect has its own property).
   */
  static final List<DataType> PACK_TYPES = packTypes();

  /**
   * Types a {@code pmix_value_t} carries through C (besides UNDEF): everything that lives in the C
   * union or behind one of its pointers. Not VALUE, INFO, PDATA, APP, KVAL, BUFFER or QUERY (no
   * room for them in the union), nor DATA_BUFFER (C's value packer reads past the value).
   */
  static final List<DataType> VALUE_TYPES = valueTypes();

  /**
   * Element types of a non-empty data array C can unpack: its array allocator knows no others
   * (DATA_ARRAY, REGEX, JOB_STATE, DEVTYPE, LOCTYPE, COMMAND, COMPRESSED_BYTE_OBJECT, BUFFER, KVAL,
   * DATA_BUFFER and the four STOR types fail with PMIX_ERR_NOMEM).
   */
  static final List<DataType> ARRAY_TYPES = arrayTypes();

  /**
   * Types whose <em>empty</em> pack call C cannot unpack when it ends the buffer: the flex128
   * integer reader wants one more byte even for zero items
   * (PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER), and PID also has its run tag. Observed with the
   * peer; in the middle of a buffer they read fine.
   */
  static final Set<DataType> NO_EMPTY_CALL =
      EnumSet.of(
          DataType.SIZE,
          DataType.PID,
          DataType.INT,
          DataType.INT16,
          DataType.INT32,
          DataType.INT64,
          DataType.UINT,
          DataType.UINT16,
          DataType.UINT32,
          DataType.UINT64,
          DataType.STATUS,
          DataType.INFO_DIRECTIVES,
          DataType.DATA_TYPE,
          DataType.PROC_RANK,
          DataType.IOF_CHANNEL,
          DataType.DEVTYPE,
          DataType.LOCTYPE,
          DataType.STOR_MEDIUM,
          DataType.STOR_ACCESS,
          DataType.STOR_PERSIST,
          DataType.STOR_ACCESS_TYPE);

  /** Container types: they only appear while the nesting depth allows. */
  private static final Set<DataType> CONTAINERS =
      EnumSet.of(
          DataType.VALUE,
          DataType.INFO,
          DataType.PDATA,
          DataType.KVAL,
          DataType.APP,
          DataType.QUERY,
          DataType.DATA_ARRAY);

  private CRoundTripValues() {}

  private static List<DataType> packTypes() {
    List<DataType> r = new ArrayList<>();
    for (DataType t : DataType.values()) {
      if (t.isRegistered()
          && t != DataType.UNDEF
          && t != DataType.TOPO
          && t != DataType.PROC_STATS) {
        r.add(t);
      }
    }
    return List.copyOf(r);
  }

  private static List<DataType> valueTypes() {
    Set<DataType> no =
        EnumSet.of(
            DataType.VALUE,
            DataType.INFO,
            DataType.PDATA,
            DataType.APP,
            DataType.KVAL,
            DataType.BUFFER,
            DataType.QUERY,
            DataType.DATA_BUFFER);
    List<DataType> r = new ArrayList<>();
    for (DataType t : PACK_TYPES) {
      if (!no.contains(t)) {
        r.add(t);
      }
    }
    return List.copyOf(r);
  }

  private static List<DataType> arrayTypes() {
    Set<DataType> no =
        EnumSet.of(
            DataType.DATA_ARRAY,
            DataType.REGEX,
            DataType.JOB_STATE,
            DataType.DEVTYPE,
            DataType.LOCTYPE,
            DataType.COMMAND,
            DataType.COMPRESSED_BYTE_OBJECT,
            DataType.BUFFER,
            DataType.KVAL,
            DataType.DATA_BUFFER,
            DataType.STOR_MEDIUM,
            DataType.STOR_ACCESS,
            DataType.STOR_PERSIST,
            DataType.STOR_ACCESS_TYPE);
    List<DataType> r = new ArrayList<>();
    for (DataType t : PACK_TYPES) {
      if (!no.contains(t)) {
        r.add(t);
      }
    }
    return List.copyOf(r);
  }

  // ---- pack calls ----

  /** One pack call: a type from {@link #PACK_TYPES} and 0 to 4 items of it. */
  static Arbitrary<GoldenVectors.PackCall> packCalls() {
    return types(PACK_TYPES).flatMap(CRoundTripValues::packCallsOf);
  }

  /** One pack call of {@code type}: 0 (where C allows it) to 4 items. */
  static Arbitrary<GoldenVectors.PackCall> packCallsOf(DataType type) {
    int min = NO_EMPTY_CALL.contains(type) ? 1 : 0;
    return item(type, 0)
        .list()
        .ofMinSize(min)
        .ofMaxSize(4)
        .map(items -> new GoldenVectors.PackCall(type, items));
  }

  /** An item of {@code type} at nesting depth {@code depth}. */
  static Arbitrary<Value> item(DataType type, int depth) {
    if (type == DataType.PROC_RANK) {
      return rank().map(Value::rank);
    }
    if (type == DataType.DATA_TYPE) {
      return Arbitraries.just(Value.unsigned(DataType.DATA_TYPE, 0));
    }
    if (type.isUnsignedInteger()) {
      return unsigned(type.bits()).map(v -> Value.unsigned(type, v));
    }
    if (type.isSignedInteger()) {
      return signed(type.bits()).map(v -> Value.signed(type, v));
    }
    switch (type) {
      case BOOL:
        return Arbitraries.of(true, false).map(Value::of);
      case STATUS:
        return status().map(Value::status);
      case FLOAT:
        return floats().map(Value.Real32::new);
      case DOUBLE:
        return doubles().map(Value.Real64::new);
      case TIMEVAL:
        return Combinators.combine(signed(64), signed(64)).as(Value.TimeVal::new);
      case STRING:
        return text().injectNull(0.15).map(Value::of);
      case PROC_NSPACE:
        return nspace().map(s -> new Value.Str(DataType.PROC_NSPACE, s));
      case REGEX:
        return regex().map(s -> new Value.Str(DataType.REGEX, s));
      case BYTE_OBJECT:
      case COMPRESSED_STRING:
      case COMPRESSED_BYTE_OBJECT:
      case DATA_BUFFER:
        return bytes().map(b -> new Value.Bytes(type, b));
      case BUFFER:
        return Combinators.combine(
                Arbitraries.frequencyOf(
                    Tuple.of(4, Arbitraries.of(1, 2)),
                    Tuple.of(1, Arbitraries.integers().between(0, 255))),
                bytes())
            .as(Value.Buffer::new);
      case POINTER:
        return Arbitraries.just(Value.Pointer.INSTANCE);
      case PROC:
        return proc().map(p -> p);
      case PROC_INFO:
        return Combinators.combine(
                proc(),
                text().injectNull(0.2),
                text().injectNull(0.2),
                signed(32),
                Arbitraries.integers(),
                Arbitraries.integers().between(0, 255))
            .as(
                (p, h, e, pid, exit, st) ->
                    new Value.ProcInfo(p, h, e, (int) (long) pid, exit, st));
      case ENVAR:
        return Combinators.combine(
                text().injectNull(0.15),
                text().injectNull(0.15),
                Arbitraries.integers().between(0, 255))
            .as(Value.Envar::new);
      case COORD:
        return coord().map(c -> c);
      case REGATTR:
        return Combinators.combine(text().injectNull(0.2), key(), text().list().ofMaxSize(3))
            .as((n, s, d) -> new Value.RegAttr(n, s, 0, d));
      case PROC_CPUSET:
        // 4.2.2 cannot pack a non-empty cpuset: only "unbound" and the empty bitmap.
        return Arbitraries.of("").injectNull(0.5).map(Value.Cpuset::new);
      case GEOMETRY:
        return Combinators.combine(
                unsigned(64),
                text().injectNull(0.2),
                text().injectNull(0.2),
                coord().list().ofMaxSize(3))
            .as(Value.Geometry::new);
      case DEVICE_DIST:
        return Combinators.combine(
                text().injectNull(0.2),
                text().injectNull(0.2),
                unsigned(64),
                unsigned(16),
                unsigned(16))
            .as(
                (u, o, t, min, max) ->
                    new Value.DeviceDist(u, o, t, (int) (long) min, (int) (long) max));
      case ENDPOINT:
        return Combinators.combine(text().injectNull(0.2), text().injectNull(0.2), bytes())
            .as(Value.Endpoint::new);
      case DISK_STATS:
        return Combinators.combine(text().injectNull(0.2), unsigned(64).list().ofSize(11))
            .as(Value.DiskStats::new);
      case NET_STATS:
        return Combinators.combine(text().injectNull(0.2), unsigned(64).list().ofSize(6))
            .as(Value.NetStats::new);
      case NODE_STATS:
        // Disk and net statistics inside node statistics make 4.2.2's packer send garbage.
        return Combinators.combine(
                text().injectNull(0.2), floats().list().ofSize(11), item(DataType.TIMEVAL, depth))
            .as((n, l, t) -> new Value.NodeStats(n, l, (Value.TimeVal) t, List.of(), List.of()));
      case VALUE:
        return value(depth);
      case INFO:
        return info(depth).map(i -> i);
      case PDATA:
        return Combinators.combine(proc(), key(), value(depth + 1)).as(Value.PData::new);
      case KVAL:
        return Combinators.combine(key().injectNull(0.1), value(depth + 1)).as(Value.KVal::new);
      case APP:
        return Combinators.combine(
                text().injectNull(0.2),
                text().list().ofMaxSize(3),
                text().list().ofMaxSize(3),
                text().injectNull(0.2),
                signed(32),
                info(depth + 1).list().ofMaxSize(3))
            .as((c, a, e, w, m, i) -> new Value.App(c, a, e, w, (int) (long) m, i));
      case QUERY:
        return Combinators.combine(text().list().ofMaxSize(3), info(depth + 1).list().ofMaxSize(3))
            .as(Value.Query::new);
      case DATA_ARRAY:
        return array(depth);
      default:
        throw new IllegalArgumentException("no generator for " + type);
    }
  }

  // ---- containers ----

  /** A VALUE: UNDEF or an item of a {@link #VALUE_TYPES} type. */
  private static Arbitrary<Value> value(int depth) {
    Arbitrary<Value> undef = Arbitraries.<Value>just(Value.Undef.INSTANCE).withoutEdgeCases();
    if (depth >= MAX_DEPTH) {
      return Arbitraries.frequencyOf(
          Tuple.of(1, undef),
          Tuple.of(30, types(leaves(VALUE_TYPES)).flatMap(t -> item(t, depth + 1))));
    }
    return Arbitraries.frequencyOf(
        Tuple.of(1, undef),
        // Infos carrying arrays of infos: the shape of most real PMIx traffic.
        Tuple.of(3, infoArray(depth + 1)),
        Tuple.of(30, types(VALUE_TYPES).flatMap(t -> item(t, depth + 1))));
  }

  private static Arbitrary<Value> infoArray(int depth) {
    return info(depth + 1).list().ofMaxSize(3).map(DataArray::ofInfos);
  }

  private static Arbitrary<Info> info(int depth) {
    return Combinators.combine(key(), infoFlags(), value(depth + 1)).as(Info::new);
  }

  private static Arbitrary<Value> array(int depth) {
    List<DataType> types = depth < MAX_DEPTH ? ARRAY_TYPES : leaves(ARRAY_TYPES);
    Arbitrary<Value> typed =
        types(types)
            .flatMap(
                t -> item(t, depth + 1).list().ofMaxSize(4).map(items -> DataArray.of(t, items)));
    // 4.2.2 writes (and reads back) the declared size of an UNDEF array, with no elements, and
    // takes any size_t; the Java reader refuses sizes above CodecLimits.maxItems, as for any
    // array, so the sizes stay within that (up to the limit itself).
    long maxItems = CodecLimits.DEFAULT.maxItems();
    Arbitrary<Value> undef =
        Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(0L)),
                Tuple.of(2, Arbitraries.longs().between(1, 10)),
                Tuple.of(1, Arbitraries.longs().between(0, maxItems)))
            .map(DataArray::undefined);
    return Arbitraries.frequencyOf(Tuple.of(12, typed), Tuple.of(1, undef));
  }

  /**
   * A uniform choice of type. Without jqwik's edge cases: they would be the first and last types of
   * the list, injected often enough at every nesting level to crowd out the others (the edge cases
   * of the values themselves are kept).
   */
  private static Arbitrary<DataType> types(List<DataType> types) {
    return Arbitraries.of(types).withoutEdgeCases();
  }

  private static List<DataType> leaves(List<DataType> types) {
    List<DataType> r = new ArrayList<>();
    for (DataType t : types) {
      if (!CONTAINERS.contains(t)) {
        r.add(t);
      }
    }
    return r;
  }

  // ---- scalars ----

  /** Signed numbers of {@code bits} bits: extremes, values around 2^k, and anything. */
  static Arbitrary<Long> signed(int bits) {
    long min = bits == 64 ? Long.MIN_VALUE : -(1L << (bits - 1));
    long max = bits == 64 ? Long.MAX_VALUE : (1L << (bits - 1)) - 1;
    Arbitrary<Long> edges = Arbitraries.of(0L, -1L, 1L, min, max, min + 1, max - 1);
    // Around every power of two, both signs, wrapped into the width: hits every varint boundary.
    Arbitrary<Long> powers =
        Combinators.combine(
                Arbitraries.integers().between(0, 63),
                Arbitraries.longs().between(-1, 1),
                Arbitraries.of(false, true))
            .as(
                (k, d, neg) -> {
                  long v = (1L << k) + d;
                  v = neg ? -v : v;
                  return bits == 64 ? v : (v << (64 - bits)) >> (64 - bits);
                });
    return Arbitraries.frequencyOf(
        Tuple.of(2, edges),
        Tuple.of(3, powers),
        Tuple.of(5, Arbitraries.longs().between(min, max)));
  }

  /** Unsigned numbers of {@code bits} bits as unsigned bits in a long. */
  static Arbitrary<Long> unsigned(int bits) {
    long mask = bits == 64 ? -1L : (1L << bits) - 1;
    Arbitrary<Long> edges =
        bits == 64
            ? Arbitraries.of(
                0L, 1L, -1L, 1L << 55, (1L << 56) - 1, 1L << 56, 1L << 63, Long.MAX_VALUE)
            : Arbitraries.of(0L, 1L, mask, mask - 1, 127L & mask, 128L & mask);
    Arbitrary<Long> powers =
        Combinators.combine(
                Arbitraries.integers().between(0, 63), Arbitraries.longs().between(-1, 1))
            .as((k, d) -> ((1L << k) + d) & mask);
    Arbitrary<Long> any = bits == 64 ? Arbitraries.longs() : Arbitraries.longs().between(0, mask);
    return Arbitraries.frequencyOf(Tuple.of(2, edges), Tuple.of(3, powers), Tuple.of(5, any));
  }

  /** Ranks: the special ones and any other 32-bit value. */
  static Arbitrary<Integer> rank() {
    return Arbitraries.frequencyOf(
        Tuple.of(
            2,
            Arbitraries.of(
                Proc.RANK_UNDEF,
                Proc.RANK_WILDCARD,
                Proc.RANK_LOCAL_NODE,
                Proc.RANK_INVALID,
                Proc.RANK_LOCAL_PEERS,
                Proc.RANK_VALID,
                0)),
        Tuple.of(3, unsigned(32).map(v -> (int) (long) v)));
  }

  private static Arbitrary<Status> status() {
    return Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.integers().between(-500, 0)),
            Tuple.of(1, Arbitraries.of(Integer.MIN_VALUE, Integer.MAX_VALUE, -3000, 1, 42)),
            Tuple.of(1, Arbitraries.integers()))
        .map(Status::of);
  }

  private static Arbitrary<Integer> infoFlags() {
    return Arbitraries.frequencyOf(
        Tuple.of(
            4,
            Arbitraries.of(
                0,
                Info.REQUIRED,
                Info.ARRAY_END,
                Info.REQUIRED_PROCESSED,
                Info.QUALIFIER,
                Info.REQUIRED | Info.QUALIFIER,
                0xffff0000,
                -1)),
        Tuple.of(1, Arbitraries.integers()));
  }

  private static Arbitrary<Float> floats() {
    Arbitrary<Float> edges =
        Arbitraries.of(
            0f,
            -0f,
            1f,
            -1f,
            0.5f,
            0.1f,
            1e-7f,
            -1e-7f,
            5e-7f,
            123456.79f, // exactly 123456.7890625: a tie at six decimals, "123456.789062"
            16777216f,
            Float.MAX_VALUE,
            -Float.MAX_VALUE,
            Float.MIN_VALUE,
            Float.MIN_NORMAL,
            Float.NaN,
            Float.intBitsToFloat(0xffc00000), // NaN with the sign bit: C prints "-nan"
            Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY);
    return Arbitraries.frequencyOf(
        Tuple.of(2, edges),
        Tuple.of(3, Arbitraries.integers().map(Float::intBitsToFloat)),
        Tuple.of(3, Arbitraries.floats().between(-1e6f, 1e6f).ofScale(7)));
  }

  private static Arbitrary<Double> doubles() {
    Arbitrary<Double> edges =
        Arbitraries.of(
            0d,
            -0d,
            1d,
            -1d,
            0.1d,
            1e-7d,
            -1e-7d,
            5e-7d,
            0.0000005000000000000001d,
            2.5e-6d,
            1e300d,
            Double.MAX_VALUE,
            -Double.MAX_VALUE,
            Double.MIN_VALUE,
            Double.MIN_NORMAL,
            0x1.0000000000001p53, // 2^53 + 2
            Double.NaN,
            Double.longBitsToDouble(0xfff8000000000000L), // "-nan"
            Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY);
    return Arbitraries.frequencyOf(
        Tuple.of(2, edges),
        Tuple.of(3, Arbitraries.longs().map(Double::longBitsToDouble)),
        Tuple.of(3, Arbitraries.doubles().between(-1e12, 1e12).ofScale(9)));
  }

  // ---- strings and bytes ----

  /**
   * Text without NUL (C measures strings with strlen): mostly ASCII, with control characters and
   * UTF-8 of two, three and four bytes; usually short, sometimes at the 62/63-byte boundary where a
   * length needs a second varint byte, rarely thousands of characters.
   */
  static Arbitrary<String> text() {
    Arbitrary<Integer> codePoints =
        Arbitraries.frequencyOf(
            Tuple.of(20, Arbitraries.integers().between(0x20, 0x7e)),
            Tuple.of(1, Arbitraries.integers().between(0x01, 0x1f)),
            Tuple.of(3, Arbitraries.integers().between(0x80, 0x7ff)),
            Tuple.of(2, Arbitraries.integers().between(0x800, 0xd7ff)),
            Tuple.of(1, Arbitraries.integers().between(0xe000, 0xffff)),
            Tuple.of(2, Arbitraries.integers().between(0x10000, 0x10ffff)));
    Arbitrary<Integer> lengths =
        Arbitraries.frequencyOf(
            Tuple.of(2, Arbitraries.just(0)),
            Tuple.of(20, Arbitraries.integers().between(1, 16)),
            Tuple.of(2, Arbitraries.integers().between(60, 66)),
            Tuple.of(3, Arbitraries.integers().between(17, 300)),
            Tuple.of(1, Arbitraries.integers().between(1000, 5000)));
    return lengths.flatMap(
        n -> codePoints.list().ofSize(n).map(cps -> new String(toArray(cps), 0, cps.size())));
  }

  /** A namespace: at most 255 bytes, sometimes exactly that long. */
  private static Arbitrary<String> nspace() {
    return Arbitraries.frequencyOf(
        Tuple.of(1, Arbitraries.of("n".repeat(Proc.MAX_NSLEN), "é".repeat(127) + "x")),
        Tuple.of(10, text().map(s -> truncateUtf8(s, Proc.MAX_NSLEN))));
  }

  private static Arbitrary<Proc> proc() {
    return Combinators.combine(nspace(), rank()).as(Proc::new);
  }

  /** A key: at most 511 bytes, sometimes exactly that long. */
  private static Arbitrary<String> key() {
    return Arbitraries.frequencyOf(
        Tuple.of(1, Arbitraries.of("k".repeat(Info.MAX_KEYLEN), "pmix.job.size", "")),
        Tuple.of(10, text().map(s -> truncateUtf8(s, Info.MAX_KEYLEN))));
  }

  /** A regex C's packer accepts: the "pmix" (native) or "raw:" prefix, then any text. */
  private static Arbitrary<String> regex() {
    return Combinators.combine(Arbitraries.of("pmix", "pmix[", "raw:"), text())
        .as((prefix, rest) -> prefix + rest);
  }

  private static Arbitrary<byte[]> bytes() {
    Arbitrary<Integer> lengths =
        Arbitraries.frequencyOf(
            Tuple.of(2, Arbitraries.just(0)),
            Tuple.of(10, Arbitraries.integers().between(1, 40)),
            Tuple.of(1, Arbitraries.integers().between(100, 3000)));
    return lengths.flatMap(n -> Arbitraries.bytes().array(byte[].class).ofSize(n));
  }

  private static Arbitrary<Value.Coord> coord() {
    return Combinators.combine(
            Arbitraries.integers().between(0, 255), unsigned(32).list().ofMaxSize(4))
        .as(Value.Coord::new);
  }

  private static int[] toArray(List<Integer> cps) {
    int[] a = new int[cps.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = cps.get(i);
    }
    return a;
  }

  /**
   * The longest prefix of {@code s}, whole code points only, of at most {@code max} UTF-8 bytes.
   */
  static String truncateUtf8(String s, int max) {
    if (s.getBytes(UTF_8).length <= max) {
      return s;
    }
    int bytes = 0;
    int i = 0;
    while (i < s.length()) {
      int cp = s.codePointAt(i);
      int n = new String(Character.toChars(cp)).getBytes(UTF_8).length;
      if (bytes + n > max) {
        break;
      }
      bytes += n;
      i += Character.charCount(cp);
    }
    return s.substring(0, i);
  }
}
