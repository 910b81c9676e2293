package io.pmix.common.codec;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Packs values into a buffer exactly as OpenPMIx 4.2.2's {@code PMIx_Data_pack} does (bfrops
 * module v41). Each {@code pack} call appends one "pack call": the item count, then the items; a
 * fully described buffer adds a type tag before each.
 *
 * <p>The writer appends to a {@link WireBuffer} (or Netty {@link ByteBuf}) it borrows: the caller
 * owns and releases it. Not
 * thread-safe; use one writer per buffer being built.
 */
public final class PmixWriter {
  private final WireBuffer out;
  private final WireFormat format;

  /** A writer appending to {@code out} in {@code format}. */
  public PmixWriter(WireBuffer out, WireFormat format) {
    this.out = requireNonNull(out, "out");
    this.format = requireNonNull(format, "format");
  }

  /** A writer appending to a Netty buffer in {@code format}. */
  public PmixWriter(ByteBuf out, WireFormat format) {
    this(WireBuffer.of(out), format);
  }

  /** A writer appending to a Netty buffer in the 4.2.2 default format. */
  public PmixWriter(ByteBuf out) {
    this(WireBuffer.of(out), WireFormat.DEFAULT);
  }

  /**
   * The Netty buffer written to.
   *
   * @throws IllegalStateException if this writer appends to an array-backed {@link WireBuffer}
   */
  public ByteBuf buffer() {
    ByteBuf b = out.byteBuf();
    if (b == null) {
      throw new IllegalStateException("this writer appends to an array, not a ByteBuf");
    }
    return b;
  }

  /** The bytes written to. */
  public WireBuffer wireBuffer() {
    return out;
  }

  /** The format written. */
  public WireFormat format() {
    return format;
  }

  /**
   * One pack call of {@code items}, all of type {@code type}. With type {@link DataType#VALUE}
   * the items may be of any type and each is written with its own tag.
   *
   * @throws IllegalArgumentException if an item has another type, or the type cannot be packed
   */
  @CanIgnoreReturnValue
  public PmixWriter pack(DataType type, List<? extends Value> items) {
    requireNonNull(type, "type");
    checkPackable(type);
    for (Value v : items) {
      if (type != DataType.VALUE && v.type() != type) {
        throw new IllegalArgumentException("item of type " + v.type() + " in a " + type + " call");
      }
    }
    writeCallHeader(type, items.size());
    writeItems(type, items);
    return this;
  }

  /**
   * One pack call of one BYTE_OBJECT holding {@code bytes}: the same bytes as {@code
   * pack(Value.of(bytes))}, written from the array itself. A {@link Value} copies a byte array in
   * and out; for a data blob (a GETNB answer, a node's fence contribution) those copies were most
   * of the work (docs/architecture.md, "Data blobs without copies").
   */
  @CanIgnoreReturnValue
  public PmixWriter packByteObject(byte[] bytes) {
    requireNonNull(bytes, "bytes");
    writeCallHeader(DataType.BYTE_OBJECT, 1);
    writeBlob(bytes);
    return this;
  }

  /** What begins every pack call: the count (with its tag) and, fully described, the type's tag. */
  private void writeCallHeader(DataType type, int count) {
    if (format.bufferType() == BufferType.FULLY_DESC) {
      writeTag(DataType.INT32.code());
    }
    writeSigned(count, 32);
    if (format.bufferType() == BufferType.FULLY_DESC) {
      writeTag(type.code());
    }
  }

  /**
   * Appends bytes that a writer in this format produced (pack calls written elsewhere, such as
   * job data after a namespace), unchanged.
   */
  @CanIgnoreReturnValue
  public PmixWriter packRaw(byte[] packed) {
    out.writeBytes(packed);
    return this;
  }

  /** One pack call of a single item of its own type. */
  @CanIgnoreReturnValue
  public PmixWriter pack(Value item) {
    return pack(item.type(), List.of(item));
  }

  /** One pack call of a single item written as a {@code pmix_value_t} (type tag, then payload). */
  @CanIgnoreReturnValue
  public PmixWriter packAsValue(Value item) {
    return pack(DataType.VALUE, List.of(item));
  }

