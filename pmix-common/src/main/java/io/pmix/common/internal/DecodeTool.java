package io.pmix.common.internal;

import static java.util.Objects.requireNonNull;

import com.google.common.base.CharMatcher;
import com.google.common.base.Splitter;
import com.google.common.io.BaseEncoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.BufferType;
import io.pmix.common.codec.FloatText;
import io.pmix.common.codec.IntEncoding;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.StringJoiner;
import org.jspecify.annotations.Nullable;

/**
 * The Java side of {@code bin/pmix-decode}: prints a packed PMIx buffer as typed text, one value
 * per line.
 *
 * <p>A fully described buffer is read on its own (its tags say what each pack call holds); a
 * non-described one needs the types of its pack calls, in order. Output, stable enough to diff: a
 * pack call of one item is that item; a pack call of n items other than one is a line {@code
 * PMIX_T[n]} with the items indented below it. Each item is its type name, a space and its value:
 * strings as text (control characters and backslash escaped C-style, {@code NULL} for the NULL
 * string, {@code ""} for the empty one), integers in decimal (unsigned types unsigned), floats as
 * the {@code %f} text C sends; structures as {@code field=value} pairs, and whatever they nest (an
 * INFO's value, a DATA_ARRAY's elements, an APP's infos...) indented two spaces per level below
 * them. A {@code pmix_value_t} where the type says VALUE (a VALUE pack call, an array of VALUE) is
 * a line {@code PMIX_VALUE} with the value it holds indented below.
 *
 * <p>Exit codes: 0 decoded; 1 the bytes are not what was said (a message with the PMIx status and
 * the byte offset goes to standard error, after the values decoded up to there); 2 usage error. Not
 * thread-safe to interleave on the same streams; otherwise stateless.
 */
public final class DecodeTool {
  static final String USAGE =
      """
      usage: pmix-decode [--fully-described | --types T1,T2,...] [--native] HEX-or-FILE
        --fully-described  the buffer is FULLY_DESC: each pack call carries its own type
        --types T1,T2,...  the buffer is NON_DESC and holds one pack call of each type, in
                           order; names as in pmix_common.h (PMIX_STRING) or bare (string)
        --native           integers are native psquash (fixed width), not flex128
        HEX-or-FILE        hex digits (whitespace and 0x prefixes ignored; several arguments
                           are joined), a file holding the raw buffer or its hex, or - for
                           standard input
      exit status: 0 decoded, 1 malformed or left-over bytes, 2 usage error
      """;

  private static final BaseEncoding HEX = BaseEncoding.base16().lowerCase();

  private DecodeTool() {}

  /** Runs the tool and exits with its status; writes UTF-8 whatever the locale says. */
  public static void main(String[] args) {
    PrintStream out =
        new PrintStream(
            new BufferedOutputStream(new FileOutputStream(FileDescriptor.out)),
            false,
            StandardCharsets.UTF_8);
    PrintStream err =
        new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
    int status = run(args, out, err);
    out.flush();
    err.flush();
    System.exit(status);
  }

