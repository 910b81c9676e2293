package io.pmix.common.codec;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Unpacks what {@link PmixWriter} or OpenPMIx 4.2.2's {@code PMIx_Data_pack} wrote, never
 * trusting a count or a length from the input.
 *
 * <p>Every failure is a {@link PmixException}, with the status a C peer would report where C
 * reports one:
 *
 * <ul>
 *   <li>input ends early, including inside a varint: {@code PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER}
 *       (C 4.2.2 silently accepts truncated varints; HEAD reports them, and so do we);
 *   <li>more items than the caller has room for: {@code PMIX_ERR_UNPACK_INADEQUATE_SPACE};
 *   <li>a negative item count: {@code PMIX_ERR_BAD_PARAM} (C 4.2.2 reports success with the
 *       negative count, which is how a NON_DESC reader sees FULLY_DESC bytes);
 *   <li>a negative string length, or a string, count, size or nesting beyond {@link CodecLimits}
 *       (a size of 2^63 or more is beyond every limit): {@code PMIX_ERR_OUT_OF_RESOURCE}; so is a
 *       run of POINTERs (which occupy no bytes of their own) that would make the pointers read so
 *       far outnumber the bytes read so far by more than 64;
 *   <li>a varint wider than its type, a string without its NUL, a FLOAT or DOUBLE whose text is
 *       not C {@code %f} output of at most 1024 bytes, and, in a fully
 *       described buffer, a pack call that does not start with the INT32 tag of its count (what
 *       C reports when a NON_DESC buffer is read as FULLY_DESC): {@code PMIX_ERR_UNPACK_FAILURE};
 *   <li>an unknown or unregistered type code: {@code PMIX_ERR_UNKNOWN_DATA_TYPE};
 *   <li>in a fully described buffer, an item tag that is not the expected type:
 *       {@code PMIX_ERR_PACK_MISMATCH}.
 * </ul>
 *
 * <p>No other exception escapes, whatever the bytes. Memory allocated is bounded by the input's
 * size: lists are never pre-sized beyond the bytes that remain, and every item costs input bytes
 * except POINTERs, which are rationed as above. After a failure the buffer position is unspecified
 * (as in C). The reader borrows its {@link WireBuffer} (or Netty {@link ByteBuf}); not thread-safe.
 */
public final class PmixReader {
  /**
   * The longest FLOAT or DOUBLE text accepted: C's {@code %f} of -DBL_MAX is 317 bytes, so this
   * leaves room for any plausible spelling while bounding the parser's work.
   */
  static final int MAX_FLOAT_TEXT = 1024;

  /** The REGEX prefixes "pmix", "raw:" and "blob" as big-endian ints. */
  private static final int REGEX_PMIX = 0x706d6978;
  private static final int REGEX_RAW = 0x7261773a;
  private static final int REGEX_BLOB = 0x626c6f62;

  /** How many more POINTER items than bytes read a reader hands out. */
  private static final int POINTER_ALLOWANCE = 64;

  private final WireBuffer in;
  private final WireFormat format;
  private final CodecLimits limits;
  private final int startIndex;
  private long pointers;
  private int depth;

  /** A reader of {@code in} in {@code format} under {@code limits}. */
  public PmixReader(WireBuffer in, WireFormat format, CodecLimits limits) {
    this.in = requireNonNull(in, "in");
    this.format = requireNonNull(format, "format");
    this.limits = requireNonNull(limits, "limits");
    this.startIndex = in.readerIndex();
  }

  /** A reader in {@code format} with the default limits. */
  public PmixReader(WireBuffer in, WireFormat format) {
    this(in, format, CodecLimits.DEFAULT);
  }

  /** A reader of a Netty buffer (its reader index moves) in {@code format} under {@code limits}. */
  public PmixReader(ByteBuf in, WireFormat format, CodecLimits limits) {
    this(WireBuffer.of(in), format, limits);
  }

  /** A reader of a Netty buffer in {@code format} with the default limits. */
  public PmixReader(ByteBuf in, WireFormat format) {
    this(WireBuffer.of(in), format, CodecLimits.DEFAULT);
  }

  /** A reader in the 4.2.2 default format with the default limits. */
  public PmixReader(ByteBuf in) {
    this(WireBuffer.of(in), WireFormat.DEFAULT, CodecLimits.DEFAULT);
  }

