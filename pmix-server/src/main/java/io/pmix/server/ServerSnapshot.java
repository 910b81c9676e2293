package io.pmix.server;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A read-only copy of a {@link PMIxServer}'s connection and namespace bookkeeping, taken on the
 * progress thread at one instant: for tests, a launcher's report and operators. Immutable.
 *
 * <p>What it shows follows docs/lifecycle.md: the peer slot array (one entry per
 * occupied slot, tombstones included), and per namespace the local process count, the finalized
 * count and the one-shot "all local processes finalized" latch, with each registered rank's live
 * process count and the slot of the peer serving it. {@link #references} lists what else still
 * names a namespace or rank (event and I/O-forwarding registrations, parked requests, cached
 * notifications, collectives in progress), so a caller can check that nothing outlives its owner.
 * {@link #stores} lists the shared-memory stores the server writes and which namespaces live in
 * each (a retired one stays until its last namespace is gone: docs/gds.md §10). {@link #toJson}
 * writes the peers, namespaces and stores in a fixed layout.
 *
 * @param peers every occupied slot of the server's peer array, in slot order
 * @param namespaces every namespace the server knows, by name
 * @param references every registration, request, notification and collective naming a process
 * @param stores the shared-memory stores open, those new namespaces go to first (best first),
 *     then the retired ones; empty for a server that serves only hash
 */
public record ServerSnapshot(
    List<PeerView> peers, Map<String, NamespaceView> namespaces, List<Reference> references,
    List<StoreView> stores) {
  /** Copies the collections. */
  public ServerSnapshot {
    peers = ImmutableList.copyOf(peers);
    namespaces = ImmutableMap.copyOf(namespaces);
    references = ImmutableList.copyOf(references);
    stores = ImmutableList.copyOf(stores);
  }

  /** A snapshot without {@link #stores}. */
  public ServerSnapshot(
      List<PeerView> peers, Map<String, NamespaceView> namespaces, List<Reference> references) {
    this(peers, namespaces, references, List.of());
  }

  /** A snapshot without {@link #references} and {@link #stores}. */
  public ServerSnapshot(List<PeerView> peers, Map<String, NamespaceView> namespaces) {
    this(peers, namespaces, List.of(), List.of());
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
    /** A tool (connect flags 1, 3, 4 and 5). */
    TOOL,
    /** A launcher (connect flags 2, 6, 7 and 8). */
    LAUNCHER
  }

  /**
   * Where a peer is in its lifecycle (docs/lifecycle.md §6.2.4.1, plus {@link
   * #LOST}).
   */
  public enum PeerState {
    /** Connected and not finalized. */
    ACTIVE,
    /** FINALIZE received, socket still open; counted as finalized and as a live process. */
    FINALIZING,
    /**
     * Finalized and disconnected, kept inert at its slot (the rank's peer index still names it)
     * until the rank reconnects or is deregistered; still counted as finalized.
     */
    TOMBSTONE,
    /**
     * Disconnected without finalizing (the process died), kept inert at its slot like a tombstone
     * because the rank's peer index still names it; not counted as finalized. Reclaimed like a
     * tombstone. The lifecycle text has no name for this state: it forbids freeing the peer from
     * the connection-lost path.
     */
    LOST
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
   * @param nlocalprocs the local process count the host gave, less the ranks whose last process
   *     died without finalizing (as OpenPMIx does; restored when the rank connects again) and the
   *     ranks the host deregistered (restored when it registers them again); -1 before
   *     registration
   * @param nfinalized the number of finalized client peers of this namespace still held
   *     (finalizing and tombstoned ones): {@code nlocalprocs == nfinalized} is the "all local
   *     processes finalized" condition
   * @param localAppFiniFired whether the host has been told that all local processes finalized
   *     ({@link HostModule#localAppFinalized}); set at most once per namespace
   * @param ranks the registered ranks, by rank
   */
  public record NamespaceView(
      String nspace,
      boolean registered,
      int nlocalprocs,
      int nfinalized,
      boolean localAppFiniFired,
      Map<Integer, RankView> ranks) {
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
   * @param procCount the number of live processes for the rank (the client and its clones, each
   *     with an open connection, finalizing ones included)
   * @param peerIndex the slot of the peer serving the rank (the newest connection, or the
   *     tombstone it left), or -1
   */
  public record RankView(int rank, int uid, int gid, int procCount, int peerIndex) {}

  /**
   * One shared-memory store (libpmix 4.2.2's ds21 or ds12 layout) the server writes.
   *
   * @param module its gds module, {@code ds21} or {@code ds12}
   * @param directory its directory (what {@code setupFork} exports as its base path)
   * @param retired whether its lock was lost, so nothing is written to it any more and no
   *     process is told of it; a fresh store of its module takes the namespaces registered after
   * @param namespaces the namespaces that live in it (registered while it was current), sorted
   */
  public record StoreView(
      String module, String directory, boolean retired, List<String> namespaces) {
    /** Copies the list. */
    public StoreView {
      requireNonNull(module, "module");
      requireNonNull(directory, "directory");
      namespaces = ImmutableList.copyOf(namespaces);
    }
  }

  /** What kind of thing a {@link Reference} is. */
  public enum ReferenceKind {
    /** A peer's registration for events; names the peer. */
    EVENT_REGISTRATION,
    /** An I/O-forwarding request; names each process it forwards from. */
    IOF_REQUEST,
    /** A GET parked until its target commits or the host answers; names the target. */
    PENDING_GET,
    /** An event kept for a target that has not registered for it yet; names target and source. */
    CACHED_NOTIFICATION,
    /** A fence in progress; names each participant entry (rank may be the wildcard). */
    COLLECTIVE,
    /**
     * The host's direct-modex request ({@link PMIxServer#dmodexRequest}) waiting for a process to
     * commit; names that process. Held by the host, so its holder index is -1.
     */
    DMODEX_REQUEST
  }

  /**
   * One thing, other than a peer or a registration, that names a process.
   *
   * @param kind what it is
   * @param holderIndex the slot of the peer that holds it (registrations, requests), or -1
   * @param nspace the namespace it names
   * @param rank the rank it names (unsigned; may be a wildcard)
   */
  public record Reference(ReferenceKind kind, int holderIndex, String nspace, int rank) {
    /** Checks for nulls. */
    public Reference {
      requireNonNull(kind, "kind");
      requireNonNull(nspace, "nspace");
    }
  }

  /**
   * The peers, namespaces and stores as JSON, without {@link #references}, in this fixed layout
   * (names and order never change; roles and states in lower case, ranks unsigned, namespaces
   * sorted by name, ranks by number, stores in {@link #stores}' order):
   *
   * <pre>{@code
   * {"peers":[{"index":0,"nspace":"job","rank":0,"role":"client","state":"tombstone"}],
   *  "namespaces":[{"nspace":"job","nlocalprocs":2,"nfinalized":1,"localAppFiniFired":false,
   *    "ranks":[{"rank":0,"procCount":0,"peerIndex":0},{"rank":1,"procCount":1,"peerIndex":1}]}],
   *  "stores":[{"module":"ds21","directory":"/tmp/pmix_dstor_ds21_42","retired":false,
   *    "namespaces":["job"]}]}
   * }</pre>
   *
   * <p>(One line, no blanks.) State is one of {@code active}, {@code finalizing}, {@code
   * tombstone}, {@code lost}; role one of {@code client}, {@code singleton}, {@code tool}, {@code
   * launcher}.
   */
  public String toJson() {
    StringBuilder b = new StringBuilder(256);
    b.append("{\"peers\":[");
    for (int i = 0; i < peers.size(); i++) {
      PeerView p = peers.get(i);
      b.append(i == 0 ? "{" : ",{");
      b.append("\"index\":").append(p.index());
      b.append(",\"nspace\":");
      appendJsonString(b, p.nspace());
      b.append(",\"rank\":").append(Integer.toUnsignedString(p.rank()));
      b.append(",\"role\":\"").append(p.role().name().toLowerCase(Locale.ROOT)).append('"');
      b.append(",\"state\":\"").append(p.state().name().toLowerCase(Locale.ROOT)).append('"');
      b.append('}');
    }
    b.append("],\"namespaces\":[");
    List<NamespaceView> nss = new ArrayList<>(namespaces.values());
    nss.sort((x, y) -> x.nspace().compareTo(y.nspace()));
    for (int i = 0; i < nss.size(); i++) {
      NamespaceView n = nss.get(i);
      b.append(i == 0 ? "{" : ",{");
      b.append("\"nspace\":");
      appendJsonString(b, n.nspace());
      b.append(",\"nlocalprocs\":").append(n.nlocalprocs());
      b.append(",\"nfinalized\":").append(n.nfinalized());
      b.append(",\"localAppFiniFired\":").append(n.localAppFiniFired());
      b.append(",\"ranks\":[");
      List<RankView> rs = new ArrayList<>(n.ranks().values());
      rs.sort((x, y) -> Integer.compareUnsigned(x.rank(), y.rank()));
      for (int j = 0; j < rs.size(); j++) {
        RankView r = rs.get(j);
        b.append(j == 0 ? "{" : ",{");
        b.append("\"rank\":").append(Integer.toUnsignedString(r.rank()));
        b.append(",\"procCount\":").append(r.procCount());
        b.append(",\"peerIndex\":").append(r.peerIndex());
        b.append('}');
      }
      b.append("]}");
    }
    b.append("],\"stores\":[");
    for (int i = 0; i < stores.size(); i++) {
      StoreView st = stores.get(i);
      b.append(i == 0 ? "{" : ",{");
      b.append("\"module\":");
      appendJsonString(b, st.module());
      b.append(",\"directory\":");
      appendJsonString(b, st.directory());
      b.append(",\"retired\":").append(st.retired());
      b.append(",\"namespaces\":[");
      for (int j = 0; j < st.namespaces().size(); j++) {
        if (j > 0) {
          b.append(',');
        }
        appendJsonString(b, st.namespaces().get(j));
      }
      b.append("]}");
    }
    b.append("]}");
    return b.toString();
  }

  /** A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped. */
  private static void appendJsonString(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