  /** Runs the tool on these arguments; returns the exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    requireNonNull(out, "out");
    requireNonNull(err, "err");
    boolean described = false;
    boolean nativeInts = false;
    List<DataType> types = null;
    List<String> inputs = new ArrayList<>();
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("--")) {
          inputs.addAll(List.of(args).subList(i + 1, args.length));
          break;
        } else if (a.equals("-h") || a.equals("--help")) {
          out.print(USAGE);
          out.flush();
          return 0;
        } else if (a.equals("--fully-described")) {
          described = true;
        } else if (a.equals("--native")) {
          nativeInts = true;
        } else if (a.equals("--types") || a.startsWith("--types=")) {
          if (types != null) {
            throw new UsageException("--types given twice");
          }
          String list;
          if (a.equals("--types")) {
            if (++i == args.length) {
              throw new UsageException("--types needs a list of types");
            }
            list = args[i];
          } else {
            list = a.substring("--types=".length());
          }
          types = parseTypes(list);
        } else if (a.startsWith("--")) {
          throw new UsageException("unknown option " + a);
        } else {
          inputs.add(a);
        }
      }
      if (described == (types != null)) {
        throw new UsageException(
            described
                ? "--fully-described and --types exclude each other"
                : "say --fully-described, or give the types of the pack calls with --types");
      }
      byte[] bytes = readInput(inputs);
      WireFormat format =
          new WireFormat(
              described ? BufferType.FULLY_DESC : BufferType.NON_DESC,
              nativeInts ? IntEncoding.NATIVE : IntEncoding.FLEX128);
      return decode(bytes, format, types, out, err);
    } catch (UsageException e) {
      err.println("pmix-decode: " + e.getMessage());
      err.print(USAGE);
      err.flush();
      return 2;
    } catch (IOException e) {
      err.println("pmix-decode: " + e);
      err.flush();
      return 2;
    }
  }

  private static int decode(
      byte[] bytes,
      WireFormat format,
      @Nullable List<DataType> types,
      PrintStream out,
      PrintStream err) {
    ByteBuf buf = Unpooled.wrappedBuffer(bytes);
    try {
      PmixReader r = new PmixReader(buf, format);
      int call = 0;
      while (types != null ? call < types.size() : r.hasRemaining()) {
        int start = buf.readerIndex();
        Optional<DataType> t =
            types != null
                ? Optional.of(types.get(call))
                : peekDescribedType(buf, format.intEncoding());
        call++;
        List<Value> items;
        try {
          items =
              types != null ? r.unpack(t.orElseThrow(), Integer.MAX_VALUE) : r.unpackDescribed();
        } catch (PmixException e) {
          out.flush();
          err.printf(
              Locale.ROOT,
              "pmix-decode: %s at byte %d, in pack call %d (%s) starting at byte %d: %s%n",
              e.status().name(),
              buf.readerIndex(),
              call,
              t.map(DataType::pmixName).orElse("type unknown"),
              start,
              detail(e));
          err.flush();
          return 1;
        }
        out.print(formatCall(t.orElseThrow(), items));
      }
      out.flush();
      if (r.hasRemaining()) {
        err.printf(
            Locale.ROOT,
            "pmix-decode: %d bytes left over at byte %d, after %d pack calls: %s%n",
            r.remaining(),
            buf.readerIndex(),
            call,
            abbreviatedHex(buf));
        err.flush();
        return 1;
      }
      return 0;
    } finally {
      buf.release();
    }
  }

  /** The exception's message without the status name it starts with. */
  private static String detail(PmixException e) {
    String m = String.valueOf(e.getMessage());
    String prefix = e.status().name() + ": ";
    return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
  }

