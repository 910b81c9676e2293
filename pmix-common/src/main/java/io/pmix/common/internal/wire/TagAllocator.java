package io.pmix.common.internal.wire;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.HashSet;
import java.util.Set;

/**
 * Hands out the dynamic tags a connector puts on its requests, the way OpenPMIx 4.2.2 does: one
 * counter, incremented before use (first tag 101), skipping 0xFFFFFFFF by wrapping to 100.
 *
 * <p>Unlike the C counter, this one remembers which tags are still waiting for their reply and
 * never hands such a tag out again: after a wrap, a long-running request would otherwise receive
 * somebody else's reply. {@link #release} a tag when its reply has arrived, when the request turned
 * out to have no reply (DEREGEVENTS), or when the connection is gone.
 *
 * <p>4.2.2 shares one counter between all connections of a process; {@link #processWide()} is that
 * counter. Thread-safe: requests may be issued from several event loops of one process.
 */
@ThreadSafe
public final class TagAllocator {
  private static final TagAllocator PROCESS_WIDE = new TagAllocator();

  /** How many distinct dynamic tags exist: 100 to 0xFFFFFFFE. */
  private static final long DYNAMIC_TAG_COUNT = 0xFFFFFFFFL - Tags.DYNAMIC_BASE;

  @GuardedBy("this")
  private int last;

  @GuardedBy("this")
  private final Set<Integer> outstanding = new HashSet<>();

  /** A counter of its own (tests, or one counter per connection as OpenPMIx 6 does). */
  public TagAllocator() {
    this(Tags.DYNAMIC_BASE);
  }

  /** A counter whose previous tag was {@code last}, so tests can reach the wrap quickly. */
  TagAllocator(int last) {
    this.last = last;
  }

  /** The counter shared by every connection of this process, as in OpenPMIx 4.2.2. */
  public static TagAllocator processWide() {
    return PROCESS_WIDE;
  }

  /**
   * The next free dynamic tag, now outstanding until {@link #release released}.
   *
   * @throws PmixException with {@code ERR_OUT_OF_RESOURCE} if every dynamic tag is outstanding
   */
  public synchronized int allocate() {
    for (long tried = 0; tried < DYNAMIC_TAG_COUNT; tried++) {
      last = successor(last);
      if (outstanding.add(last)) {
        return last;
      }
    }
    throw new PmixException(
        Status.ERR_OUT_OF_RESOURCE, "every dynamic tag has a reply outstanding");
  }

  /** For tests: makes the counter continue after {@code last}, as if a wrap had happened. */
  synchronized void rewind(int last) {
    this.last = last;
  }

  /** Makes {@code tag} available again; releasing a tag that is not outstanding does nothing. */
  public synchronized void release(int tag) {
    outstanding.remove(tag);
  }

  /** Whether {@code tag} was allocated and not yet released. */
  public synchronized boolean isOutstanding(int tag) {
    return outstanding.contains(tag);
  }

  /** How many tags are outstanding, for diagnostics and tests. */
  public synchronized int outstandingCount() {
    return outstanding.size();
  }

  /**
   * The tag after {@code tag}: the C code increments and, on reaching 0xFFFFFFFF, uses 100 instead,
   * so 0xFFFFFFFF is never on the wire and 100 is, after a wrap.
   */
  static int successor(int tag) {
    int next = tag + 1;
    return next == 0xFFFFFFFF ? Tags.DYNAMIC_BASE : next;
  }
}
