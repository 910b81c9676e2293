package io.pmix.common;

import java.util.Optional;

/**
 * Every {@code pmix_data_type_t} code of OpenPMIx 4.2.2, with the name {@code pmix_common.h} gives it.
 *
 * <p>The code is what travels on the wire (an unsigned 16-bit varint). Codes 29 (MODEX) and 44
 * (INFO_ARRAY) are named by the C headers but not registered with any codec module, so they cannot
 * be packed; {@link #isRegistered()} says so. Codes 60 to 69 exist only in the {@code v41} module.
 * This enum is immutable and safe to share between threads.
 */
public enum DataType {
    UNDEF(0),
    BOOL(1),
  BYTE(2, Kind.UNSIGNED, 8),
    STRING(3),
  SIZE(4, Kind.UNSIGNED, 64),
  PID(5, Kind.SIGNED, 32),
  INT(6, Kind.SIGNED, 32),
  INT8(7, Kind.SIGNED, 8),
  INT16(8, Kind.SIGNED, 16),
  INT32(9, Kind.SIGNED, 32),
  INT64(10, Kind.SIGNED, 64),
  UINT(11, Kind.UNSIGNED, 32),
  UINT8(12, Kind.UNSIGNED, 8),
  UINT16(13, Kind.UNSIGNED, 16),
  UINT32(14, Kind.UNSIGNED, 32),
  UINT64(15, Kind.UNSIGNED, 64),
    FLOAT(16),
    DOUBLE(17),
    TIMEVAL(18),
  TIME(19, Kind.SIGNED, 64),
    STATUS(20),
    VALUE(21),
    PROC(22),
    APP(23),
    INFO(24),
    PDATA(25),
  /** Deprecated in the C headers but used on the wire by commit and get traffic. */
    BUFFER(26),
    BYTE_OBJECT(27),
    KVAL(28),
  /** Named by the headers, never registered: packing it fails with UNKNOWN_DATA_TYPE. */
    MODEX(29),
  PERSIST(30, Kind.UNSIGNED, 8),
    POINTER(31),
  SCOPE(32, Kind.UNSIGNED, 8),
  DATA_RANGE(33, Kind.UNSIGNED, 8),
  COMMAND(34, Kind.UNSIGNED, 8),
  INFO_DIRECTIVES(35, Kind.UNSIGNED, 32),
  DATA_TYPE(36, Kind.UNSIGNED, 16),
  PROC_STATE(37, Kind.UNSIGNED, 8),
    PROC_INFO(38),
    DATA_ARRAY(39),
  PROC_RANK(40, Kind.UNSIGNED, 32),
    QUERY(41),
    COMPRESSED_STRING(42),
  ALLOC_DIRECTIVE(43, Kind.UNSIGNED, 8),
  /** Named by the headers, never registered: packing it fails with UNKNOWN_DATA_TYPE. */
    INFO_ARRAY(44),
  IOF_CHANNEL(45, Kind.UNSIGNED, 16),
    ENVAR(46),
    COORD(47),
    REGATTR(48),
    REGEX(49),
  JOB_STATE(50, Kind.UNSIGNED, 8),
  LINK_STATE(51, Kind.UNSIGNED, 8),
    PROC_CPUSET(52),
    GEOMETRY(53),
    DEVICE_DIST(54),
    ENDPOINT(55),
    TOPO(56),
  DEVTYPE(57, Kind.UNSIGNED, 64),
  LOCTYPE(58, Kind.UNSIGNED, 16),
    COMPRESSED_BYTE_OBJECT(59),
    PROC_NSPACE(60),
    PROC_STATS(61),
    DISK_STATS(62),
    NET_STATS(63),
    NODE_STATS(64),
    DATA_BUFFER(65),
  STOR_MEDIUM(66, Kind.UNSIGNED, 64),
  STOR_ACCESS(67, Kind.UNSIGNED, 64),
  STOR_PERSIST(68, Kind.UNSIGNED, 64),
  STOR_ACCESS_TYPE(69, Kind.UNSIGNED, 16);

  private static final DataType[] BY_CODE = new DataType[70];

  static {
    for (DataType t : values()) {
      BY_CODE[t.code] = t;
    }
  }

  /** Whether a type's values are integers of a fixed wire width, and if so of which sign. */
  public enum Kind {
    /** Not an integer of its own width: a string, a struct, STATUS, BOOL, ... */
    OTHER,
    /** A signed integer (held as {@link Value.Int}). */
    SIGNED,
    /** An unsigned integer or an unsigned enum (held as {@link Value.UInt}). */
    UNSIGNED
  }

  private final int code;
  private final Kind kind;
  private final int bits;

  DataType(int code) {
    this(code, Kind.OTHER, 0);
  }

  /**
   * The one table of integer widths: what C's type is ({@code int8_t}, {@code pmix_rank_t},
   * {@code pmix_data_range_t}, ...) fixes how many bits its values have on the wire, whether
   * packed fixed-width (native psquash) or as a varint that must not be wider (flex128).
   */
  DataType(int code, Kind kind, int bits) {
    this.code = code;
    this.kind = kind;
    this.bits = bits;
  }

  /** The wire code. */
  public int code() {
    return code;
  }

  /** Whether this is a signed or an unsigned integer type, or neither. */
  public Kind kind() {
    return kind;
  }

  /** Whether values of this type are signed integers of {@link #bits()} bits. */
  public boolean isSignedInteger() {
    return kind == Kind.SIGNED;
  }

  /** Whether values of this type are unsigned integers (or enums) of {@link #bits()} bits. */
  public boolean isUnsignedInteger() {
    return kind == Kind.UNSIGNED;
  }

  /**
   * The width in bits (8, 16, 32 or 64) of an integer type's values, as C declares the type.
   *
   * @throws IllegalStateException if this is not an integer type ({@link Kind#OTHER})
   */
  public int bits() {
    if (kind == Kind.OTHER) {
      throw new IllegalStateException(this + " is not an integer type");
    }
    return bits;
  }

  /** The C name, e.g. {@code PMIX_STRING}. */
  public String pmixName() {
    return "PMIX_" + name();
  }

  /** False for MODEX and INFO_ARRAY, which no 4.2.2 codec module registers. */
  public boolean isRegistered() {
    return this != MODEX && this != INFO_ARRAY;
  }

  /** True for the codes only the {@code v41} module registers (60 to 69). */
  public boolean isV41Only() {
    return code >= 60;
  }

  /** The type with this wire code, if 4.2.2 defines one. */
  public static Optional<DataType> fromCode(int code) {
    return code >= 0 && code < BY_CODE.length ? Optional.ofNullable(BY_CODE[code]) : Optional.empty();
  }

  /**
   * Parses a C name ({@code PMIX_STRING}) or the bare name ({@code STRING}), case-insensitively.
   *
   * @throws IllegalArgumentException if no type has that name
   */
  public static DataType fromName(String name) {
    String n = name.trim().toUpperCase(java.util.Locale.ROOT);
    if (n.startsWith("PMIX_")) {
      n = n.substring(5);
    }
    return valueOf(n);
  }
}
