package io.pmix.server.internal.lifecycle;

import io.pmix.common.Proc;
import io.pmix.common.codec.WireFormat;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.ServerConnection;

/**
 * One connection's peer ({@code pmix_peer_t}): the connection, the identity it proved, the format it
 * speaks and its lifecycle state (docs/lifecycle.md §6.2.4.1). Held in the {@link Registry}'s
 * slot array at {@link #index} from connection until it is freed: at once when it is a pure tool
 * or stranded (no rank names it), else as an inert tombstone (or {@link
 * ServerSnapshot.PeerState#LOST lost} peer) until its rank reconnects or is deregistered.
 *
 * <p>Only {@link PeerLifecycle} changes its state. The client-scoped registrations a peer holds
 * (events, forwarding, parked GETs) are kept by the parts that own them, keyed by this object, and
 * pruned when {@link PeerLifecycle} says so, so a new cycle's fresh peer starts clean. Progress
 * thread only.
 */
public final class Peer {
  private final int index;
  private final ServerConnection connection;
  private final Namespace ns;
  private final RankInfo info;
  private final Proc proc;
  private final ServerSnapshot.Role role;
  private final WireFormat format;
  private final String version;
  private ServerSnapshot.PeerState state = ServerSnapshot.PeerState.ACTIVE;
  /**
   * Whether the socket is gone (the peer can no longer be sent to): set when the close was
   * accounted for, or when the server closed it itself (deregistration, shutdown).
   */
  private boolean closed;
  /** Whether FINALIZE counted this peer in its namespace's finalized count. */
  private boolean countedFinalized;

  Peer(
      int index,
      ServerConnection connection,
      Namespace ns,
      RankInfo info,
      ServerSnapshot.Role role,
      WireFormat format,
      String version) {
    this.index = index;
    this.connection = connection;
    this.ns = ns;
    this.info = info;
    this.proc = Proc.of(ns.name(), info.rank());
    this.role = role;
    this.format = format;
    this.version = version;
  }

  /** Its slot in the registry's array. */
  public int index() {
    return index;
  }

  /** The connection. */
  public ServerConnection connection() {
    return connection;
  }

  /** The namespace it connected in. */
  public Namespace ns() {
    return ns;
  }

  /** The registration of the rank it serves. */
  public RankInfo info() {
    return info;
  }

  /** Its identity. */
  public Proc proc() {
    return proc;
  }

  /** What kind of connector it is. */
  public ServerSnapshot.Role role() {
    return role;
  }

  /** The codec it speaks. */
  public WireFormat format() {
    return format;
  }

  /** The PMIx version string its connect request carried. */
  public String version() {
    return version;
  }

  /**
   * The major number of {@link #version()}: its leading digits, as C's strtoul reads them (0 when
   * there are none or too many). Where a command's layout changed with the major version (the
   * group commands at 5.0 and 6.0), this says which one the peer speaks.
   */
  public int majorVersion() {
    int i = 0;
    while (i < version.length() && i < 9 && Character.isDigit(version.charAt(i))) {
      i++;
    }
    return i == 0 || (i < version.length() && Character.isDigit(version.charAt(i)))
        ? 0
        : Integer.parseInt(version.substring(0, i));
  }

  /** Where it is in its lifecycle. */
  public ServerSnapshot.PeerState state() {
    return state;
  }

  /** Whether its socket is gone (closed by the peer, or by the server). */
  public boolean closed() {
    return closed;
  }

  /** FINALIZE was received: finalizing or tombstone (C's {@code peer->finalized}). */
  public boolean finalized() {
    return state == ServerSnapshot.PeerState.FINALIZING
        || state == ServerSnapshot.PeerState.TOMBSTONE;
  }

  /** Connected and not finalized: the only state that receives anything but its FINALIZE reply. */
  public boolean active() {
    return state == ServerSnapshot.PeerState.ACTIVE && !closed;
  }

  /**
   * Whether the peer follows the client lifecycle (tombstoned at close, counted as finalized):
   * clients, singletons, and tools or launchers whose rank the host registered as a client (C's
   * {@code PMIX_PEER_IS_CLIENT}). A pure tool is freed at close instead.
   */
  public boolean clientSemantics() {
    return role == ServerSnapshot.Role.CLIENT
        || role == ServerSnapshot.Role.SINGLETON
        || info.hostRegistered();
  }

  boolean countedFinalized() {
    return countedFinalized;
  }

  void state(ServerSnapshot.PeerState s) {
    state = s;
  }

  void markClosed() {
    closed = true;
  }

  void countFinalized() {
    countedFinalized = true;
  }

  @Override
  public String toString() {
    return "peer[" + index + " " + proc + " " + state + "]";
  }
}
