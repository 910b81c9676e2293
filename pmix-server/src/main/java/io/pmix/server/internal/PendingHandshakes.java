package io.pmix.server.internal;

import io.pmix.common.internal.LazyLogger;
import java.lang.System.Logger.Level;
import java.util.Iterator;
import java.util.LinkedHashSet;
import org.jspecify.annotations.Nullable;

/**
 * The connections that have not completed the handshake yet (no connect request decided), and
 * their cap: idle sockets that never authenticate cannot exhaust the server's descriptors (issue
 * #19: 21,000 of them did). A connection counts from its accept until it is accepted as a peer or
 * closed.
 *
 * <p>At the cap a newcomer closes the <em>oldest connection that has not sent its whole connect
 * request</em> and takes its place; only when every counted connection has sent its request (each
 * awaits a decision: the socket owner, the host's identity for a tool) is the newcomer closed
 * instead. Closing the newcomer always (as before, issue #18) let any local process lock every
 * job on the node out for the handshake timeout by holding the cap full of idle sockets: a C
 * client was refused at once and its PMIx_Init failed. A real connector sends its request as
 * soon as it connects, so to push it out a flood must open the whole cap's worth of
 * connections in that moment. Thread-safe: connections of several event loops enter and leave.
 */
public final class PendingHandshakes {
  private static final System.Logger LOG = LazyLogger.of(PendingHandshakes.class);

  /** One counted connection. */
  static final class Ticket {
    private final ServerConnection connection;
    private volatile boolean requestSeen;

    private Ticket(ServerConnection connection) {
      this.connection = connection;
    }
  }

  private final int limit;
  /** The counted connections, oldest first. Guarded by {@code this}. */
  private final LinkedHashSet<Ticket> waiting = new LinkedHashSet<>();

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
  public synchronized int count() {
    return waiting.size();
  }

  /**
   * Counts a new connection; at the cap the oldest one still sending its request is closed to
   * make room. Null (not counted) when every counted connection has sent its request.
   */
  @Nullable Ticket enter(ServerConnection connection) {
    Ticket t = new Ticket(connection);
    Ticket evicted = null;
    synchronized (this) {
      if (waiting.size() >= limit) {
        for (Iterator<Ticket> it = waiting.iterator(); it.hasNext(); ) {
          Ticket old = it.next();
          if (!old.requestSeen) {
            it.remove();
            evicted = old;
            break;
          }
        }
        if (evicted == null) {
          return null;
        }
      }
      waiting.add(t);
    }
    if (evicted != null) {
      LOG.log(Level.INFO, "{0} connections await their handshake; closing the oldest that has"
          + " not sent its request, {1}", limit, evicted.connection);
      evicted.connection.close();
    }
    return t;
  }

  /** The ticket's connection has sent its whole connect request: it is no longer evicted. */
  void requestSeen(Ticket t) {
    t.requestSeen = true;
  }

  /** A counted connection completed its handshake or closed (again: no effect). */
  synchronized void leave(Ticket t) {
    waiting.remove(t);
  }
}
