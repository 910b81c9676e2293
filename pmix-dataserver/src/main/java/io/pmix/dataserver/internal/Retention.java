package io.pmix.dataserver.internal;

import io.pmix.common.PmixException;
import io.pmix.common.Status;

/**
 * How long a published item is kept ({@code pmix_persistence_t}), with the lifetime each one ends
 * at.
 *
 * <p>{@link #NSPACE} has the code 5, which OpenPMIx defines after 4.2.2 ({@code
 * PMIX_PERSIST_NSPACE}); a 4.2.2 client cannot name it, but it is the default, and a newer client
 * naming it is understood.
 */
public enum Retention {
  /** Until unpublished, or idle for the timeout ({@code PMIX_PERSIST_INDEF}). */
  INDEF(0, Integer.MAX_VALUE),
  /** Until the first lookup that returns it, or idle for the timeout. */
  FIRST_READ(1, Integer.MAX_VALUE),
  /** Until the publishing process ends. */
  PROC(2, 1),
  /** Until the publishing application (app context) ends. */
  APP(3, 2),
  /** Until the session the publisher runs in ends. */
  SESSION(4, 4),
  /** Until the publishing process's namespace (job) ends: the default. */
  NSPACE(5, 3);

  /** {@code PMIX_PERSIST_INVALID}: "none given", which gets the default. */
  public static final int INVALID_CODE = 255;

  /** The persistence of a publish that names none. */
  public static final Retention DEFAULT = NSPACE;

  private final int code;
  // The lifetimes nest PROC < APP < NSPACE < SESSION; the codes do not follow that order
  // (INDEF is 0, NSPACE 5), so the nesting is spelled out instead of derived.
  private final int lifetimeRank;

  Retention(int code, int lifetimeRank) {
    this.code = code;
    this.lifetimeRank = lifetimeRank;
  }

  /** The wire code. */
  public int code() {
    return code;
  }

  /**
   * Whether an item kept this long goes when {@code horizon} ends for it. INDEF and FIRST_READ
   * name no lifetime, so no horizon ends them.
   */
  public boolean endsWith(Horizon horizon) {
    return lifetimeRank <= horizon.rank;
  }

  /** Whether the idle timeout applies: only to the two persistences that name no lifetime. */
  public boolean idleBounded() {
    return this == INDEF || this == FIRST_READ;
  }

  /**
   * The persistence with this code; {@code PMIX_PERSIST_INVALID} gives the default.
   *
   * @throws PmixException with {@code PMIX_ERR_BAD_PARAM} for any other unknown code
   */
  public static Retention fromCode(long code) {
    if (code == INVALID_CODE) {
      return DEFAULT;
    }
    for (Retention r : values()) {
      if (r.code == code) {
        return r;
      }
    }
    throw new PmixException(Status.ERR_BAD_PARAM, "unknown persistence " + code);
  }

  /** The name PMIx gives this persistence. */
  public String pmixName() {
    return "PMIX_PERSIST_" + name();
  }

  /** A lifetime that can end, for the processes it covers. */
  public enum Horizon {
    /** One process ended. */
    PROC(1),
    /** One application of a job ended. */
    APP(2),
    /** A namespace (job) ended. */
    NSPACE(3),
    /** A session ended. */
    SESSION(4);

    private final int rank;

    Horizon(int rank) {
      this.rank = rank;
    }
  }
}