  /** The item type of the fully described pack call at the reader index, if its tags are there. */
  private static Optional<DataType> peekDescribedType(ByteBuf buf, IntEncoding ints) {
    ByteBuf b = buf.duplicate();
    if (ints == IntEncoding.NATIVE) {
      if (b.readableBytes() < 8) {
        return Optional.empty();
      }
      return DataType.fromCode(b.getUnsignedShort(b.readerIndex() + 6));
    }
    boolean tagRead = skipVarint(b); // the INT32 tag of the count
    if (tagRead && skipVarint(b)) { // the count
      long code = 0;
      for (int shift = 0; shift < 21 && b.isReadable(); shift += 7) {
        int x = b.readUnsignedByte();
        code |= (long) (x & 0x7f) << shift;
        if ((x & 0x80) == 0) {
          return code <= 0xffff ? DataType.fromCode((int) code) : Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  private static boolean skipVarint(ByteBuf b) {
    for (int i = 0; i < 9 && b.isReadable(); i++) {
      if ((b.readUnsignedByte() & 0x80) == 0 || i == 8) {
        return true;
      }
    }
    return false;
  }

  // ---- formatting ----

  /** The lines of one pack call of {@code type}. */
  public static String formatCall(DataType type, List<Value> items) {
    StringBuilder sb = new StringBuilder();
    if (items.size() == 1) {
      item(sb, 0, type, items.get(0));
    } else {
      line(sb, 0, type.pmixName() + "[" + items.size() + "]");
      for (Value v : items) {
        item(sb, 1, type, v);
      }
    }
    return sb.toString();
  }

  /** The lines of one value, as an item of something declared as {@code declared}. */
  private static void item(StringBuilder sb, int indent, DataType declared, Value v) {
    if (declared == DataType.VALUE) {
      line(sb, indent, DataType.VALUE.pmixName());
      value(sb, indent + 1, v);
    } else {
      value(sb, indent, v);
    }
  }

  private static void value(StringBuilder sb, int indent, Value v) {
    String name = v.type().pmixName();
    if (v instanceof Value.Undef || v instanceof Value.Pointer) {
      line(sb, indent, name);
    } else if (v instanceof Value.Bool b) {
      line(sb, indent, name + " " + b.value());
    } else if (v instanceof Value.Int i) {
      line(sb, indent, name + " " + i.value());
    } else if (v instanceof Value.UInt u) {
      line(sb, indent, name + " " + unsigned(u));
    } else if (v instanceof Value.Str s) {
      line(sb, indent, name + " " + text(s.value()));
    } else if (v instanceof Value.Real32 f) {
      line(sb, indent, name + " " + FloatText.format(f.value()));
    } else if (v instanceof Value.Real64 d) {
      line(sb, indent, name + " " + FloatText.format(d.value()));
    } else if (v instanceof Value.TimeVal t) {
      line(sb, indent, name + " " + timeval(t));
    } else if (v instanceof Value.StatusValue s) {
      int code = s.status().code();
      line(
          sb,
          indent,
          name + " " + code + (s.status().isKnown() ? " (" + s.status().name() + ")" : ""));
    } else if (v instanceof Value.Bytes b) {
      line(sb, indent, name + " " + blob(b.bytes()));
    } else if (v instanceof Value.Buffer b) {
      line(sb, indent, name + " type=" + bufferType(b.bufferType()) + " " + blob(b.bytes()));
    } else if (v instanceof Proc p) {
      line(sb, indent, name + " " + proc(p));
    } else if (v instanceof Info i) {
      line(sb, indent, name + " key=" + text(i.key()) + " flags=" + flags(i.flags()));
      value(sb, indent + 1, i.value());
    } else if (v instanceof Value.PData p) {
      line(sb, indent, name + " " + proc(p.proc()) + " key=" + text(p.key()));
      value(sb, indent + 1, p.value());
    } else if (v instanceof Value.KVal k) {
      line(sb, indent, name + " key=" + text(k.key()));
      value(sb, indent + 1, k.value());
    } else if (v instanceof DataArray a) {
      line(sb, indent, name + " type=" + a.elementType().pmixName() + " size=" + a.size());
      for (Value e : a.items()) {
        item(sb, indent + 1, a.elementType(), e);
      }
    } else if (v instanceof Value.App a) {
      app(sb, indent, a);
    } else if (v instanceof Value.ProcInfo p) {
      line(
          sb,
          indent,
          name
              + " "
              + proc(p.proc())
              + " hostname="
              + text(p.hostname())
              + " executable="
              + text(p.executableName())
              + " pid="
              + p.pid()
              + " state="
              + p.state());
    } else if (v instanceof Value.Query q) {
      line(sb, indent, name + " nkeys=" + q.keys().size() + " nqual=" + q.qualifiers().size());
      for (int i = 0; i < q.keys().size(); i++) {
        line(sb, indent + 1, "key[" + i + "] " + text(q.keys().get(i)));
      }
      for (Info i : q.qualifiers()) {
        value(sb, indent + 1, i);
      }
    } else if (v instanceof Value.Envar e) {
      line(
          sb,
          indent,
          name
              + " envar="
              + text(e.envar())
              + " value="
              + text(e.value())
              + " separator="
              + e.separator());
    } else if (v instanceof Value.Coord c) {
      line(sb, indent, name + " " + coord(c));
    } else if (v instanceof Value.RegAttr r) {
      line(
          sb,
          indent,
          name
              + " name="
              + text(r.name())
              + " string="
              + text(r.string())
              + " type="
              + dataType(r.dataType())
              + " ndesc="
              + r.description().size());
      for (int i = 0; i < r.description().size(); i++) {
        line(sb, indent + 1, "description[" + i + "] " + text(r.description().get(i)));
      }
    } else if (v instanceof Value.Geometry g) {
      line(
          sb,
          indent,
          name
              + " fabric="
              + Long.toUnsignedString(g.fabric())
              + " uuid="
              + text(g.uuid())
              + " osname="
              + text(g.osname())
              + " ncoords="
              + g.coordinates().size());
      for (Value.Coord c : g.coordinates()) {
        value(sb, indent + 1, c);
      }
    } else if (v instanceof Value.DeviceDist d) {
      line(
          sb,
          indent,
          name
              + " uuid="
              + text(d.uuid())
              + " osname="
              + text(d.osname())
              + " type="
              + Long.toUnsignedString(d.deviceType())
              + " mindist="
              + d.mindist()
              + " maxdist="
              + d.maxdist());
    } else if (v instanceof Value.Endpoint e) {
      line(
          sb,
          indent,
          name
              + " uuid="
              + text(e.uuid())
              + " osname="
              + text(e.osname())
              + " "
              + blob(e.endpoint()));
    } else if (v instanceof Value.Cpuset c) {
      line(sb, indent, name + " " + text(c.bitmap()));
    } else if (v instanceof Value.Topo t) {
      if (t.xml() == null) {
        line(sb, indent, name + " NULL");
      } else {
        line(
            sb,
            indent,
            name
                + " discovery="
                + HEX.encode(t.discovery())
                + " cpubind="
                + HEX.encode(t.cpubind())
                + " membind="
                + HEX.encode(t.membind()));
        line(sb, indent + 1, "xml " + text(t.xml()));
      }
    } else if (v instanceof Value.ProcStats s) {
      line(
          sb,
          indent,
          name
              + " node="
              + text(s.node())
              + " "
              + proc(s.proc())
              + " pid="
              + s.pid()
              + " cmd="
              + text(s.cmd())
              + " state="
              + s.state()
              + " time="
              + timeval(s.time())
              + " priority="
              + s.priority()
              + " threads="
              + s.numThreads()
              + " pss="
              + FloatText.format(s.pss())
              + " vsize="
              + FloatText.format(s.vsize())
              + " rss="
              + FloatText.format(s.rss())
              + " processor="
              + s.processor()
              + " sample_time="
              + timeval(s.sampleTime()));
    } else if (v instanceof Value.DiskStats s) {
      line(sb, indent, name + " disk=" + text(s.disk()) + " counters=" + counters(s.counters()));
    } else if (v instanceof Value.NetStats s) {
      line(
          sb,
          indent,
          name + " interface=" + text(s.netInterface()) + " counters=" + counters(s.counters()));
    } else if (v instanceof Value.NodeStats s) {
      StringJoiner loads = new StringJoiner(",");
      for (float f : s.loads()) {
        loads.add(FloatText.format(f));
      }
      line(
          sb,
          indent,
          name
              + " node="
              + text(s.node())
              + " loads="
              + loads
              + " sample_time="
              + timeval(s.sampleTime())
              + " ndisk="
              + s.diskStats().size()
              + " nnet="
              + s.netStats().size());
      for (Value.DiskStats d : s.diskStats()) {
        value(sb, indent + 1, d);
      }
      for (Value.NetStats n : s.netStats()) {
        value(sb, indent + 1, n);
      }
    } else {
      // Every record of the sealed interface is handled above; a new one still prints.
      line(sb, indent, name + " " + text(v.toString()));
    }
  }

  private static void app(StringBuilder sb, int indent, Value.App a) {
    line(
        sb,
        indent,
        a.type().pmixName()
            + " cmd="
            + text(a.cmd())
            + " cwd="
            + text(a.cwd())
            + " maxprocs="
            + a.maxprocs()
            + " argc="
            + a.argv().size()
            + " envc="
            + a.env().size()
            + " ninfo="
            + a.info().size());
    for (int i = 0; i < a.argv().size(); i++) {
      line(sb, indent + 1, "argv[" + i + "] " + text(a.argv().get(i)));
    }
    for (int i = 0; i < a.env().size(); i++) {
      line(sb, indent + 1, "env[" + i + "] " + text(a.env().get(i)));
    }
    for (Info i : a.info()) {
      value(sb, indent + 1, i);
    }
  }

  private static void line(StringBuilder sb, int indent, String text) {
    for (int i = 0; i < indent; i++) {
      sb.append("  ");
    }
    sb.append(text).append('\n');
  }

  private static String unsigned(Value.UInt u) {
    if (u.type() == DataType.DATA_TYPE) {
      return dataType((int) u.value());
    }
    if (u.type() == DataType.PROC_RANK) {
      return rank((int) u.value());
    }
    return Long.toUnsignedString(u.value());
  }

  private static String dataType(int code) {
    return code + DataType.fromCode(code).map(t -> " (" + t.pmixName() + ")").orElse("");
  }

  private static String rank(int rank) {
    String s = Integer.toUnsignedString(rank);
    String name = Proc.rankToString(rank);
    return name.equals(s) ? s : s + " (" + name + ")";
  }

  private static String proc(Proc p) {
    return "nspace=" + text(p.nspace()) + " rank=" + rank(p.rank());
  }

  private static String timeval(Value.TimeVal t) {
    return "sec=" + t.seconds() + " usec=" + t.microseconds();
  }

  private static String coord(Value.Coord c) {
    String view;
    switch (c.view()) {
      case 0:
        view = "UNDEF";
        break;
      case 1:
        view = "LOGICAL";
        break;
      case 2:
        view = "PHYSICAL";
        break;
      default:
        view = Integer.toString(c.view());
    }
    StringJoiner j = new StringJoiner(",");
    for (long x : c.coords()) {
      j.add(Long.toString(x));
    }
    return "view=" + view + " dims=" + c.coords().size() + " coords=" + j;
  }

  private static String counters(List<Long> counters) {
    StringJoiner j = new StringJoiner(",");
    for (long c : counters) {
      j.add(Long.toUnsignedString(c));
    }
    return j.toString();
  }

  private static String flags(int flags) {
    StringBuilder sb = new StringBuilder("0x").append(Integer.toHexString(flags));
    if (flags != 0) {
      StringJoiner names = new StringJoiner("|", " (", ")");
      String[] known = {"REQD", "ARRAY_END", "REQD_PROCESSED", "QUALIFIER"};
      for (int bit = 0; bit < known.length; bit++) {
        if ((flags & (1 << bit)) != 0) {
          names.add(known[bit]);
        }
      }
      if ((flags & ~0xf) != 0) {
        names.add("0x" + Integer.toHexString(flags & ~0xf));
      }
      sb.append(names);
    }
    return sb.toString();
  }

  private static String bufferType(int code) {
    switch (code) {
      case 1:
        return "1 (NON_DESC)";
      case 2:
        return "2 (FULLY_DESC)";
      default:
        return Integer.toString(code);
    }
  }

  private static String blob(byte[] b) {
    return "size=" + b.length + (b.length > 0 ? " " + HEX.encode(b) : "");
  }

  /** A string as one line of text: NULL, "" or the text with control characters escaped. */
  static String text(@Nullable String s) {
    if (s == null) {
      return "NULL";
    }
    if (s.isEmpty()) {
      return "\"\"";
    }
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\':
          sb.append("\\\\");
          break;
        case '\n':
          sb.append("\\n");
          break;
        case '\r':
          sb.append("\\r");
          break;
        case '\t':
          sb.append("\\t");
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            sb.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    return sb.toString();
  }

  // ---- input ----

  private static List<DataType> parseTypes(String list) throws UsageException {
    List<DataType> types = new ArrayList<>();
    for (String name : Splitter.on(CharMatcher.anyOf(", \t\n")).omitEmptyStrings().split(list)) {
      try {
        if (name.chars().allMatch(Character::isDigit)) {
          types.add(
              DataType.fromCode(Integer.parseInt(name))
                  .orElseThrow(() -> new IllegalArgumentException(name)));
        } else {
          types.add(DataType.fromName(name));
        }
      } catch (IllegalArgumentException e) {
        throw new UsageException("unknown type " + name);
      }
    }
    if (types.isEmpty()) {
      throw new UsageException("--types needs at least one type");
    }
    return types;
  }

  private static byte[] readInput(List<String> inputs) throws UsageException, IOException {
    if (inputs.isEmpty()) {
      throw new UsageException("no input: give hex digits, a file, or - for standard input");
    }
    if (inputs.size() == 1) {
      String a = inputs.get(0);
      if (a.equals("-")) {
        return hexOrRaw(System.in.readAllBytes());
      }
      Optional<Path> p = asFile(a);
      if (p.isPresent()) {
        return hexOrRaw(Files.readAllBytes(p.get()));
      }
    }
    String joined = String.join(" ", inputs);
    byte[] b = parseHex(joined);
    if (b == null) {
      throw new UsageException(
          "neither a file nor hex digits: "
              + (joined.length() > 40 ? joined.substring(0, 40) + "..." : joined));
    }
    return b;
  }

  private static Optional<Path> asFile(String a) {
    try {
      Path p = Path.of(a);
      return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    } catch (InvalidPathException e) {
      return Optional.empty();
    }
  }

  /** A file's bytes: decoded if they are hex text, else as they are. */
  private static byte[] hexOrRaw(byte[] content) {
    String s = new String(content, StandardCharsets.ISO_8859_1);
    if (!s.isBlank()) {
      byte[] b = parseHex(s);
      if (b != null) {
        return b;
      }
    }
    return content;
  }

  /**
   * Hex digits, with ASCII whitespace and a 0x at the start of each word ignored; null if there is
   * anything else, or an odd number of digits.
   */
  static byte @Nullable [] parseHex(String s) {
    StringBuilder digits = new StringBuilder(s.length());
    boolean wordStart = true;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        wordStart = true;
        continue;
      }
      if (wordStart
          && c == '0'
          && i + 1 < s.length()
          && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X')) {
        i++;
        wordStart = false;
        continue;
      }
      wordStart = false;
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
        digits.append(c);
      } else if (c >= 'A' && c <= 'F') {
        digits.append((char) (c - 'A' + 'a'));
      } else {
        return null;
      }
    }
    return digits.length() % 2 == 0 ? HEX.decode(digits) : null;
  }

  private static String abbreviatedHex(ByteBuf buf) {
    int n = Math.min(buf.readableBytes(), 32);
    byte[] b = new byte[n];
    buf.getBytes(buf.readerIndex(), b);
    return HEX.encode(b) + (buf.readableBytes() > n ? "..." : "");
  }

  /** A mistake in the command line. */
  private static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
