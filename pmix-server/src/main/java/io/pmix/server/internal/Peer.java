package io.pmix.server.internal;

import io.netty.channel.Channel;
import io.pmix.common.Proc;
import io.pmix.common.codec.WireFormat;
import io.pmix.server.ServerSnapshot;
import java.util.HashSet;
import java.util.Set;

/**
 * One connection's peer ({@code pmix_peer_t}): the channel, the identity it proved, the format it
 * speaks and its lifecycle state. Held in the server's slot array at {@link #index}. Progress
 * thread only.
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
  /** Whether the socket is gone (the peer can no longer be sent to). */
  boolean closed;
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

  boolean finalized() {
    return state != ServerSnapshot.PeerState.ACTIVE;
  }

  @Override
  public String toString() {
    return "peer[" + index + " " + proc + " " + state + "]";
  }
}
