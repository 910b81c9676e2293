package io.pmix.common.codec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.io.BaseEncoding;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The golden vectors of the test resource {@code codec-vectors.tsv} (next to this class), produced
 * by OpenPMIx 4.2.2's own PMIx_Data_pack (docs/codec.md §11), and the translation of their JSON
 * recipes into values.
 */
public final class GoldenVectors {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One row. */
  public record Row(
      String name,
      String pmixType,
      String hex,
      String mode,
      List<PackCall> calls,
      String cRoundtrip) {
    /** The buffer format of this row's mode. */
    public WireFormat format() {
      switch (mode) {
        case "NON_DESC":
          return WireFormat.DEFAULT;
        case "FULLY_DESC":
          return WireFormat.FULLY_DESCRIBED;
        case "NON_DESC+psquash=native":
          return new WireFormat(BufferType.NON_DESC, IntEncoding.NATIVE);
        default:
          throw new IllegalArgumentException(mode);
      }
    }

    /** The packed bytes. */
    public byte[] bytes() {
      return BaseEncoding.base16().lowerCase().decode(hex);
    }

    @Override
    public String toString() {
      return name + " [" + mode + "]";
    }
  }

  /** One pack call of a row: a type and its items. */
  public record PackCall(DataType type, List<Value> items) {}

  private GoldenVectors() {}

