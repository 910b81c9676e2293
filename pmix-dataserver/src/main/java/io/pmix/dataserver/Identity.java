package io.pmix.dataserver;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import io.pmix.common.Proc;

/**
 * Who is calling the store: the process, the user the PMIx server authenticated it as, and the
 * facts a range or a lifetime is decided by. The same record describes a publisher, a lookup's
 * requester and an unpublisher. Immutable.
 *
 * <p>The ids are the ones the <em>server</em> established when the process connected (its socket
 * peer credentials), never what a client message claims: ownership and access are decided by them.
 * Ids are unsigned 32-bit values held in an {@code int}; {@link #UNKNOWN} ({@code 0xFFFFFFFF},
 * what PMIx itself uses for "unset") marks one that is not known. The uid must be known; an
 * unknown gid makes ownership and the owner-only access rule fall back to the uid alone.
 *
 * @param proc the calling process
 * @param uid its effective uid
 * @param gid its effective gid, or {@link #UNKNOWN}
 * @param appNumber the number of its application (app context) within its job, or {@link
 *     #UNKNOWN}; an APP-persistent item of an unknown application lasts until its namespace ends
 * @param sessionId the session (allocation) its job runs in, or {@link #UNKNOWN} for the default
 *     session (a DVM with no allocation of its own); processes with equal session ids, unknown
 *     included, are in the same session
 * @param node the name of the PMIx server (daemon) the process sits behind: processes with equal
 *     node names are "local" to each other for {@code PMIX_RANGE_LOCAL}
 */
public record Identity(Proc proc, int uid, int gid, int appNumber, int sessionId, String node) {
  /** An id, application number or session that is not known. */
  public static final int UNKNOWN = -1;

  /** Validates the components. */
  public Identity {
    requireNonNull(proc, "proc");
    requireNonNull(node, "node");
    checkArgument(uid != UNKNOWN, "the uid of a caller must be known");
    checkArgument(!proc.isSpecialRank(), "a caller is a single process, not %s", proc);
  }

  /**
   * A process of the default session on the node {@code ""}, with no application number: enough
   * for a single-node server whose jobs have one application each.
   */
  public static Identity of(Proc proc, int uid, int gid) {
    return new Identity(proc, uid, gid, UNKNOWN, UNKNOWN, "");
  }

  /** This identity with another application number. */
  public Identity withAppNumber(int newAppNumber) {
    return new Identity(proc, uid, gid, newAppNumber, sessionId, node);
  }

  /** This identity in another session. */
  public Identity withSessionId(int newSessionId) {
    return new Identity(proc, uid, gid, appNumber, newSessionId, node);
  }

  /** This identity behind another server. */
  public Identity withNode(String newNode) {
    return new Identity(proc, uid, gid, appNumber, sessionId, newNode);
  }

  /** This identity for another process, with the same ids and placement. */
  public Identity withProc(Proc newProc) {
    return new Identity(newProc, uid, gid, appNumber, sessionId, node);
  }

  @Override
  public String toString() {
    return proc
        + "(uid="
        + Integer.toUnsignedString(uid)
        + ", gid="
        + (gid == UNKNOWN ? "?" : Integer.toUnsignedString(gid))
        + ", app="
        + (appNumber == UNKNOWN ? "?" : Integer.toUnsignedString(appNumber))
        + ", session="
        + (sessionId == UNKNOWN ? "default" : Integer.toUnsignedString(sessionId))
        + ", node="
        + node
        + ")";
  }
}
