package io.pmix.common;

import java.util.Optional;

/**
 * Which processes published data or an event reaches ({@code pmix_data_range_t}, one byte on the
 * wire as the DATA_RANGE type). The codes are those of OpenPMIx 4.2.2 {@code pmix_common.h}.
 * Immutable.
 */
public enum DataRange {
  /** No range given ({@code PMIX_RANGE_UNDEF}). */
  UNDEF(0),
  /** Meant for the host resource manager ({@code PMIX_RANGE_RM}). */
  RM(1),
  /** Processes on the local node ({@code PMIX_RANGE_LOCAL}). */
  LOCAL(2),
  /** Processes of the same namespace ({@code PMIX_RANGE_NAMESPACE}). */
  NAMESPACE(3),
  /** Processes of the same session ({@code PMIX_RANGE_SESSION}). */
  SESSION(4),
  /** Every process ({@code PMIX_RANGE_GLOBAL}). */
  GLOBAL(5),
  /** The processes named in a {@code pmix.evrange} info ({@code PMIX_RANGE_CUSTOM}). */
  CUSTOM(6),
  /** The calling process only ({@code PMIX_RANGE_PROC_LOCAL}). */
  PROC_LOCAL(7),
  /** Not a valid range ({@code PMIX_RANGE_INVALID}). */
  INVALID(255);

  private final int code;

  DataRange(int code) {
    this.code = code;
  }

  /** The wire code. */
  public int code() {
    return code;
  }

  /** The range with this wire code, if 4.2.2 defines one. */
  public static Optional<DataRange> fromCode(int code) {
    for (DataRange r : values()) {
      if (r.code == code) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }

  /** This range as a PMIx value of type DATA_RANGE. */
  public Value toValue() {
    return Value.unsigned(DataType.DATA_RANGE, code);
  }
}
