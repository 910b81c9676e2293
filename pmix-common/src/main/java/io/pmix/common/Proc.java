package io.pmix.common;

import static io.pmix.common.internal.Checks.checkArgument;
import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;

/**
 * A process name: namespace and rank ({@code pmix_proc_t}). Immutable.
 *
 * <p>The rank is an unsigned 32-bit number held in an {@code int}; the special ranks are the
 * {@code RANK_*} constants (all at or above {@link #RANK_VALID} when read unsigned).
 *
 * @param nspace the namespace, at most {@value #MAX_NSLEN} bytes of UTF-8
 * @param rank the rank, unsigned 32-bit
 */
public record Proc(String nspace, int rank) implements Value {
  /** The longest namespace the C structure holds, in bytes. */
  public static final int MAX_NSLEN = 255;

  /** No rank given ({@code PMIX_RANK_UNDEF}). */
  public static final int RANK_UNDEF = 0xffffffff;
  /** Every rank of the namespace ({@code PMIX_RANK_WILDCARD}). */
  public static final int RANK_WILDCARD = 0xfffffffe;
  /** The node rather than a process ({@code PMIX_RANK_LOCAL_NODE}). */
  public static final int RANK_LOCAL_NODE = 0xfffffffd;
  /** Not a valid rank ({@code PMIX_RANK_INVALID}). */
  public static final int RANK_INVALID = 0xfffffffc;
  /** The local peers of the namespace ({@code PMIX_RANK_LOCAL_PEERS}). */
  public static final int RANK_LOCAL_PEERS = 0xfffffffb;
  /** Ranks at or above this value (unsigned) are special ({@code PMIX_RANK_VALID}). */
  public static final int RANK_VALID = 0xffffffcd;

  /** Validates the namespace. */
  public Proc {
    requireNonNull(nspace, "nspace");
    // At most 3 UTF-8 bytes a char: a short name needs no encoding to be checked (every Proc a
    // request names is made here, so the common case stays cheap).
    if (nspace.length() * 3 > MAX_NSLEN) {
      checkArgument(
          nspace.getBytes(StandardCharsets.UTF_8).length <= MAX_NSLEN,
          "namespace longer than %s bytes",
          MAX_NSLEN);
    }
    checkArgument(nspace.indexOf('\0') < 0, "namespace contains NUL");
  }

  /** A process of this namespace and rank. */
  public static Proc of(String nspace, int rank) {
    return new Proc(nspace, rank);
  }

  /** Every process of a namespace. */
  public static Proc wildcard(String nspace) {
    return new Proc(nspace, RANK_WILDCARD);
  }

  /** Whether the rank is one of the special values rather than a process rank. */
  public boolean isSpecialRank() {
    return Integer.compareUnsigned(rank, RANK_VALID) >= 0;
  }

  @Override
  public DataType type() {
    return DataType.PROC;
  }

  /** The rank as C prints it: a decimal number or the special rank's name. */
  public static String rankToString(int rank) {
    switch (rank) {
      case RANK_UNDEF:
        return "UNDEF";
      case RANK_WILDCARD:
        return "WILDCARD";
      case RANK_LOCAL_NODE:
        return "LOCAL_NODE";
      case RANK_INVALID:
        return "INVALID";
      case RANK_LOCAL_PEERS:
        return "LOCAL_PEERS";
      default:
        return Integer.toUnsignedString(rank);
    }
  }

  // equals and hashCode are written out rather than left to the record's generated ones: those
  // run through java.lang.runtime.ObjectMethods' method handles, which a cold JVM interprets at
  // some 10x the cost of plain code, and Proc is the key of every map on the server's request path
  // (docs/architecture.md, "Start-up of pmixrun"). Same contract as the record's: both components.

  @Override
  public boolean equals(Object o) {
    return o instanceof Proc p && rank == p.rank && nspace.equals(p.nspace);
  }

  @Override
  public int hashCode() {
    return 31 * nspace.hashCode() + rank;
  }

  @Override
  public String toString() {
    return nspace + ":" + rankToString(rank);
  }
}
