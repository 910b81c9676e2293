package io.pmix.common;

import java.util.Optional;

/**
 * Who may read a value a process puts ({@code pmix_scope_t}, one byte on the wire as the SCOPE
 * type). The codes are those of OpenPMIx 4.2.2 {@code pmix_common.h}. Immutable.
 */
public enum Scope {
  /** No scope given ({@code PMIX_SCOPE_UNDEF}). */
  UNDEF(0),
  /** Shared with processes on the same node ({@code PMIX_LOCAL}). */
  LOCAL(1),
  /** Shared with processes on other nodes ({@code PMIX_REMOTE}). */
  REMOTE(2),
  /** Shared with every process ({@code PMIX_GLOBAL}). */
  GLOBAL(3),
  /** Kept in the putting process only, never sent ({@code PMIX_INTERNAL}). */
  INTERNAL(4);

  private final int code;

  Scope(int code) {
    this.code = code;
  }

  /** The wire code. */
  public int code() {
    return code;
  }

  /** Whether a value of this scope is visible to processes on the putter's node. */
  public boolean reachesLocal() {
    return this == LOCAL || this == GLOBAL;
  }

  /** Whether a value of this scope is visible to processes on other nodes. */
  public boolean reachesRemote() {
    return this == REMOTE || this == GLOBAL;
  }

  /** The scope with this wire code, if 4.2.2 defines one. */
  public static Optional<Scope> fromCode(int code) {
    for (Scope s : values()) {
      if (s.code == code) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /** This scope as a PMIx value of type SCOPE. */
  public Value toValue() {
    return Value.unsigned(DataType.SCOPE, code);
  }
}