  /** The format read. */
  public WireFormat format() {
    return format;
  }

  /** The limits this reader enforces, for callers that check counts before reading. */
  public CodecLimits limits() {
    return limits;
  }

  /** Whether unread bytes remain. */
  public boolean hasRemaining() {
    return in.isReadable();
  }

  /**
   * Consumes the unread bytes as they are: a tail that another reader will read, such as the job
   * data after the namespace of a REQ reply.
   */
  public byte[] unpackRemaining() {
    byte[] b = new byte[in.readableBytes()];
    in.readBytes(b);
    return b;
  }

  /** How many bytes remain unread. */
  public int remaining() {
    return in.readableBytes();
  }

  /**
   * One pack call of items of {@code type}, at most {@code maxItems} of them (C's {@code
   * num_vals}). With type VALUE each item is read with its own tag and may be of any type.
   *
   * @throws PmixException with {@code PMIX_ERR_UNPACK_INADEQUATE_SPACE} if the call holds more
   *     items than {@code maxItems} (nothing more is read), or another status as the class says
   */
  public List<Value> unpack(DataType type, int maxItems) {
    int n = readCallHeader(type, maxItems);
    if (n == 0) {
      readRunPrefix(type);
    }
    return readItems(type, n);
  }

  /**
   * One pack call holding exactly one BYTE_OBJECT: its bytes, in a new array that the caller owns
   * (what {@code unpackOne(DataType.BYTE_OBJECT).asBytes()} returns, without the two copies a
   * {@link Value} makes on the way; docs/architecture.md, "Data blobs without copies").
   *
   * @throws PmixException as {@link #unpackOne} does for a call of another type or count
   */
  public byte[] unpackByteObject() {
    if (readCallHeader(DataType.BYTE_OBJECT, 1) == 0) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, "expected one " + DataType.BYTE_OBJECT + ", got none");
    }
    return readBlob();
  }

  /**
   * One pack call holding exactly one BYTE_OBJECT: its bytes as a view of this reader's, not
   * copied (a client reading a GETNB answer's blob, which it compares with the last one and then
   * decodes: docs/architecture.md, "Data blobs without copies"). The view is to be read before
   * this reader's bytes change.
   *
   * @throws PmixException as {@link #unpackByteObject} does
   */
  public WireBuffer unpackByteObjectSlice() {
    if (readCallHeader(DataType.BYTE_OBJECT, 1) == 0) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, "expected one " + DataType.BYTE_OBJECT + ", got none");
    }
    int n = readBlobLength();
    if (in.readableBytes() < n) {
      throw pastEnd(n + " bytes wanted, " + in.readableBytes() + " left");
    }
    return in.readSlice(n);
  }

  /**
   * One pack call holding exactly one BUFFER: a reader over its contents, in the format its buffer
   * type names, with this reader's limits. The contents are not copied (what {@code
   * unpackOne(DataType.BUFFER)} and its {@code bytes()} copy three times, a fresh server's commit
   * decoding at every fence; docs/architecture.md, "Data blobs without copies"): the inner reader
   * reads this reader's bytes, so it is to be read before they change.
   *
   * @throws PmixException as {@link #unpackOne} does for a call of another type or count, {@code
   *     PMIX_ERR_BAD_PARAM} for an unknown buffer type
   */
  public PmixReader unpackBufferReader() {
    if (readCallHeader(DataType.BUFFER, 1) == 0) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, "expected one " + DataType.BUFFER + ", got none");
    }
    int bufferType = readByte();
    long n = readSizeField();
    if (Long.compareUnsigned(n, limits.maxStringBytes()) > 0) {
      throw new PmixException(
          Status.ERR_OUT_OF_RESOURCE,
          Long.toUnsignedString(n) + " bytes exceed the limit of " + limits.maxStringBytes());
    }
    if (in.readableBytes() < n) {
      throw pastEnd(n + " bytes wanted, " + in.readableBytes() + " left");
    }
    WireBuffer contents = in.readSlice((int) n);
    return new PmixReader(contents, WireFormat.of(BufferType.fromCode(bufferType)), limits);
  }

  /**
   * The start of a pack call of {@code type}: its count (and, fully described, the tags), checked
   * against {@code maxItems}.
   */
  private int readCallHeader(DataType type, int maxItems) {
    requireNonNull(type, "type");
    if (!in.isReadable()) {
      throw pastEnd("no pack call left in the buffer");
    }
    if (format.bufferType() == BufferType.FULLY_DESC) {
      expectCountTag();
    }
    int n = readCount();
    if (n > maxItems) {
      throw new PmixException(
          Status.ERR_UNPACK_INADEQUATE_SPACE,
          "pack call holds " + n + " items of " + type + ", room for " + maxItems);
    }
    if (format.bufferType() == BufferType.FULLY_DESC) {
      expectTag(type);
    }
    if (!type.isRegistered()) {
      throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, type + " is not a wire type");
    }
    return n;
  }

  /**
   * What C writes before a run of PID (its tag), POINTER (its sentinel byte) and, under native
   * psquash, INT/UINT/SIZE (their tags): once per run, and even before an empty run in a pack
   * call (though not in an empty data array, whose elements C skips altogether).
   */
  private void readRunPrefix(DataType type) {
    switch (type) {
      case PID:
        readPidTag();
        break;
      case POINTER:
        readByte();
        break;
      case INT:
      case UINT:
        if (format.intEncoding() == IntEncoding.NATIVE) {
          expectTag(DataType.INT32);
        }
        break;
      case SIZE:
        if (format.intEncoding() == IntEncoding.NATIVE) {
          expectTag(DataType.UINT64);
        }
        break;
      default:
        break;
    }
  }

  /** One pack call holding exactly one item of {@code type}. */
  public Value unpackOne(DataType type) {
    List<Value> v = unpack(type, 1);
    if (v.isEmpty()) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "expected one " + type + ", got none");
    }
    return v.get(0);
  }

  /**
   * One pack call of a fully described buffer whose type is not known in advance: its own tags
   * say what it holds. Only for FULLY_DESC readers.
   */
  public List<Value> unpackDescribed() {
    if (format.bufferType() != BufferType.FULLY_DESC) {
      throw new IllegalStateException("only a fully described buffer describes itself");
    }
    expectCountTag();
    int n = readCount();
    DataType t = readType();
    if (!t.isRegistered()) {
      throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, t + " is not a wire type");
    }
    if (n == 0) {
      readRunPrefix(t);
    }
    return readItems(t, n);
  }

  /**
   * The start of a pack call that must hold one item of {@code type}, up to the item: what {@link
   * #unpackOne} reads before it, with the same failures in the same order. The one-item calls below
   * read their item directly, not as a {@link Value} in a list: every message is made of them, and
   * a fresh JVM runs them interpreted (docs/architecture.md, "One-item pack calls").
   */
  private void readOneHeader(DataType type) {
    int n = readCallHeader(type, 1);
    readRunPrefix(type); // C writes it before an empty run too
    if (n == 0) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "expected one " + type + ", got none");
    }
  }

  /** One STRING (null for C's NULL string). */
  public @Nullable String unpackString() {
    readOneHeader(DataType.STRING);
    return readStr();
  }

  /** One INT32. */
  public int unpackInt32() {
    readOneHeader(DataType.INT32);
    return (int) readSigned(32);
  }

  /** One UINT32, as unsigned bits in an int. */
  public int unpackUInt32() {
    readOneHeader(DataType.UINT32);
    return (int) readUnsigned(32);
  }

  /** One SIZE, as unsigned bits in a long. */
  public long unpackSize() {
    readOneHeader(DataType.SIZE);
    return readUnsigned(64);
  }

  /** One STATUS. */
  public Status unpackStatus() {
    readOneHeader(DataType.STATUS);
    return Status.of((int) readSigned(32));
  }

  /** One PROC. */
  public Proc unpackProc() {
    readOneHeader(DataType.PROC);
    return readProc();
  }

  /** One PROC_RANK, as unsigned bits in an int. */
  public int unpackRank() {
    readOneHeader(DataType.PROC_RANK);
    return (int) readUnsigned(32);
  }

  /** One BOOL. */
  public boolean unpackBool() {
    readOneHeader(DataType.BOOL);
    return readByte() != 0;
  }

  /** One unsigned 8-bit enum (COMMAND, SCOPE, DATA_RANGE, PERSIST, ...). */
  public int unpackByteEnum(DataType type) {
    if (!type.isUnsignedInteger() || type.bits() != 8) {
      return (int) ((Value.UInt) unpackOne(type)).value(); // which fails, as it always did
    }
    readOneHeader(type);
    return readByte();
  }

  /** One pack call of up to {@code maxItems} infos. */
  public List<Info> unpackInfos(int maxItems) {
    List<Value> v = unpack(DataType.INFO, maxItems);
    List<Info> r = new ArrayList<>(v.size());
    for (Value x : v) {
      r.add((Info) x);
    }
    return r;
  }

  /** One item written as a {@code pmix_value_t}. */
  public Value unpackValue() {
    return unpackOne(DataType.VALUE);
  }

  // ---------------------------------------------------------------------------------------------

  private int readCount() {
    long n = readSigned(32);
    if (n < 0) {
      throw new PmixException(Status.ERR_BAD_PARAM, "negative item count " + n);
    }
    return checkItems(n);
  }

  /** A count or an unsigned size, checked against the item limit. */
  private int checkItems(long n) {
    if (Long.compareUnsigned(n, limits.maxItems()) > 0) {
      throw new PmixException(
          Status.ERR_OUT_OF_RESOURCE,
          Long.toUnsignedString(n) + " items exceed the limit of " + limits.maxItems());
    }
    return (int) n;
  }

  /** Preallocation never exceeds what the remaining input could hold. */
  private <T> List<T> newList(long n) {
    return new ArrayList<>((int) Math.min(n, in.readableBytes() + 1L));
  }

  /** C fails with UNPACK_FAILURE, not PACK_MISMATCH, when a pack call does not start with INT32. */
  private void expectCountTag() {
    int code = readTagCode();
    if (code != DataType.INT32.code()) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE,
          "pack call starts with type "
              + DataType.fromCode(code).map(DataType::pmixName).orElse("code " + code)
              + " instead of the PMIX_INT32 of its count");
    }
  }

  private void expectTag(DataType expected) {
    int code = readTagCode();
    if (code != expected.code()) {
      throw new PmixException(
          Status.ERR_PACK_MISMATCH,
          "got type " + DataType.fromCode(code).map(DataType::pmixName).orElse("code " + code)
              + " when expecting type " + expected.pmixName());
    }
  }

  private DataType readType() {
    int code = readTagCode();
    Optional<DataType> t = DataType.fromCode(code);
    if (t.isEmpty()) {
      throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, "type code " + code);
    }
    return t.get();
  }

  private List<Value> readItems(DataType type, int n) {
    if (n == 0) {
      return new ArrayList<>(0);
    }
    readRunPrefix(type);
    if (type == DataType.POINTER) {
      countPointers(n);
      return new ArrayList<>(Collections.nCopies(n, Value.Pointer.INSTANCE));
    }
    List<Value> items = newList(n);
    for (int i = 0; i < n; i++) {
      items.add(readRunItem(type));
    }
    return items;
  }

  /**
   * POINTER items occupy no bytes (a run of any length is one sentinel byte), so a few bytes could
   * otherwise make the reader allocate millions of list slots.
   */
  private void countPointers(int n) {
    pointers += n;
    long read = (long) in.readerIndex() - startIndex;
    if (pointers > read + POINTER_ALLOWANCE) {
      throw new PmixException(
          Status.ERR_OUT_OF_RESOURCE,
          "a run of " + n + " pointers makes " + pointers + " from " + read + " bytes");
    }
  }

  /** One item of a run whose prefix (see {@link #readRunPrefix}) has been read. */
  private Value readRunItem(DataType type) {
    switch (type) {
      case PID:
        return Value.pid((int) readUnsigned(32));
      case INT:
        {
          int x = (int) readSigned(32);
          return Value.signed(DataType.INT, x);
        }
      case UINT:
        return Value.unsigned(DataType.UINT, Integer.toUnsignedLong((int) readSigned(32)));
      case SIZE:
        return Value.size(readUnsigned(64));
      default:
        return readItem(type);
    }
  }

  /**
   * An integer of {@link DataType#bits()} bits: one byte when 8, else fixed-width or a varint no
   * wider than that. TIME ({@code time_t}) is signed but C packs it as an unsigned 64-bit value.
   */
  private Value readInteger(DataType type) {
    int bits = type.bits();
    if (type == DataType.TIME) {
      return Value.signed(DataType.TIME, readUnsigned(64));
    }
    if (type.isSignedInteger()) {
      return Value.signed(type, bits == 8 ? (byte) readByte() : readSigned(bits));
    }
    return Value.unsigned(type, bits == 8 ? readByte() : readUnsigned(bits));
  }

  /** C accepts any integer type tag before a pid run and converts; so do we. */
  private void readPidTag() {
    int code = readTagCode();
    if (code != DataType.UINT32.code()
        && !(code >= DataType.INT.code() && code <= DataType.UINT64.code())) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "pid run tagged with type code " + code);
    }
    if (code != DataType.UINT32.code()) {
      // An odd tag is legal but rare; the value still reads as a varint (flex128) in every case
      // C produces, so only the fixed-width native form needs the tag's width.
      if (format.intEncoding() == IntEncoding.NATIVE) {
        throw new PmixException(
            Status.ERR_NOT_SUPPORTED, "native pid run tagged with type code " + code);
      }
    }
  }

  private Value readItem(DataType type) {
    if (type.kind() != DataType.Kind.OTHER) {
      return readInteger(type);
    }
    switch (type) {
      case BOOL:
        return Value.of(readByte() != 0);
      case STRING:
      case PROC_NSPACE:
        return new Value.Str(type, readStr());
      case REGEX:
        return new Value.Str(DataType.REGEX, readRegex());
      case FLOAT:
        return new Value.Real32(FloatText.parseFloat(readFloatText("FLOAT")));
      case DOUBLE:
        return new Value.Real64(FloatText.parseDouble(readFloatText("DOUBLE")));
      case TIMEVAL:
        return readTimeVal();
      case STATUS:
        return Value.status(Status.of((int) readSigned(32)));
      case VALUE:
        return readValue();
      case PROC:
        return readProc();
      case APP:
        return readApp();
      case INFO:
        return readInfo();
      case PDATA:
        {
          Proc p = readProc();
          String key = readNonNullStr("PDATA key");
          return new Value.PData(p, key, readValue());
        }
      case BUFFER:
        {
          int bt = readByte();
          return new Value.Buffer(bt, readBlob());
        }
      case BYTE_OBJECT:
      case COMPRESSED_STRING:
      case COMPRESSED_BYTE_OBJECT:
      case DATA_BUFFER:
        return new Value.Bytes(type, readBlob());
      case KVAL:
        {
          String key = readStr();
          return new Value.KVal(key, readValue());
        }
      case PROC_INFO:
        {
          Proc p = readProc();
          String host = readStr();
          String exe = readStr();
          readPidTag();
          int pid = (int) readUnsigned(32);
          int state = readByte();
          return new Value.ProcInfo(p, host, exe, pid, 0, state);
        }
      case DATA_ARRAY:
        return readArray();
      case QUERY:
        {
          int nkeys = readCount();
          List<String> keys = newList(nkeys);
          for (int i = 0; i < nkeys; i++) {
            keys.add(readNonNullStr("query key"));
          }
          int nq = checkItems(readSizeField());
          List<Info> q = newList(nq);
          for (int i = 0; i < nq; i++) {
            q.add(readInfo());
          }
          return new Value.Query(keys, q);
        }
      case ENVAR:
        {
          String e = readStr();
          String v = readStr();
          return new Value.Envar(e, v, readByte());
        }
      case COORD:
        return readCoord();
      case REGATTR:
        {
          String name = readStr();
          String string = readStr();
          int dt = (int) readUnsigned(16);
          int nd = readCount();
          List<String> desc = newList(nd);
          for (int i = 0; i < nd; i++) {
            desc.add(readNonNullStr("description"));
          }
          return new Value.RegAttr(name, string, dt, desc);
        }
      case PROC_CPUSET:
        return new Value.Cpuset(readStr());
      case GEOMETRY:
        {
          long fabric = readSizeField();
          String uuid = readStr();
          String os = readStr();
          int nc = checkItems(readSizeField());
          List<Value.Coord> coords = newList(nc);
          for (int i = 0; i < nc; i++) {
            coords.add(readCoord());
          }
          return new Value.Geometry(fabric, uuid, os, coords);
        }
      case DEVICE_DIST:
        {
          String uuid = readStr();
          String os = readStr();
          long t = readUnsigned(64);
          int min = (int) readUnsigned(16);
          int max = (int) readUnsigned(16);
          return new Value.DeviceDist(uuid, os, t, min, max);
        }
      case ENDPOINT:
        {
          String uuid = readStr();
          String os = readStr();
          return new Value.Endpoint(uuid, os, readBlob());
        }
      case TOPO:
        {
          String xml = readStr();
          if (xml == null) {
            return Value.Topo.NONE;
          }
          byte[] d = readRaw(limits.hwlocDiscoveryBytes());
          byte[] c = readRaw(limits.hwlocCpubindBytes());
          byte[] m = readRaw(limits.hwlocMembindBytes());
          return new Value.Topo(xml, d, c, m);
        }
      case PROC_STATS:
        return readProcStats();
      case DISK_STATS:
        return readDiskStats();
      case NET_STATS:
        return readNetStats();
      case NODE_STATS:
        return readNodeStats();
      default:
        throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, "cannot unpack an item of " + type);
    }
  }

  private Value readValue() {
    DataType t = readType();
    if (t == DataType.UNDEF) {
      return Value.Undef.INSTANCE;
    }
    if (!t.isRegistered()) {
      throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, t + " inside a value");
    }
    enter();
    try {
      // a run of one, without the list
      readRunPrefix(t);
      if (t == DataType.POINTER) {
        countPointers(1);
        return Value.Pointer.INSTANCE;
      }
      return readRunItem(t);
    } finally {
      depth--;
    }
  }

  private void enter() {
    if (++depth > limits.maxDepth()) {
      depth--;
      throw new PmixException(
          Status.ERR_OUT_OF_RESOURCE, "values nested deeper than " + limits.maxDepth());
    }
  }

  private Info readInfo() {
    String key = readStr();
    if (key == null) {
      throw new PmixException(Status.ERROR, "info with a NULL key");
    }
    int flags = (int) readUnsigned(32);
    return new Info(checkKey(key), flags, readValue());
  }

  private static String checkKey(String key) {
    if (key.getBytes(StandardCharsets.UTF_8).length > Info.MAX_KEYLEN) {
      throw new PmixException(Status.ERR_BAD_PARAM, "key longer than " + Info.MAX_KEYLEN + " bytes");
    }
    return key;
  }

  private Proc readProc() {
    String ns = readStr();
    if (ns == null) {
      throw new PmixException(Status.ERROR, "proc with a NULL namespace");
    }
    if (ns.getBytes(StandardCharsets.UTF_8).length > Proc.MAX_NSLEN) {
      throw new PmixException(
          Status.ERR_BAD_PARAM, "namespace longer than " + Proc.MAX_NSLEN + " bytes");
    }
    int rank = (int) readUnsigned(32);
    return new Proc(ns, rank);
  }

  private DataArray readArray() {
    DataType t = readType();
    int count = checkItems(readSizeField());
    if (t == DataType.UNDEF) {
      return DataArray.undefined(count);
    }
    if (!t.isRegistered()) {
      throw new PmixException(Status.ERR_UNKNOWN_DATA_TYPE, t + " array");
    }
    enter();
    try {
      return DataArray.of(t, readItems(t, count));
    } finally {
      depth--;
    }
  }

  private Value.App readApp() {
    String cmd = readStr();
    int argc = readIntField();
    List<String> argv = newList(argc);
    for (int i = 0; i < argc; i++) {
      argv.add(readNonNullStr("argv element"));
    }
    int envc = readCount();
    List<String> env = newList(envc);
    for (int i = 0; i < envc; i++) {
      env.add(readNonNullStr("env element"));
    }
    String cwd = readStr();
    int maxprocs = readIntFieldRaw();
    int ninfo = checkItems(readSizeField());
    List<Info> info = newList(ninfo);
    for (int i = 0; i < ninfo; i++) {
      info.add(readInfo());
    }
    return new Value.App(cmd, argv, env, cwd, maxprocs, info);
  }

  private Value.Coord readCoord() {
    int view = readByte();
    int dims = checkItems(readSizeField());
    List<Long> c = newList(dims);
    for (int i = 0; i < dims; i++) {
      c.add(readUnsigned(32));
    }
    return new Value.Coord(view, c);
  }

  private Value.TimeVal readTimeVal() {
    long s = readSigned(64);
    return new Value.TimeVal(s, readSigned(64));
  }

  private Value.ProcStats readProcStats() {
    String node = readStr();
    Proc p = readProc();
    readPidTag();
    int pid = (int) readUnsigned(32);
    String cmd = readStr();
    int state = readByte();
    Value.TimeVal time = readTimeVal();
    int priority = (int) readSigned(32);
    int threads = (short) readSigned(16) & 0xffff;
    float pss = FloatText.parseFloat(readFloatText("FLOAT"));
    float vsize = FloatText.parseFloat(readFloatText("FLOAT"));
    float rss = FloatText.parseFloat(readFloatText("FLOAT"));
    int processor = (short) readSigned(16) & 0xffff;
    Value.TimeVal sample = readTimeVal();
    return new Value.ProcStats(
        node, p, pid, cmd, state, time, priority, threads, pss, vsize, rss, processor, sample);
  }

  private Value.DiskStats readDiskStats() {
    String disk = readStr();
    List<Long> c = new ArrayList<>(11);
    for (int i = 0; i < 11; i++) {
      c.add(readUnsigned(64));
    }
    return new Value.DiskStats(disk, c);
  }

  private Value.NetStats readNetStats() {
    String nic = readStr();
    List<Long> c = new ArrayList<>(6);
    for (int i = 0; i < 6; i++) {
      c.add(readUnsigned(64));
    }
    return new Value.NetStats(nic, c);
  }

  private Value.NodeStats readNodeStats() {
    String node = readStr();
    List<Float> loads = new ArrayList<>(11);
    for (int i = 0; i < 11; i++) {
      loads.add(FloatText.parseFloat(readFloatText("FLOAT")));
    }
    Value.TimeVal sample = readTimeVal();
    int nd = checkItems(readSizeField());
    List<Value.DiskStats> disks = newList(nd);
    for (int i = 0; i < nd; i++) {
      disks.add(readDiskStats());
    }
    int nn = checkItems(readSizeField());
    List<Value.NetStats> nets = newList(nn);
    for (int i = 0; i < nn; i++) {
      nets.add(readNetStats());
    }
    return new Value.NodeStats(node, loads, sample, disks, nets);
  }

  // ---- primitives ----

  private int readIntFieldRaw() {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      expectTag(DataType.INT32);
    }
    return (int) readSigned(32);
  }

  /** A C int used as a count (APP argc). */
  private int readIntField() {
    int n = readIntFieldRaw();
    if (n < 0) {
      throw new PmixException(Status.ERR_BAD_PARAM, "negative count " + n);
    }
    return checkItems(n);
  }

  private long readSizeField() {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      expectTag(DataType.UINT64);
    }
    return readUnsigned(64);
  }

  private byte[] readBlob() {
    return readRaw(readBlobLength());
  }

  /** A blob's size field, checked against the limit on its length. */
  private int readBlobLength() {
    long n = readSizeField();
    if (Long.compareUnsigned(n, limits.maxStringBytes()) > 0) {
      throw new PmixException(
          Status.ERR_OUT_OF_RESOURCE,
          Long.toUnsignedString(n) + " bytes exceed the limit of " + limits.maxStringBytes());
    }
    return (int) n;
  }

  private byte[] readRaw(int n) {
    if (in.readableBytes() < n) {
      throw pastEnd(n + " bytes wanted, " + in.readableBytes() + " left");
    }
    byte[] b = new byte[n];
    in.readBytes(b);
    return b;
  }

  private String readFloatText(String what) {
    String s = readNonNullStr(what);
    if (s.length() > MAX_FLOAT_TEXT) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, what + " text of " + s.length() + " characters");
    }
    return s;
  }

  private String readNonNullStr(String what) {
    String s = readStr();
    if (s == null) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "NULL string for " + what);
    }
    return s;
  }

  private @Nullable String readStr() {
    long len = readSigned(32);
    if (len == 0) {
      return null;
    }
    if (len < 0) {
      throw new PmixException(Status.ERR_OUT_OF_RESOURCE, "negative string length " + len);
    }
    if (len > limits.maxStringBytes()) {
      throw new PmixException(
          Status.ERR_OUT_OF_RESOURCE,
          "string of " + len + " bytes exceeds the limit of " + limits.maxStringBytes());
    }
    if (in.readableBytes() < len) {
      throw pastEnd("string of " + len + " bytes, " + in.readableBytes() + " left");
    }
    int start = in.readerIndex();
    int n = (int) len - 1;
    if (in.getByte(start + n) != 0) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "string without its terminating NUL");
    }
    int nul = in.indexOf(start, start + n, (byte) 0);
    if (nul >= 0) {
      // C would stop at the first NUL; keep C's view of the text, but the bytes are consumed.
      n = nul - start;
    }
    String s = in.toString(start, n, StandardCharsets.UTF_8);
    in.skipBytes((int) len);
    return s;
  }

  /** "pmix"/"raw:" regexes travel raw up to their NUL; anything else is an ordinary string. */
  private @Nullable String readRegex() {
    if (in.readableBytes() >= 4) {
      // compared as a big-endian int: no String per item
      int prefix = in.getInt(in.readerIndex());
      if (prefix == REGEX_PMIX || prefix == REGEX_RAW) {
        int start = in.readerIndex();
        int nul = in.indexOf(start, in.writerIndex(), (byte) 0);
        if (nul < 0) {
          throw pastEnd("regex without its terminating NUL");
        }
        if (nul - start > limits.maxStringBytes()) {
          throw new PmixException(Status.ERR_OUT_OF_RESOURCE, "regex exceeds the string limit");
        }
        String s = in.toString(start, nul - start, StandardCharsets.UTF_8);
        in.readerIndex(nul + 1);
        return s;
      }
      if (prefix == REGEX_BLOB) {
        // 4.2.2 never produces these (its compressor refuses every input) and copies a wrong
        // length when it reads one; 5.0.x fixed the length. Neither form is supported yet.
        throw new PmixException(Status.ERR_NOT_SUPPORTED, "compressed (blob) regex");
      }
    }
    return readStr();
  }

  private int readByte() {
    if (!in.isReadable()) {
      throw pastEnd("one byte wanted, none left");
    }
    return in.readUnsignedByte();
  }

  private int readTagCode() {
    return (int) readUnsigned(16);
  }

  private long readSigned(int bits) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      return readFixed(bits, true);
    }
    long u = readVarint();
    checkWidth(u, bits);
    return Flex128.unzigzag(u);
  }

  private long readUnsigned(int bits) {
    if (format.intEncoding() == IntEncoding.NATIVE) {
      return readFixed(bits, false);
    }
    long u = readVarint();
    checkWidth(u, bits);
    return u;
  }

  private static void checkWidth(long u, int bits) {
    if (bits < 64 && (u >>> bits) != 0) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE,
          "varint " + Long.toUnsignedString(u) + " is wider than " + bits + " bits");
    }
  }

  private long readFixed(int bits, boolean signed) {
    int n = bits / 8;
    if (in.readableBytes() < n) {
      throw pastEnd(n + "-byte integer, " + in.readableBytes() + " left");
    }
    switch (bits) {
      case 8:
        return signed ? in.readByte() : in.readUnsignedByte();
      case 16:
        return signed ? in.readShort() : in.readUnsignedShort();
      case 32:
        return signed ? in.readInt() : in.readUnsignedInt();
      default:
        return in.readLong();
    }
  }

  private long readVarint() {
    long u = 0;
    int shift = 0;
    for (int i = 0; i < 8; i++) {
      if (!in.isReadable()) {
        throw pastEnd("varint cut off by the end of the buffer");
      }
      int b = in.readUnsignedByte();
      u |= (long) (b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) {
        return u;
      }
    }
    if (!in.isReadable()) {
      throw pastEnd("varint cut off by the end of the buffer");
    }
    return u | ((long) in.readUnsignedByte() << 56);
  }

  private static PmixException pastEnd(String what) {
    return new PmixException(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, what);
  }
}
