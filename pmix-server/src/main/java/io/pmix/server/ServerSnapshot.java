package io.pmix.server;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A read-only copy of a {@link PMIxServer}'s connection and namespace bookkeeping, taken on the
 * progress thread at one instant: for tests, a launcher's report and operators. Immutable.
 *
 * @param peers every occupied slot of the server's peer array, in slot order
 * @param namespaces every namespace the server knows, by name
 */
public record ServerSnapshot(List<PeerView> peers, Map<String, NamespaceView> namespaces) {
  /** Copies the collections. */
  public ServerSnapshot {
    peers = ImmutableList.copyOf(peers);
    namespaces = ImmutableMap.copyOf(namespaces);
  }

  /** The peer in slot {@code index}, if the slot is occupied. */
  public Optional<PeerView> peer(int index) {
    return peers.stream().filter(p -> p.index() == index).findFirst();
  }

  /** The namespace named {@code nspace}, if the server knows it. */
  public Optional<NamespaceView> namespace(String nspace) {
    return Optional.ofNullable(namespaces.get(nspace));
  }

  /** What kind of process a peer is. */
  public enum Role {
    /** A client launched under this server (connect flag 0). */
    CLIENT,
    /** A singleton client that found this server (connect flag 9). */
    SINGLETON,
    /** A tool or launcher (connect flags 1 to 8). */
    TOOL
  }

  /** Where a peer is in its lifecycle (init-finalize-lifecycle.txt section 6.2.4.1). */
  public enum PeerState {
    /** Connected and not finalized. */
    ACTIVE,
    /** FINALIZE received, socket still open. */
    FINALIZING,
    /** Finalized and disconnected, kept at its slot until reclaimed. */
    TOMBSTONE
  }

  /**
   * One occupied peer slot.
   *
   * @param index the slot, which the client also received as its handshake index
   * @param nspace the peer's namespace
   * @param rank the peer's rank (unsigned)
   * @param role the kind of peer
   * @param state the lifecycle state
   */
  public record PeerView(int index, String nspace, int rank, Role role, PeerState state) {
    /** Checks for nulls. */
    public PeerView {
      requireNonNull(nspace, "nspace");
      requireNonNull(role, "role");
      requireNonNull(state, "state");
    }
  }

  /**
   * One namespace.
   *
   * @param nspace its name
   * @param registered whether the host registered it (false for a placeholder created by
   *     registering a client first)
   * @param nlocalprocs the local process count the host gave (reduced when a client dies without
   *     finalizing, as OpenPMIx does); -1 before registration
   * @param nfinalized the number of finalized peers of this namespace still held (finalizing and
   *     tombstoned ones)
   * @param ranks the registered ranks, by rank
   */
  public record NamespaceView(
      String nspace, boolean registered, int nlocalprocs, int nfinalized, Map<Integer, RankView> ranks) {
    /** Copies the map. */
    public NamespaceView {
      requireNonNull(nspace, "nspace");
      ranks = ImmutableMap.copyOf(ranks);
    }
  }

  /**
   * One registered rank.
   *
   * @param rank the rank
   * @param uid the uid the host registered
   * @param gid the gid the host registered
   * @param liveCount the number of live connected processes for the rank (the client and its
   *     clones)
   * @param peerIndex the slot of the peer serving the rank, or -1
   */
  public record RankView(int rank, int uid, int gid, int liveCount, int peerIndex) {}
}
