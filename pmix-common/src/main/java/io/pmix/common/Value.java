package io.pmix.common;

import static io.pmix.common.internal.Checks.checkArgument;
import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A PMIx value: a {@link DataType} and its payload ({@code pmix_value_t}, and every item a pack
 * call can carry). Every implementation is an immutable record; values are safe to share.
 *
 * <p>Records are grouped by representation rather than one per type code: for example {@link UInt}
 * holds every unsigned integer type (UINT8 to UINT64, SIZE, PROC_RANK, the one-byte enums, ...)
 * together with its {@link DataType}, and checks the value against that type's width. Unsigned
 * values are never sign-extended: a UINT64 of 2^64-1 is the {@code long} -1 read unsigned, and
 * {@link #asLong()} refuses it rather than return a wrong number.
 */
public sealed interface Value
    permits Value.Undef,
        Value.Bool,
        Value.Int,
        Value.UInt,
        Value.Str,
        Value.Real32,
        Value.Real64,
        Value.TimeVal,
        Value.StatusValue,
        Value.Bytes,
        Value.Buffer,
        Value.Pointer,
        Value.PData,
        Value.KVal,
        Value.App,
        Value.ProcInfo,
        Value.Query,
        Value.Envar,
        Value.Coord,
        Value.RegAttr,
        Value.Geometry,
        Value.DeviceDist,
        Value.Endpoint,
        Value.Cpuset,
        Value.Topo,
        Value.ProcStats,
        Value.DiskStats,
        Value.NetStats,
        Value.NodeStats,
        Proc,
        Info,
        DataArray {

  /** The wire type of this value. */
  DataType type();

  // ---- factories for the common Java types ----

  /** A PMIX_STRING ({@code null} is the NULL string, which differs from "" on the wire). */
  static Value of(@Nullable String s) {
    return new Str(DataType.STRING, s);
  }

  /** A PMIX_BOOL. */
  static Value of(boolean b) {
    return b ? Bool.TRUE : Bool.FALSE;
  }

  /** A PMIX_INT32. */
  static Value of(int v) {
    return new Int(DataType.INT32, v);
  }

  /** A PMIX_INT64. */
  static Value of(long v) {
    return new Int(DataType.INT64, v);
  }

  /** A PMIX_DOUBLE. */
  static Value of(double v) {
    return new Real64(v);
  }

  /** A PMIX_BYTE_OBJECT holding a copy of these bytes. */
  static Value of(byte[] bytes) {
    return new Bytes(DataType.BYTE_OBJECT, bytes);
  }

  /** A PMIX_UINT32 (0 to 2^32-1). */
  static Value uint32(long v) {
    return new UInt(DataType.UINT32, v);
  }

  /** A PMIX_UINT16. */
  static Value uint16(int v) {
    return new UInt(DataType.UINT16, v);
  }

  /** A PMIX_UINT64; the {@code long} is read unsigned. */
  static Value uint64(long bits) {
    return new UInt(DataType.UINT64, bits);
  }

  /** A PMIX_SIZE (size_t); the {@code long} is read unsigned. */
  static Value size(long bits) {
    return new UInt(DataType.SIZE, bits);
  }

  /** A PMIX_PROC_RANK; the {@code int} is read unsigned. */
  static Value rank(int rank) {
    return new UInt(DataType.PROC_RANK, Integer.toUnsignedLong(rank));
  }

  /** A PMIX_PID. */
  static Value pid(int pid) {
    return new Int(DataType.PID, pid);
  }

  /** A PMIX_STATUS. */
  static Value status(Status s) {
    return new StatusValue(s);
  }

  /** A signed integer of the given type (INT8, INT16, INT32, INT64, INT, PID, TIME). */
  static Value signed(DataType type, long v) {
    return new Int(type, v);
  }

  /** An unsigned integer of the given type (see {@link UInt#TYPES}); the long is read unsigned. */
  static Value unsigned(DataType type, long bits) {
    return new UInt(type, bits);
  }

  /** The types of one integer kind, as {@link DataType} declares them. */
  private static Set<DataType> typesOf(DataType.Kind kind) {
    Set<DataType> s = EnumSet.noneOf(DataType.class);
    for (DataType t : DataType.values()) {
      if (t.kind() == kind) {
        s.add(t);
      }
    }
    return Collections.unmodifiableSet(s);
  }

  // ---- accessors ----

  /** The string of a STRING, PROC_NSPACE or REGEX value. */
  default String asString() {
    if (this instanceof Str s) {
      return s.value();
    }
    throw new IllegalStateException("not a string: " + this);
  }

  /** The value of any integer type that fits a signed {@code long}. */
  default long asLong() {
    if (this instanceof Int i) {
      return i.value();
    }
    if (this instanceof UInt u) {
      if (u.value() < 0) {
        throw new ArithmeticException(
            "unsigned value " + Long.toUnsignedString(u.value()) + " does not fit a long");
      }
      return u.value();
    }
    throw new IllegalStateException("not an integer: " + this);
  }

  /** The value of an integer type that fits a signed {@code int}. */
  default int asInt() {
    return Math.toIntExact(asLong());
  }

  /** The boolean of a BOOL value. */
  default boolean asBoolean() {
    if (this instanceof Bool b) {
      return b.value();
    }
    throw new IllegalStateException("not a bool: " + this);
  }

  /** The number of a FLOAT or DOUBLE value. */
  default double asDouble() {
    if (this instanceof Real64 d) {
      return d.value();
    }
    if (this instanceof Real32 f) {
      return f.value();
    }
    throw new IllegalStateException("not a floating-point value: " + this);
  }

  /** A copy of the bytes of a byte object, compressed or data buffer value. */
  default byte[] asBytes() {
    if (this instanceof Bytes b) {
      return b.bytes();
    }
    throw new IllegalStateException("not a byte object: " + this);
  }

  // ---- the records ----
  // Those the library compares or hashes on its own paths (the scalars, strings, byte objects,
  // PDATA, KVAL; Info, Key, DataArray, Proc elsewhere) write out equals and hashCode, with the
  // generated ones' meaning (same record class, equal components, arrays by content): a record's
  // generated ones bootstrap java.lang.invoke's ObjectMethods on first use, 20-30 ms of a fresh
  // JVM's first PMIx.init (docs/architecture.md, "Start-up of the client"). The structured ones
  // (App, Query, the stats, ...) keep the generated ones. ValueEqualityPropertiesTest checks all.

  /** PMIX_UNDEF: a value with no payload. */
  record Undef() implements Value {
    /** The one instance. */
    public static final Undef INSTANCE = new Undef();

    @Override
    public DataType type() {
      return DataType.UNDEF;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Undef;
    }

    @Override
    public int hashCode() {
      return DataType.UNDEF.hashCode();
    }
  }

  /** PMIX_BOOL. */
  record Bool(boolean value) implements Value {
    static final Bool TRUE = new Bool(true);
    static final Bool FALSE = new Bool(false);

    @Override
    public DataType type() {
      return DataType.BOOL;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Bool b && b.value == value;
    }

    @Override
    public int hashCode() {
      return Boolean.hashCode(value);
    }
  }

  /**
   * A signed integer: INT8, INT16, INT32, INT64, INT (C int), PID (pid_t) or TIME (time_t).
   *
   * @param type which of those types
   * @param value the value, within the type's range
   */
  record Int(DataType type, long value) implements Value {
    /** The types this record holds: the signed integer types of {@link DataType}. */
    public static final Set<DataType> TYPES = typesOf(DataType.Kind.SIGNED);

    /** Checks the type and range. */
    public Int {
      checkArgument(type.isSignedInteger(), "%s is not a signed integer type", type);
      int bits = type.bits();
      if (bits < 64) {
        long min = -(1L << (bits - 1));
        long max = (1L << (bits - 1)) - 1;
        checkArgument(value >= min && value <= max, "%s out of range for %s", value, type);
      }
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Int i && i.type == type && i.value == value;
    }

    @Override
    public int hashCode() {
      return type.hashCode() * 31 + Long.hashCode(value);
    }
  }

  /**
   * An unsigned integer or one of the unsigned enums: see {@link #TYPES}. The value is held as
   * unsigned bits in a {@code long}.
   *
   * @param type which of those types
   * @param value the unsigned value, within the type's width
   */
  record UInt(DataType type, long value) implements Value {
    /** The types this record holds: the unsigned integer types of {@link DataType}. */
    public static final Set<DataType> TYPES = typesOf(DataType.Kind.UNSIGNED);

    /** Checks the type and range. */
    public UInt {
      checkArgument(type.isUnsignedInteger(), "%s is not an unsigned integer type", type);
      int bits = type.bits();
      // Not checkArgument: its message argument would be built for every value a decoder makes.
      if (bits < 64 && (value < 0 || value >= (1L << bits))) {
        throw new IllegalArgumentException(
            Long.toUnsignedString(value) + " out of range for " + type);
      }
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof UInt u && u.type == type && u.value == value;
    }

    @Override
    public int hashCode() {
      return type.hashCode() * 31 + Long.hashCode(value);
    }

    @Override
    public String toString() {
      return "UInt[type=" + type + ", value=" + Long.toUnsignedString(value) + "]";
    }
  }

  /**
   * A string: STRING, PROC_NSPACE or REGEX. {@code null} is C's NULL string.
   *
   * @param type which of those types
   * @param value the text, without NUL characters
   */
  record Str(DataType type, @Nullable String value) implements Value {
    /** Checks the type and that the text can travel (no embedded NUL). */
    public Str {
      checkArgument(
          type == DataType.STRING || type == DataType.PROC_NSPACE || type == DataType.REGEX,
          "%s is not a string type",
          type);
      checkArgument(value == null || value.indexOf('\0') < 0, "string contains NUL");
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Str t && t.type == type && Objects.equals(t.value, value);
    }

    @Override
    public int hashCode() {
      return type.hashCode() * 31 + Objects.hashCode(value);
    }
  }

  /** PMIX_FLOAT. It travels as C {@code %f} text, so only 6 decimals survive the wire. */
  record Real32(float value) implements Value {
    @Override
    public DataType type() {
      return DataType.FLOAT;
    }

    @Override
    public boolean equals(Object o) {
      // Not raw bits: every NaN is one value, as in a record's generated equals (Float.compare).
      return o instanceof Real32 r && Float.floatToIntBits(r.value) == Float.floatToIntBits(value);
    }

    @Override
    public int hashCode() {
      return Float.hashCode(value);
    }
  }

  /** PMIX_DOUBLE. It travels as C {@code %f} text, so only 6 decimals survive the wire. */
  record Real64(double value) implements Value {
    @Override
    public DataType type() {
      return DataType.DOUBLE;
    }

    @Override
    public boolean equals(Object o) {
      // Not raw bits: every NaN is one value, as in a record's generated equals.
      return o instanceof Real64 r
          && Double.doubleToLongBits(r.value) == Double.doubleToLongBits(value);
    }

    @Override
    public int hashCode() {
      return Double.hashCode(value);
    }
  }

  /**
   * PMIX_TIMEVAL: seconds and microseconds, both signed 64-bit.
   *
   * @param seconds seconds
   * @param microseconds microseconds
   */
  record TimeVal(long seconds, long microseconds) implements Value {
    @Override
    public DataType type() {
      return DataType.TIMEVAL;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof TimeVal t && t.seconds == seconds && t.microseconds == microseconds;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(seconds) * 31 + Long.hashCode(microseconds);
    }
  }

  /** PMIX_STATUS. */
  record StatusValue(Status status) implements Value {
    /** Checks for null. */
    public StatusValue {
      requireNonNull(status, "status");
    }

    @Override
    public DataType type() {
      return DataType.STATUS;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof StatusValue s && s.status.equals(status);
    }

    @Override
    public int hashCode() {
      return status.hashCode();
    }
  }

  /**
   * Opaque bytes: BYTE_OBJECT, COMPRESSED_STRING, COMPRESSED_BYTE_OBJECT or DATA_BUFFER. The
   * record keeps its own copy.
   *
   * @param type which of those types
   * @param bytes the payload
   */
  // Arrays as components: the record copies them in and out and compares contents.
  @SuppressWarnings("ArrayRecordComponent")
  record Bytes(DataType type, byte[] bytes) implements Value {
    /** Checks the type and copies the bytes. */
    public Bytes {
      checkArgument(
          type == DataType.BYTE_OBJECT
              || type == DataType.COMPRESSED_STRING
              || type == DataType.COMPRESSED_BYTE_OBJECT
              || type == DataType.DATA_BUFFER,
          "%s is not a byte-object type",
          type);
      bytes = bytes.clone();
    }

    /** A copy of the payload. */
    @Override
    public byte[] bytes() {
      return bytes.clone();
    }

    /** The payload length. */
    public int length() {
      return bytes.length;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Bytes b && b.type == type && Arrays.equals(b.bytes, bytes);
    }

    @Override
    public int hashCode() {
      return type.hashCode() * 31 + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      return "Bytes[type=" + type + ", length=" + bytes.length + "]";
    }
  }

  /**
   * PMIX_BUFFER (26): a nested packed buffer with its own buffer-type byte. Deprecated in the C
   * headers but what a 4.2.2 client ships its committed data in.
   *
   * @param bufferType the inner buffer type byte (1 NON_DESC, 2 FULLY_DESC)
   * @param bytes the packed contents
   */
  // Arrays as components: the record copies them in and out and compares contents.
  @SuppressWarnings("ArrayRecordComponent")
  record Buffer(int bufferType, byte[] bytes) implements Value {
    /** Checks the byte and copies the contents. */
    public Buffer {
      checkArgument(bufferType >= 0 && bufferType <= 255, "buffer type is one byte");
      bytes = bytes.clone();
    }

    /** A copy of the packed contents. */
    @Override
    public byte[] bytes() {
      return bytes.clone();
    }

    @Override
    public DataType type() {
      return DataType.BUFFER;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Buffer b && b.bufferType == bufferType && Arrays.equals(b.bytes, bytes);
    }

    @Override
    public int hashCode() {
      return bufferType * 31 + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      return "Buffer[type=" + bufferType + ", length=" + bytes.length + "]";
    }
  }

  /** PMIX_POINTER: only a marker travels; the address never does. */
  record Pointer() implements Value {
    /** The one instance. */
    public static final Pointer INSTANCE = new Pointer();

    @Override
    public DataType type() {
      return DataType.POINTER;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Pointer;
    }

    @Override
    public int hashCode() {
      return DataType.POINTER.hashCode();
    }
  }

  /**
   * PMIX_PDATA: published data as a lookup returns it.
   *
   * @param proc the publisher
   * @param key the key
   * @param value the value
   */
  record PData(Proc proc, String key, Value value) implements Value {
    /** Checks the fields. */
    public PData {
      requireNonNull(proc, "proc");
      requireNonNull(key, "key");
      requireNonNull(value, "value");
      checkArgument(key.indexOf('\0') < 0, "key contains NUL");
    }

    @Override
    public DataType type() {
      return DataType.PDATA;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof PData p
          && p.proc.equals(proc)
          && p.key.equals(key)
          && p.value.equals(value);
    }

    @Override
    public int hashCode() {
      return (proc.hashCode() * 31 + key.hashCode()) * 31 + value.hashCode();
    }
  }

  /**
   * PMIX_KVAL: a key and a value, the unit of job data and modex payloads.
   *
   * @param key the key (null is C's NULL key)
   * @param value the value
   */
  record KVal(@Nullable String key, Value value) implements Value {
    /** Checks the fields. */
    public KVal {
      requireNonNull(value, "value");
      checkArgument(key == null || key.indexOf('\0') < 0, "key contains NUL");
    }

    @Override
    public DataType type() {
      return DataType.KVAL;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof KVal k && Objects.equals(k.key, key) && k.value.equals(value);
    }

    @Override
    public int hashCode() {
      return Objects.hashCode(key) * 31 + value.hashCode();
    }
  }

  /**
   * PMIX_APP: one application of a spawn request.
   *
   * @param cmd the executable
   * @param argv the arguments (argv[0] included)
   * @param env environment entries {@code NAME=value}
   * @param cwd the working directory
   * @param maxprocs the number of processes
   * @param info directives for this app
   */
  record App(
      @Nullable String cmd,
      List<String> argv,
      List<String> env,
      @Nullable String cwd,
      int maxprocs,
      List<Info> info)
      implements Value {
    /** Copies the lists. */
    public App {
      argv = ImmutableLists.copyOf(argv);
      env = ImmutableLists.copyOf(env);
      info = ImmutableLists.copyOf(info);
    }

    @Override
    public DataType type() {
      return DataType.APP;
    }
  }

  /**
   * PMIX_PROC_INFO. The exit code is not sent on the wire (C omits it); decoding yields 0.
   *
   * @param proc the process
   * @param hostname its host
   * @param executableName its executable
   * @param pid its pid
   * @param exitCode its exit code (local only)
   * @param state its {@code pmix_proc_state_t}
   */
  record ProcInfo(
      Proc proc,
      @Nullable String hostname,
      @Nullable String executableName,
      int pid,
      int exitCode,
      int state)
      implements Value {
    /** Checks the fields. */
    public ProcInfo {
      requireNonNull(proc, "proc");
      checkArgument(state >= 0 && state <= 255, "state is one byte");
    }

    @Override
    public DataType type() {
      return DataType.PROC_INFO;
    }
  }

  /**
   * PMIX_QUERY: keys and qualifiers of one query.
   *
   * @param keys the keys asked for
   * @param qualifiers the qualifiers
   */
  record Query(List<String> keys, List<Info> qualifiers) implements Value {
    /** Copies the lists. */
    public Query {
      keys = ImmutableLists.copyOf(keys);
      qualifiers = ImmutableLists.copyOf(qualifiers);
    }

    @Override
    public DataType type() {
      return DataType.QUERY;
    }
  }

  /**
   * PMIX_ENVAR: an environment change.
   *
   * @param envar the variable
   * @param value the value
   * @param separator the list separator character (one byte)
   */
  record Envar(@Nullable String envar, @Nullable String value, int separator)
      implements Value {
    /** Checks the separator. */
    public Envar {
      checkArgument(separator >= 0 && separator <= 255, "separator is one byte");
    }

    @Override
    public DataType type() {
      return DataType.ENVAR;
    }
  }

  /**
   * PMIX_COORD: a fabric coordinate.
   *
   * @param view 0 undefined, 1 logical, 2 physical
   * @param coords the coordinates, unsigned 32-bit each
   */
  record Coord(int view, List<Long> coords) implements Value {
    /** Checks the view and coordinates. */
    public Coord {
      checkArgument(view >= 0 && view <= 255, "view is one byte");
      coords = ImmutableLists.copyOf(coords);
      for (long c : coords) {
        checkArgument(c >= 0 && c <= 0xffffffffL, "coordinate out of uint32 range");
      }
    }

    @Override
    public DataType type() {
      return DataType.COORD;
    }
  }

  /**
   * PMIX_REGATTR: an attribute's registration.
   *
   * @param name the attribute's C macro name
   * @param string the attribute string
   * @param dataType the declared type code (unsigned 16-bit; kept raw)
   * @param description lines of description
   */
  record RegAttr(
      @Nullable String name, @Nullable String string, int dataType, List<String> description)
      implements Value {
    /** Checks the type code and copies the description. */
    public RegAttr {
      checkArgument(dataType >= 0 && dataType <= 0xffff, "type code is 16-bit");
      description = ImmutableLists.copyOf(description);
    }

    @Override
    public DataType type() {
      return DataType.REGATTR;
    }
  }

  /**
   * PMIX_GEOMETRY: a fabric device's coordinates.
   *
   * @param fabric the fabric index (size_t, unsigned)
   * @param uuid the device uuid
   * @param osname the device's OS name
   * @param coordinates its coordinates
   */
  record Geometry(
      long fabric, @Nullable String uuid, @Nullable String osname, List<Coord> coordinates)
      implements Value {
    /** Copies the list. */
    public Geometry {
      coordinates = ImmutableLists.copyOf(coordinates);
    }

    @Override
    public DataType type() {
      return DataType.GEOMETRY;
    }
  }

  /**
   * PMIX_DEVICE_DIST: distance of a device from a process.
   *
   * @param uuid the device uuid
   * @param osname the device's OS name
   * @param deviceType a {@code pmix_device_type_t} (unsigned 64-bit bits)
   * @param mindist minimum distance (uint16)
   * @param maxdist maximum distance (uint16)
   */
  record DeviceDist(
      @Nullable String uuid,
      @Nullable String osname,
      long deviceType,
      int mindist,
      int maxdist)
      implements Value {
    /** Checks the distances. */
    public DeviceDist {
      checkArgument(mindist >= 0 && mindist <= 0xffff, "mindist is uint16");
      checkArgument(maxdist >= 0 && maxdist <= 0xffff, "maxdist is uint16");
    }

    @Override
    public DataType type() {
      return DataType.DEVICE_DIST;
    }
  }

  /**
   * PMIX_ENDPOINT: a fabric endpoint.
   *
   * @param uuid the device uuid
   * @param osname the device's OS name
   * @param endpoint the endpoint bytes
   */
  // Arrays as components: the record copies them in and out and compares contents.
  @SuppressWarnings("ArrayRecordComponent")
  record Endpoint(@Nullable String uuid, @Nullable String osname, byte[] endpoint)
      implements Value {
    /** Copies the bytes. */
    public Endpoint {
      endpoint = endpoint.clone();
    }

    /** A copy of the endpoint bytes. */
    @Override
    public byte[] endpoint() {
      return endpoint.clone();
    }

    @Override
    public DataType type() {
      return DataType.ENDPOINT;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Endpoint e
          && java.util.Objects.equals(e.uuid, uuid)
          && java.util.Objects.equals(e.osname, osname)
          && Arrays.equals(e.endpoint, endpoint);
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(uuid, osname) * 31 + Arrays.hashCode(endpoint);
    }
  }

  /**
   * PMIX_PROC_CPUSET: a binding in hwloc list syntax ("0-3,8"); {@code null} means unbound.
   *
   * @param bitmap the list, or null
   */
  record Cpuset(@Nullable String bitmap) implements Value {
    @Override
    public DataType type() {
      return DataType.PROC_CPUSET;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Cpuset c && Objects.equals(c.bitmap, bitmap);
    }

    @Override
    public int hashCode() {
      return Objects.hashCode(bitmap);
    }
  }

  /**
   * PMIX_TOPO: an hwloc topology as XML plus hwloc's three support structures, whose sizes depend
   * on the sender's hwloc (6, 11 and 15 bytes for hwloc 2.9).
   *
   * @param xml the XML export, or null for no topology
   * @param discovery the discovery support flags
   * @param cpubind the cpubind support flags
   * @param membind the membind support flags
   */
  // Arrays as components: the record copies them in and out and compares contents.
  @SuppressWarnings("ArrayRecordComponent")
  record Topo(@Nullable String xml, byte[] discovery, byte[] cpubind, byte[] membind)
      implements Value {
    /** No topology: C sends only a NULL string. */
    public static final Topo NONE = new Topo(null, new byte[0], new byte[0], new byte[0]);

    /** Copies the arrays. */
    public Topo {
      discovery = discovery.clone();
      cpubind = cpubind.clone();
      membind = membind.clone();
    }

    @Override
    public byte[] discovery() {
      return discovery.clone();
    }

    @Override
    public byte[] cpubind() {
      return cpubind.clone();
    }

    @Override
    public byte[] membind() {
      return membind.clone();
    }

    @Override
    public DataType type() {
      return DataType.TOPO;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Topo t
          && java.util.Objects.equals(t.xml, xml)
          && Arrays.equals(t.discovery, discovery)
          && Arrays.equals(t.cpubind, cpubind)
          && Arrays.equals(t.membind, membind);
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hashCode(xml) * 31 + Arrays.hashCode(discovery);
    }

    @Override
    public String toString() {
      return "Topo[xml " + (xml == null ? "null" : xml.length() + " chars") + "]";
    }
  }

  /**
   * PMIX_PROC_STATS as 4.2.2 packs it (percent_cpu and peak_vsize never travel).
   *
   * @param node host
   * @param proc process
   * @param pid pid
   * @param cmd command
   * @param state state byte
   * @param time run time
   * @param priority priority
   * @param numThreads thread count (uint16, sent as INT16)
   * @param pss proportional set size
   * @param vsize virtual size
   * @param rss resident set size
   * @param processor processor (uint16, sent as INT16)
   * @param sampleTime when sampled
   */
  record ProcStats(
      @Nullable String node,
      Proc proc,
      int pid,
      @Nullable String cmd,
      int state,
      TimeVal time,
      int priority,
      int numThreads,
      float pss,
      float vsize,
      float rss,
      int processor,
      TimeVal sampleTime)
      implements Value {
    @Override
    public DataType type() {
      return DataType.PROC_STATS;
    }
  }

  /**
   * PMIX_DISK_STATS: the disk name and eleven unsigned 64-bit counters in wire order
   * (reads completed, reads merged, sectors read, ms reading, writes completed, writes merged,
   * sectors written, ms writing, I/Os in progress, ms doing I/O, weighted ms doing I/O).
   *
   * @param disk disk name
   * @param counters the eleven counters
   */
  record DiskStats(@Nullable String disk, List<Long> counters) implements Value {
    /** Checks the counter count. */
    public DiskStats {
      counters = ImmutableLists.copyOf(counters);
      checkArgument(counters.size() == 11, "disk stats have 11 counters");
    }

    @Override
    public DataType type() {
      return DataType.DISK_STATS;
    }
  }

  /**
   * PMIX_NET_STATS: the interface name and six unsigned 64-bit counters in wire order (bytes
   * received, packets received, receive errors, bytes sent, packets sent, send errors).
   *
   * @param netInterface interface name
   * @param counters the six counters
   */
  record NetStats(@Nullable String netInterface, List<Long> counters) implements Value {
    /** Checks the counter count. */
    public NetStats {
      counters = ImmutableLists.copyOf(counters);
      checkArgument(counters.size() == 6, "net stats have 6 counters");
    }

    @Override
    public DataType type() {
      return DataType.NET_STATS;
    }
  }

  /**
   * PMIX_NODE_STATS: the node, eleven floats in wire order (la, la5, la15, total_mem, free_mem,
   * buffers, cached, swap_cached, swap_total, swap_free, mapped), the sample time and the disk and
   * net statistics (a C 4.2.2 peer can only exchange empty lists of those).
   *
   * @param node node name
   * @param loads the eleven floats
   * @param sampleTime when sampled
   * @param diskStats per-disk statistics
   * @param netStats per-interface statistics
   */
  record NodeStats(
      @Nullable String node,
      List<Float> loads,
      TimeVal sampleTime,
      List<DiskStats> diskStats,
      List<NetStats> netStats)
      implements Value {
    /** Checks the float count and copies the lists. */
    public NodeStats {
      loads = ImmutableLists.copyOf(loads);
      checkArgument(loads.size() == 11, "node stats have 11 floats");
      diskStats = ImmutableLists.copyOf(diskStats);
      netStats = ImmutableLists.copyOf(netStats);
    }

    @Override
    public DataType type() {
      return DataType.NODE_STATS;
    }
  }

  /** The UTF-8 length of a string as the wire counts it (bytes plus the NUL). */
  static int wireLength(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length + 1;
  }
}
