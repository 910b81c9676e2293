package io.pmix.common;

import java.util.Optional;

/**
 * How long published data is kept ({@code pmix_persistence_t}, one byte on the wire as the
 * PERSIST type). The codes are those of OpenPMIx 4.2.2 {@code pmix_common.h}. Immutable.
 */
public enum Persistence {
  /** Until it is unpublished ({@code PMIX_PERSIST_INDEF}). */
  INDEFINITE(0),
  /** Until it is first looked up ({@code PMIX_PERSIST_FIRST_READ}). */
  FIRST_READ(1),
  /** Until the publishing process ends ({@code PMIX_PERSIST_PROC}). */
  PROC(2),
  /** Until the publishing application ends ({@code PMIX_PERSIST_APP}). */
  APP(3),
  /** Until the session ends ({@code PMIX_PERSIST_SESSION}). */
  SESSION(4),
  /** Not a valid persistence ({@code PMIX_PERSIST_INVALID}). */
  INVALID(255);

  private final int code;

  Persistence(int code) {
    this.code = code;
  }

  /** The wire code. */
  public int code() {
    return code;
  }

  /** The persistence with this wire code, if 4.2.2 defines one. */
  public static Optional<Persistence> fromCode(int code) {
    for (Persistence p : values()) {
      if (p.code == code) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /** This persistence as a PMIx value of type PERSIST. */
  public Value toValue() {
    return Value.unsigned(DataType.PERSIST, code);
  }
}
