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
  BYTE(2),
  STRING(3),
  SIZE(4),
  PID(5),
  INT(6),
  INT8(7),
  INT16(8),
  INT32(9),
  INT64(10),
  UINT(11),
  UINT8(12),
  UINT16(13),
  UINT32(14),
  UINT64(15),
  FLOAT(16),
  DOUBLE(17),
  TIMEVAL(18),
  TIME(19),
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
  PERSIST(30),
  POINTER(31),
  SCOPE(32),
  DATA_RANGE(33),
  COMMAND(34),
  INFO_DIRECTIVES(35),
  DATA_TYPE(36),
  PROC_STATE(37),
  PROC_INFO(38),
  DATA_ARRAY(39),
  PROC_RANK(40),
  QUERY(41),
  COMPRESSED_STRING(42),
  ALLOC_DIRECTIVE(43),
  /** Named by the headers, never registered: packing it fails with UNKNOWN_DATA_TYPE. */
  INFO_ARRAY(44),
  IOF_CHANNEL(45),
  ENVAR(46),
  COORD(47),
  REGATTR(48),
  REGEX(49),
  JOB_STATE(50),
  LINK_STATE(51),
  PROC_CPUSET(52),
  GEOMETRY(53),
  DEVICE_DIST(54),
  ENDPOINT(55),
  TOPO(56),
  DEVTYPE(57),
  LOCTYPE(58),
  COMPRESSED_BYTE_OBJECT(59),
  PROC_NSPACE(60),
  PROC_STATS(61),
  DISK_STATS(62),
  NET_STATS(63),
  NODE_STATS(64),
  DATA_BUFFER(65),
  STOR_MEDIUM(66),
  STOR_ACCESS(67),
  STOR_PERSIST(68),
  STOR_ACCESS_TYPE(69);

  private static final DataType[] BY_CODE = new DataType[70];

  static {
    for (DataType t : values()) {
      BY_CODE[t.code] = t;
    }
  }

  private final int code;

  DataType(int code) {
    this.code = code;
  }

  /** The wire code. */
  public int code() {
    return code;
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
