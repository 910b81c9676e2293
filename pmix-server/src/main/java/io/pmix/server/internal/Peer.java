package io.pmix.server.internal;

import io.netty.channel.Channel;
import io.pmix.common.Proc;
import io.pmix.common.codec.WireFormat;
import io.pmix.server.ServerSnapshot;
import java.util.HashSet;
import java.util.Set;

/**
 * One connection's peer ({@code pmix_peer_t}): the channel, the identity it proved, the format it
 * speaks and its lifecycle state (init-finalize-lifecycle.txt section 6.2.4.1). Held in the
 * server's slot array at {@link #index} from connection until it is freed: at once when it is a
 * pure tool or stranded (no rank names it), else as an inert tombstone (or {@link
 * ServerSnapshot.PeerState#LOST lost} peer) until its rank reconnects or is deregistered. Every
 * client-scoped registration lives here, so a new cycle's fresh peer starts clean. Progress thread
 * only.
 */
final class Peer {
  final int index;
  final Channel channel;
  final Namespace ns;
  final RankInfo info;
  final Proc proc;
  final ServerSnapshot.Role role;
  final WireFormat format;
  final String version;
  ServerSnapshot.PeerState state = ServerSnapshot.PeerState.ACTIVE;
  /**
   * Whether the socket is gone (the peer can no longer be sent to): set when the close was
   * accounted for, or when the server closed it itself (deregistration, shutdown).
   */
  boolean closed;
  /** Whether FINALIZE counted this peer in its namespace's {@code nfinalized}. */
  boolean countedFinalized;
  /** Event codes the peer registered (empty with {@link #defaultEvents}: all events). */
  final Set<Integer> eventCodes = new HashSet<>();
  boolean defaultEvents;

  Peer(
      int index,
      Channel channel,
      Namespace ns,
      RankInfo info,
      ServerSnapshot.Role role,
      WireFormat format,
      String version) {
    this.index = index;
    this.channel = channel;
    this.ns = ns;
    this.info = info;
    this.proc = Proc.of(ns.name, info.rank);
    this.role = role;
    this.format = format;
    this.version = version;
  }

  /** FINALIZE was received: finalizing or tombstone (C's {@code peer->finalized}). */
  boolean finalized() {
    return state == ServerSnapshot.PeerState.FINALIZING
        || state == ServerSnapshot.PeerState.TOMBSTONE;
  }

  /** Connected and not finalized: the only state that receives anything but its FINALIZE reply. */
  boolean active() {
    return state == ServerSnapshot.PeerState.ACTIVE && !closed;
  }

  /**
   * Whether the peer follows the client lifecycle (tombstoned at close, counted in {@code
   * nfinalized}): clients, singletons, and tools or launchers whose rank the host registered as
   * a client (C's {@code PMIX_PEER_IS_CLIENT}). A pure tool is freed at close instead.
   */
  boolean clientSemantics() {
    return role == ServerSnapshot.Role.CLIENT
        || role == ServerSnapshot.Role.SINGLETON
        || info.hostRegistered;
  }

  @Override
  public String toString() {
    return "peer[" + index + " " + proc + " " + state + "]";
  }
}
