package io.pmix.dataserver.internal;

import io.pmix.common.DataRange;
import io.pmix.dataserver.Identity;

/**
 * Ranges as sets of processes. A range word names a set only once it is anchored at a process:
 * {@code PMIX_RANGE_NAMESPACE} seen from a process of namespace A is "the processes of A". Every
 * range supported here is an equivalence relation on processes (same session, same namespace,
 * same server, same process, or everybody), so "does the set anchored at {@code a} contain {@code
 * b}" and "do {@code a} and {@code b} anchor the same set" are one question.
 *
 * <p>{@code PMIX_RANGE_CUSTOM} is the publisher's accessor list: as a set of processes it is
 * everybody, and the access check narrows it.
 */
public final class Ranges {
  private Ranges() {}

  /**
   * Whether the set {@code range} names when anchored at {@code anchor} contains {@code subject}.
   * Used both ways: the publisher's range (anchor = publisher, subject = requester) and the
   * requester's search range (anchor = requester, subject = publisher).
   *
   * @throws IllegalArgumentException for a range that is no set (UNDEF, RM, INVALID): those are
   *     replaced or refused when directives are read
   */
  public static boolean contains(DataRange range, Identity anchor, Identity subject) {
    return switch (range) {
      case GLOBAL, CUSTOM -> true;
      case SESSION -> anchor.sessionId() == subject.sessionId();
      case NAMESPACE -> anchor.proc().nspace().equals(subject.proc().nspace());
      case LOCAL -> anchor.node().equals(subject.node());
      case PROC_LOCAL -> anchor.proc().equals(subject.proc());
      default -> throw new IllegalArgumentException(range + " names no set of processes");
    };
  }

  /**
   * Whether two publications on {@code range} by {@code a} and {@code b} are on the same set of
   * processes: the duplicate rule's "same range".
   */
  public static boolean sameSet(DataRange range, Identity a, Identity b) {
    return contains(range, a, b);
  }
}