  // The one-item calls below write their bytes directly, not through pack(Value): every message
  // is made of them, and a fresh JVM runs them interpreted, where a Value, a list and the generic
  // item loop per field cost more than the bytes (docs/architecture.md, "One-item pack calls").
  // TypedCallsTest holds each to what pack(Value) writes.

  /** One pack call of one STRING ({@code null} is the NULL string). */
  @CanIgnoreReturnValue
  public PmixWriter packString(String s) {
    writeCallHeader(DataType.STRING, 1);
    writeStr(s);
    return this;
  }

  /** One pack call of one INT32. */
  @CanIgnoreReturnValue
  public PmixWriter packInt32(int v) {
    writeCallHeader(DataType.INT32, 1);
    writeSigned(v, 32);
    return this;
  }

  /** One pack call of one UINT32 (the int is read unsigned). */
  @CanIgnoreReturnValue
  public PmixWriter packUInt32(int v) {
    writeCallHeader(DataType.UINT32, 1);
    writeUnsigned(Integer.toUnsignedLong(v), 32);
    return this;
  }

  /** One pack call of one SIZE (the long is read unsigned). */
  @CanIgnoreReturnValue
  public PmixWriter packSize(long v) {
    writeCallHeader(DataType.SIZE, 1);
    writeSizeField(v); // a run of SIZE: natively its tag first, as writeItems writes it
    return this;
  }

  /** One pack call of one STATUS. */
  @CanIgnoreReturnValue
  public PmixWriter packStatus(Status s) {
    requireNonNull(s, "status");
    writeCallHeader(DataType.STATUS, 1);
    writeSigned(s.code(), 32);
    return this;
  }

  /** One pack call of one PROC. */
  @CanIgnoreReturnValue
  public PmixWriter packProc(Proc p) {
    requireNonNull(p, "proc");
    writeCallHeader(DataType.PROC, 1);
    writeProc(p);
    return this;
  }

  /** One pack call of one PROC_RANK. */
  @CanIgnoreReturnValue
  public PmixWriter packRank(int rank) {
    writeCallHeader(DataType.PROC_RANK, 1);
    writeUnsigned(Integer.toUnsignedLong(rank), 32);
    return this;
  }

  /** One pack call of one BOOL. */
  @CanIgnoreReturnValue
  public PmixWriter packBool(boolean b) {
    writeCallHeader(DataType.BOOL, 1);
    out.writeByte(b ? 1 : 0);
    return this;
  }

  /** One pack call of all these infos (writes nothing but the count when empty). */
  @CanIgnoreReturnValue
  public PmixWriter packInfos(List<Info> infos) {
    return pack(DataType.INFO, infos);
  }

  /** One pack call of one unsigned 8-bit enum value such as COMMAND, SCOPE or DATA_RANGE. */
  @CanIgnoreReturnValue
  public PmixWriter packByteEnum(DataType type, int v) {
    if (!type.isUnsignedInteger() || type.bits() != 8 || (v & ~0xff) != 0) {
      return pack(Value.unsigned(type, v)); // which refuses it, as it always did
    }
    writeCallHeader(type, 1);
    out.writeByte(v);
    return this;
  }

  // ---------------------------------------------------------------------------------------------