  /** Every row of the file; a missing file fails the calling test (it never skips). */
  public static List<Row> load() {
    InputStream in = GoldenVectors.class.getResourceAsStream("codec-vectors.tsv");
    if (in == null) {
      throw new AssertionError("test resource missing: io/pmix/common/codec/codec-vectors.tsv");
    }
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      List<Row> rows = new ArrayList<>();
      boolean header = true;
      for (String line; (line = r.readLine()) != null; ) {
        if (line.startsWith("#") || line.isBlank()) {
          continue;
        }
        if (header) {
          header = false;
          continue;
        }
        String[] f = line.split("\t", -1);
        JsonNode construct = JSON.readTree(f[5]);
        rows.add(new Row(f[0], f[1], f[3], f[4], calls(construct), f[6]));
      }
      return rows;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<PackCall> calls(JsonNode c) {
    List<PackCall> calls = new ArrayList<>();
    if (c.has("sequence")) {
      for (JsonNode s : c.get("sequence")) {
        calls.add(call(s));
      }
    } else {
      calls.add(call(c));
    }
    return calls;
  }

  private static PackCall call(JsonNode c) {
    DataType t = DataType.fromName(c.get("type").asText());
    List<Value> items = new ArrayList<>();
    for (JsonNode i : c.get("items")) {
      items.add(item(t, i));
    }
    return new PackCall(t, items);
  }

  /** The value a recipe item of type {@code t} describes. */
  static Value item(DataType t, JsonNode j) {
    if (t.isSignedInteger()) {
      return Value.signed(t, t.bits() == 64 ? Long.parseLong(j.asText()) : j.asLong());
    }
    if (t.isUnsignedInteger()) {
      return Value.unsigned(t, t.bits() == 64 ? u64(j) : j.asLong());
    }
    switch (t) {
      case BOOL:
        return Value.of(j.asBoolean());
      case FLOAT:
        return new Value.Real32(parseFloat(j.asText()));
      case DOUBLE:
        return new Value.Real64(parseDouble(j.asText()));
      case STRING:
      case PROC_NSPACE:
      case REGEX:
        return new Value.Str(t, j.isNull() ? null : j.asText());
      case POINTER:
        return Value.Pointer.INSTANCE;
      case BYTE_OBJECT:
      case COMPRESSED_STRING:
      case COMPRESSED_BYTE_OBJECT:
      case DATA_BUFFER:
        return new Value.Bytes(t, hex(j));
      case TIMEVAL:
        return timeval(j);
      case STATUS:
        return Value.status(Status.of(j.asInt()));
      case PROC:
        return proc(j);
      case VALUE:
        return value(j);
      case INFO:
        return info(j);
      case PDATA:
        return new Value.PData(proc(j.get("proc")), j.get("key").asText(), value(j.get("value")));
      case KVAL:
        return new Value.KVal(text(j.get("key")), value(j.get("value")));
      case BUFFER:
        return new Value.Buffer(j.get("buftype").asInt(), hex(j.get("bytes")));
      case APP:
        return new Value.App(
            text(j.get("cmd")),
            strings(j.get("argv")),
            strings(j.get("env")),
            text(j.get("cwd")),
            j.get("maxprocs").asInt(),
            infos(j.get("info")));
      case PROC_INFO:
        return new Value.ProcInfo(
            proc(j.get("proc")),
            text(j.get("hostname")),
            text(j.get("executable_name")),
            j.get("pid").asInt(),
            j.get("exit_code").asInt(),
            j.get("state").asInt());
      case DATA_ARRAY:
        {
          DataType et = DataType.fromName(j.get("type").asText());
          if (et == DataType.UNDEF) {
            return DataArray.undefined(j.get("size").asLong());
          }
          List<Value> items = new ArrayList<>();
          for (JsonNode e : j.get("array")) {
            items.add(item(et, e));
          }
          return DataArray.of(et, items);
        }
      case QUERY:
        return new Value.Query(strings(j.get("keys")), infos(j.get("qualifiers")));
      case ENVAR:
        return new Value.Envar(
            text(j.get("envar")), text(j.get("value")), j.get("separator").asInt());
      case COORD:
        return coord(j);
      case REGATTR:
        return new Value.RegAttr(
            text(j.get("name")),
            text(j.get("string")),
            DataType.fromName(j.get("type").asText()).code(),
            strings(j.get("description")));
      case PROC_CPUSET:
        return new Value.Cpuset(text(j.get("bitmap")));
      case GEOMETRY:
        {
          List<Value.Coord> cs = new ArrayList<>();
          for (JsonNode c : j.get("coordinates")) {
            cs.add(coord(c));
          }
          return new Value.Geometry(
              u64(j.get("fabric")), text(j.get("uuid")), text(j.get("osname")), cs);
        }
      case DEVICE_DIST:
        return new Value.DeviceDist(
            text(j.get("uuid")),
            text(j.get("osname")),
            u64(j.get("type")),
            j.get("mindist").asInt(),
            j.get("maxdist").asInt());
      case ENDPOINT:
        return new Value.Endpoint(text(j.get("uuid")), text(j.get("osname")), hex(j.get("endpt")));
      case TOPO:
        if (j.isNull() || j.get("xml") == null || j.get("xml").isNull()) {
          return Value.Topo.NONE;
        }
        return new Value.Topo(
            j.get("xml").asText(), hex(j.get("discovery")), hex(j.get("cpubind")),
            hex(j.get("membind")));
      case PROC_STATS:
        return new Value.ProcStats(
            text(j.get("node")),
            proc(j.get("proc")),
            j.get("pid").asInt(),
            text(j.get("cmd")),
            j.get("state").asInt(),
            timeval(j.get("time")),
            j.get("priority").asInt(),
            j.get("num_threads").asInt(),
            parseFloat(j.get("pss").asText()),
            parseFloat(j.get("vsize").asText()),
            parseFloat(j.get("rss").asText()),
            j.get("processor").asInt(),
            timeval(j.get("sample_time")));
      case DISK_STATS:
        return new Value.DiskStats(
            text(j.get("disk")),
            counters(
                j,
                "num_reads_completed",
                "num_reads_merged",
                "num_sectors_read",
                "milliseconds_reading",
                "num_writes_completed",
                "num_writes_merged",
                "num_sectors_written",
                "milliseconds_writing",
                "num_ios_in_progress",
                "milliseconds_io",
                "weighted_milliseconds_io"));
      case NET_STATS:
        return new Value.NetStats(
            text(j.get("net_interface")),
            counters(
                j,
                "num_bytes_recvd",
                "num_packets_recvd",
                "num_recv_errs",
                "num_bytes_sent",
                "num_packets_sent",
                "num_send_errs"));
      case NODE_STATS:
        {
          List<Float> loads = new ArrayList<>();
          for (String f :
              List.of(
                  "la", "la5", "la15", "total_mem", "free_mem", "buffers", "cached",
                  "swap_cached", "swap_total", "swap_free", "mapped")) {
            loads.add(parseFloat(j.get(f).asText()));
          }
          List<Value.DiskStats> ds = new ArrayList<>();
          for (JsonNode d : j.get("diskstats")) {
            ds.add((Value.DiskStats) item(DataType.DISK_STATS, d));
          }
          List<Value.NetStats> ns = new ArrayList<>();
          for (JsonNode d : j.get("netstats")) {
            ns.add((Value.NetStats) item(DataType.NET_STATS, d));
          }
          return new Value.NodeStats(
              text(j.get("node")), loads, timeval(j.get("sample_time")), ds, ns);
        }
      default:
        throw new IllegalArgumentException("no recipe for " + t);
    }
  }

  private static List<Long> counters(JsonNode j, String... names) {
    List<Long> r = new ArrayList<>();
    for (String n : names) {
      r.add(u64(j.get(n)));
    }
    return r;
  }

  private static Value value(JsonNode j) {
    DataType t = DataType.fromName(j.get("type").asText());
    if (t == DataType.UNDEF) {
      return Value.Undef.INSTANCE;
    }
    return item(t, j.get("data"));
  }

  private static Info info(JsonNode j) {
    return new Info(j.get("key").asText(), j.get("flags").asInt(), value(j.get("value")));
  }

  private static List<Info> infos(JsonNode j) {
    List<Info> r = new ArrayList<>();
    for (JsonNode i : j) {
      r.add(info(i));
    }
    return r;
  }

  private static Proc proc(JsonNode j) {
    return new Proc(j.get("nspace").asText(), (int) j.get("rank").asLong());
  }

  private static Value.Coord coord(JsonNode j) {
    List<Long> c = new ArrayList<>();
    for (JsonNode x : j.get("coord")) {
      c.add(x.asLong());
    }
    return new Value.Coord(j.get("view").asInt(), c);
  }

  private static Value.TimeVal timeval(JsonNode j) {
    return new Value.TimeVal(
        Long.parseLong(j.get("sec").asText()), Long.parseLong(j.get("usec").asText()));
  }

  private static String text(JsonNode j) {
    return j == null || j.isNull() ? null : j.asText();
  }

  private static List<String> strings(JsonNode j) {
    List<String> r = new ArrayList<>();
    for (JsonNode s : j) {
      r.add(s.asText());
    }
    return r;
  }

  private static byte[] hex(JsonNode j) {
    return BaseEncoding.base16().lowerCase().decode(j.asText());
  }

  private static long u64(JsonNode j) {
    return new BigInteger(j.asText()).longValue();
  }

  private static float parseFloat(String s) {
    switch (s) {
      case "NaN":
        return Float.NaN;
      case "-NaN":
        return Float.intBitsToFloat(0xffc00000);
      case "Infinity":
        return Float.POSITIVE_INFINITY;
      case "-Infinity":
        return Float.NEGATIVE_INFINITY;
      default:
        return Float.parseFloat(s);
    }
  }

  private static double parseDouble(String s) {
    switch (s) {
      case "NaN":
        return Double.NaN;
      case "-NaN":
        return Double.longBitsToDouble(0xfff8000000000000L);
      case "Infinity":
        return Double.POSITIVE_INFINITY;
      case "-Infinity":
        return Double.NEGATIVE_INFINITY;
      default:
        return Double.parseDouble(s);
    }
  }
}
