package io.pmix.server.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connections that have not completed the handshake yet (no connect request decided), and
 * their cap: idle sockets that never authenticate cannot exhaust the server's descriptors (issue
 * #19: 21,000 of them did). A connection counts from its accept until it is accepted as a peer or
 * closed. Thread-safe.
 */
public final class PendingHandshakes {
  private final int limit;
  private final AtomicInteger count = new AtomicInteger();

  /**
   * A cap of {@code limit} connections.
   *
   * @throws IllegalArgumentException if the limit is not positive
   */
  public PendingHandshakes(int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive: " + limit);
    }
    this.limit = limit;
  }

  /** The cap. */
  public int limit() {
    return limit;
  }

  /** The connections counted now. */
  public int count() {
    return count.get();
  }

  /** Counts a new connection if the cap allows it; false (not counted) otherwise. */
  boolean tryEnter() {
    while (true) {
      int now = count.get();
      if (now >= limit) {
        return false;
      }
      if (count.compareAndSet(now, now + 1)) {
        return true;
      }
    }
  }

  /** A counted connection completed its handshake or closed. */
  void leave() {
    count.decrementAndGet();
  }
}