  private static void checkPackable(DataType type) {
    if (!type.isRegistered()) {
      throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, type + " cannot be packed");
    }
  }

  /**
   * items(T, n): the items of one pack call, with the run tags PID (and native INT/UINT/SIZE) take.
   * C writes that run prefix (and POINTER's sentinel) even when n is 0, so an empty pack call of
   * those types is not just its count (observed: PID gives {@code 00 0e}, POINTER {@code 00 01}).
   * Data arrays never get here empty: C skips the elements of an empty array altogether.
   */
  private void writeItems(DataType type, List<? extends Value> items) {
    writeRunPrefix(type);
    if (type == DataType.POINTER) {
      return; // a run of pointers is its sentinel byte alone
    }
    for (Value v : items) {
      writeRunItem(type, v);
    }
  }

  /** What C writes once before a run of PID, POINTER and, natively, INT/UINT/SIZE. */
  private void writeRunPrefix(DataType type) {
    switch (type) {
      case PID:
        writeTag(DataType.UINT32.code());
        break;
      case POINTER:
        out.writeByte(1);
        break;
      case INT:
      case UINT:
        if (format.intEncoding() == IntEncoding.NATIVE) {
          writeTag(DataType.INT32.code());
        }
        break;
      case SIZE:
        if (format.intEncoding() == IntEncoding.NATIVE) {
          writeTag(DataType.UINT64.code());
        }
        break;
      default:
        break;
    }
  }

  /** One item of a run whose prefix {@link #writeRunPrefix} wrote (none for POINTER). */
  private void writeRunItem(DataType type, Value v) {
    switch (type) {
      case PID:
        writeUnsigned(Integer.toUnsignedLong((int) ((Value.Int) v).value()), 32);
        break;
      case INT:
      case UINT:
        {
          long x = v instanceof Value.Int i ? i.value() : ((Value.UInt) v).value();
          // UINT travels as the int32 it reinterprets (4294967295 -> -1 -> zigzag 01), like C.
          long asInt32 = (int) x;
          writeSigned(asInt32, 32);
          break;
        }
      case SIZE:
        writeUnsigned(((Value.UInt) v).value(), 64);
        break;
      default:
        writeItem(type, v);
    }
  }

  /**
   * An integer of {@link DataType#bits()} bits: one byte when 8, else fixed-width or a varint.
   * TIME ({@code time_t}) is signed but C packs it as an unsigned 64-bit value.
   */
  private void writeInteger(DataType type, Value v) {
    int bits = type.bits();
    if (type.isSignedInteger()) {
      long x = ((Value.Int) v).value();
      if (type == DataType.TIME) {
        writeUnsigned(x, 64);
      } else if (bits == 8) {
        out.writeByte((int) x);
      } else {
        writeSigned(x, bits);
      }
      return;
    }
    long x = ((Value.UInt) v).value();
    if (bits == 8) {
      out.writeByte((int) x);
    } else {
      writeUnsigned(x, bits);
    }
  }

  /** A single item of a type without run tags. */
  private void writeItem(DataType type, Value v) {
    if (type.kind() != DataType.Kind.OTHER) {
      writeInteger(type, v);
      return;
    }
    switch (type) {
      case BOOL:
        out.writeByte(((Value.Bool) v).value() ? 1 : 0);
        break;
      case STRING:
      case PROC_NSPACE:
        writeStr(((Value.Str) v).value());
        break;
      case REGEX:
        writeRegex(((Value.Str) v).value());
        break;
      case FLOAT:
        writeStr(FloatText.format(((Value.Real32) v).value()));
        break;
      case DOUBLE:
        writeStr(FloatText.format(((Value.Real64) v).value()));
        break;
      case TIMEVAL:
        writeTimeVal((Value.TimeVal) v);
        break;
      case STATUS:
        writeSigned(((Value.StatusValue) v).status().code(), 32);
        break;
      case VALUE:
        writeValue(v);
        break;
      case PROC:
        writeProc((Proc) v);
        break;
      case APP:
        writeApp((Value.App) v);
        break;
      case INFO:
        writeInfo((Info) v);
        break;
      case PDATA:
        {
          Value.PData p = (Value.PData) v;
          writeProc(p.proc());
          writeStr(p.key());
          writeValue(p.value());
          break;
        }
      case BUFFER:
        {
          Value.Buffer b = (Value.Buffer) v;
          out.writeByte(b.bufferType());
          writeBlob(b.bytes());
          break;
        }
      case BYTE_OBJECT:
      case COMPRESSED_STRING:
      case COMPRESSED_BYTE_OBJECT:
      case DATA_BUFFER:
        writeBlob(((Value.Bytes) v).bytes());
        break;
      case KVAL:
        {
          Value.KVal k = (Value.KVal) v;
          writeStr(k.key());
          writeValue(k.value());
          break;
        }
      case PROC_INFO:
        {
          Value.ProcInfo p = (Value.ProcInfo) v;
          writeProc(p.proc());
          writeStr(p.hostname());
          writeStr(p.executableName());
          writeItems(DataType.PID, List.of(Value.pid(p.pid())));
          out.writeByte(p.state());
          break;
        }
      case DATA_ARRAY:
        writeArray((DataArray) v);
        break;
      case QUERY:
        {
          Value.Query q = (Value.Query) v;
          writeSigned(q.keys().size(), 32);
          for (String k : q.keys()) {
            writeStr(k);
          }
          writeSizeField(q.qualifiers().size());
          for (Info i : q.qualifiers()) {
            writeInfo(i);
          }
          break;
        }
      case ENVAR:
        {
          Value.Envar e = (Value.Envar) v;
          writeStr(e.envar());
          writeStr(e.value());
          out.writeByte(e.separator());
          break;
        }
      case COORD:
        writeCoord((Value.Coord) v);
        break;
      case REGATTR:
        {
          Value.RegAttr r = (Value.RegAttr) v;
          writeStr(r.name());
          writeStr(r.string());
          writeUnsigned(r.dataType(), 16);
          writeSigned(r.description().size(), 32);
          for (String d : r.description()) {
            writeStr(d);
          }
          break;
        }
      case PROC_CPUSET:
        writeStr(((Value.Cpuset) v).bitmap());
        break;
      case GEOMETRY:
        {
          Value.Geometry g = (Value.Geometry) v;
          writeSizeField(g.fabric());
          writeStr(g.uuid());
          writeStr(g.osname());
          writeSizeField(g.coordinates().size());
          for (Value.Coord c : g.coordinates()) {
            writeCoord(c);
          }
          break;
        }
      case DEVICE_DIST:
        {
          Value.DeviceDist d = (Value.DeviceDist) v;
          writeStr(d.uuid());
          writeStr(d.osname());
          writeUnsigned(d.deviceType(), 64);
          writeUnsigned(d.mindist(), 16);
          writeUnsigned(d.maxdist(), 16);
          break;
        }
      case ENDPOINT:
        {
          Value.Endpoint e = (Value.Endpoint) v;
          writeStr(e.uuid());
          writeStr(e.osname());
          writeBlob(e.endpoint());
          break;
        }
      case TOPO:
        {
          Value.Topo t = (Value.Topo) v;
          writeStr(t.xml());
          if (t.xml() != null) {
            // No topology, no support structs: C stops after the NULL string.
            out.writeBytes(t.discovery());
            out.writeBytes(t.cpubind());
            out.writeBytes(t.membind());
          }
          break;
        }
      case PROC_STATS:
        writeProcStats((Value.ProcStats) v);
        break;
      case DISK_STATS:
        {
          Value.DiskStats d = (Value.DiskStats) v;
          writeStr(d.disk());
          for (long c : d.counters()) {
            writeUnsigned(c, 64);
          }
          break;
        }
      case NET_STATS:
        {
          Value.NetStats n = (Value.NetStats) v;
          writeStr(n.netInterface());
          for (long c : n.counters()) {
            writeUnsigned(c, 64);
          }
          break;
        }
      case NODE_STATS:
        writeNodeStats((Value.NodeStats) v);
        break;
      default:
        // UNDEF items, INT/UINT/SIZE/PID/POINTER (handled as runs), MODEX, INFO_ARRAY.
        throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, "cannot pack an item of " + type);
    }
  }

  /** A {@code pmix_value_t}: the type tag, then one item of that type. */
  private void writeValue(Value v) {
    DataType t = v.type();
    checkPackable(t);
    writeTag(t.code());
    if (t != DataType.UNDEF) {
      // a run of one, without the list
      writeRunPrefix(t);
      if (t != DataType.POINTER) {
        writeRunItem(t, v);
      }
    }
  }

  private void writeInfo(Info i) {
    writeStr(i.key());
    writeUnsigned(Integer.toUnsignedLong(i.flags()), 32);
    writeValue(i.value());
  }

  private void writeProc(Proc p) {
    writeStr(p.nspace());
    writeUnsigned(Integer.toUnsignedLong(p.rank()), 32);
  }

  private void writeArray(DataArray a) {
    writeTag(a.elementType().code());
    writeSizeField(a.size());
    if (a.size() != 0 && a.elementType() != DataType.UNDEF) {
      checkPackable(a.elementType());
      writeItems(a.elementType(), a.items());
    }
  }

  private void writeApp(Value.App a) {
    writeStr(a.cmd());
    writeIntField(a.argv().size());
    for (String s : a.argv()) {
      writeStr(requireNonNull(s, "argv element"));
    }
    writeSigned(a.env().size(), 32);
    for (String s : a.env()) {
      writeStr(requireNonNull(s, "env element"));
    }
    writeStr(a.cwd());
    writeIntField(a.maxprocs());
    writeSizeField(a.info().size());
    for (Info i : a.info()) {
      writeInfo(i);
    }
  }

  private void writeCoord(Value.Coord c) {
    out.writeByte(c.view());
    writeSizeField(c.coords().size());
    for (long x : c.coords()) {
      writeUnsigned(x, 32);
    }
  }

  private void writeTimeVal(Value.TimeVal t) {
    writeSigned(t.seconds(), 64);
    writeSigned(t.microseconds(), 64);
  }

  private void writeProcStats(Value.ProcStats p) {
    writeStr(p.node());
    writeProc(p.proc());
    writeItems(DataType.PID, List.of(Value.pid(p.pid())));
    writeStr(p.cmd());
    out.writeByte(p.state());
    writeTimeVal(p.time());
    writeSigned(p.priority(), 32);
    writeSigned((short) p.numThreads(), 16);
    writeStr(FloatText.format(p.pss()));
    writeStr(FloatText.format(p.vsize()));
    writeStr(FloatText.format(p.rss()));
    writeSigned((short) p.processor(), 16);
    writeTimeVal(p.sampleTime());
  }

  private void writeNodeStats(Value.NodeStats n) {
    writeStr(n.node());
    for (float f : n.loads()) {
      writeStr(FloatText.format(f));
    }
    writeTimeVal(n.sampleTime());
    writeSizeField(n.diskStats().size());
    for (Value.DiskStats d : n.diskStats()) {
      writeItem(DataType.DISK_STATS, d);
    }
    writeSizeField(n.netStats().size());
    for (Value.NetStats d : n.netStats()) {
      writeItem(DataType.NET_STATS, d);
    }
  }

  /** A C {@code int} field inside a struct: packed as INT, so native adds its run tag. */
  private void writeIntField(int v) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      writeTag(DataType.INT32.code());
    }
    writeSigned(v, 32);
  }

  /** A {@code size_t} field inside a struct: packed as SIZE, so native adds its run tag. */
  private void writeSizeField(long v) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      writeTag(DataType.UINT64.code());
    }
    writeUnsigned(v, 64);
  }

  /** size then bytes (byte objects, buffers, endpoints). */
  private void writeBlob(byte[] b) {
    writeSizeField(b.length);
    out.writeBytes(b);
  }

  /** A string: its length counting the NUL (signed int32), the bytes, the NUL; NULL is length 0. */
  private void writeStr(String s) {
    if (s == null) {
      writeSigned(0, 32);
      return;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    writeSigned(b.length + 1L, 32);
    out.writeBytes(b);
    out.writeByte(0);
  }

  /**
   * A regex: the 4.2.2 packer copies "pmix"/"raw:" forms raw with their NUL and no length; other
   * text goes as an ordinary string, which is what the C unpacker's fallback reads.
   */
  private void writeRegex(String s) {
    if (s != null && (s.startsWith("pmix") || s.startsWith("raw:"))) {
      out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
      out.writeByte(0);
    } else {
      writeStr(s);
    }
  }

  private void writeTag(int code) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      out.writeShort(code);
    } else {
      Flex128.write(out, code);
    }
  }

  private void writeSigned(long v, int bits) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      writeFixed(v, bits);
    } else {
      Flex128.write(out, Flex128.zigzag(v));
    }
  }

  private void writeUnsigned(long v, int bits) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      writeFixed(v, bits);
    } else {
      Flex128.write(out, v);
    }
  }

  private void writeFixed(long v, int bits) {
    switch (bits) {
      case 8:
        out.writeByte((int) v);
        break;
      case 16:
        out.writeShort((int) v);
        break;
      case 32:
        out.writeInt((int) v);
        break;
      default:
        out.writeLong(v);
    }
  }
}
