package io.pmix.server.internal.lifecycle;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.ServerConnection;
import io.pmix.server.internal.modex.ProcData;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Who is there: the peer slot array ({@code pmix_server_globals.clients}: a peer's index is its
 * position, a free slot is null), the namespaces by name in registration order, and their ranks.
 * Lookups are for every part; what changes the slots (placing and freeing peers) is for {@link
 * PeerLifecycle} alone, which applies the rules of docs/lifecycle.md to them. Namespaces and
 * ranks that no rule guards (placeholders, a tool's own namespace and rank) can be made by the
 * parts that need them. Progress thread only.
 */
public final class Registry {
  private final List<@Nullable Peer> slots = new ArrayList<>();

  /**
   * Each rank's peers in the slots, in slot order: a finalize asks whether its rank has another
   * live process, and a scan of every slot there made a job's finalizes quadratic in its size.
   */
  private final Map<RankInfo, List<Peer>> byRank = new IdentityHashMap<>();

  /** Every slot below it is taken: a job's connects fill the slots without scanning them. */
  private int lowestFree;

  private final Map<String, Namespace> namespaces = new LinkedHashMap<>();

  /** Told of the data the host delivered for a process (the shared-memory stores). */
  private BiConsumer<Proc, Map<String, Value>> delivered = (p, v) -> {};

  /** An empty registry. */
  public Registry() {}

  /** Sets who is told of data the host delivered for a process ({@link #delivered}). */
  public void onDelivered(BiConsumer<Proc, Map<String, Value>> listener) {
    this.delivered = requireNonNull(listener, "listener");
  }

  /**
   * The data the host delivered for {@code proc} (a fence's, a direct-modex answer) was stored in
   * its namespace: the listener gets all that is held for it.
   */
  public void delivered(Proc proc) {
    Namespace ns = namespaces.get(proc.nspace());
    ProcData d = ns == null ? null : ns.data().proc(proc.rank());
    if (d != null) {
      delivered.accept(proc, d.remote());
    }
  }

  // ---- namespaces and ranks ----

  /** The namespace called {@code name}, or null. */
  public @Nullable Namespace namespace(String name) {
    return namespaces.get(name);
  }

  /** Whether a namespace called {@code name} is known. */
  public boolean hasNamespace(String name) {
    return namespaces.containsKey(name);
  }

  /** Every namespace, in the order they became known; a read-only view. */
  public Collection<Namespace> namespaces() {
    return Collections.unmodifiableCollection(namespaces.values());
  }

  /**
   * The namespace called {@code name}, made as an unregistered placeholder if it is unknown: for
   * clients registered before their namespace, a singleton's namespace, data the host delivered
   * for another node's processes.
   */
  public Namespace placeholder(String name) {
    return namespaces.computeIfAbsent(name, n -> new Namespace(n, false));
  }

  /**
   * A new namespace made for tools (not by the host), which is dropped with its last tool.
   *
   * @throws IllegalStateException if {@code name} is taken
   */
  public Namespace addToolNamespace(String name) {
    if (namespaces.containsKey(name)) {
      throw new IllegalStateException("namespace " + name + " exists");
    }
    Namespace ns = new Namespace(name, true);
    namespaces.put(name, ns);
    return ns;
  }

  /**
   * A new namespace a singleton of {@code uid} made for itself, which is dropped with its last
   * peer and belongs to that uid alone.
   *
   * @throws IllegalStateException if {@code name} is taken
   */
  public Namespace addSingletonNamespace(String name, int uid) {
    if (namespaces.containsKey(name)) {
      throw new IllegalStateException("namespace " + name + " exists");
    }
    Namespace ns = new Namespace(name, uid);
    namespaces.put(name, ns);
    return ns;
  }

  /**
   * A new rank record in {@code ns}, not registered by the host (a singleton's or a tool's).
   *
   * @throws IllegalStateException if the rank exists
   */
  public RankInfo addRank(Namespace ns, int rank, int uid, int gid, @Nullable Object hostObject) {
    if (ns.hasRank(rank)) {
      throw new IllegalStateException("rank " + rank + " of " + ns.name() + " exists");
    }
    RankInfo info = new RankInfo(rank, uid, gid, hostObject);
    ns.putRank(info);
    return info;
  }

  /** A namespace not in the map yet (a first registration), added once it proved valid. */
  Namespace unmapped(String name) {
    return new Namespace(name, false);
  }

  void put(Namespace ns) {
    namespaces.put(ns.name(), ns);
  }

  /** Forgets {@code ns} if it is the one known by its name. */
  void remove(Namespace ns) {
    namespaces.remove(ns.name(), ns);
  }

  // ---- peers ----

  /** The peer in slot {@code index}, or null. */
  public @Nullable Peer peerAt(int index) {
    return index >= 0 && index < slots.size() ? slots.get(index) : null;
  }

  /** The peers in the slots, in slot order (a copy). */
  public List<Peer> peers() {
    List<Peer> out = new ArrayList<>();
    for (Peer p : slots) {
      if (p != null) {
        out.add(p);
      }
    }
    return out;
  }

  /** The peers of {@code ns} in the slots, in slot order (a copy). */
  public List<Peer> peersOf(Namespace ns) {
    List<Peer> out = new ArrayList<>();
    for (Peer p : slots) {
      if (p != null && p.ns() == ns) {
        out.add(p);
      }
    }
    return out;
  }

  /** The peers serving {@code info} in the slots, in slot order (a copy). */
  public List<Peer> peersOf(RankInfo info) {
    List<Peer> held = byRank.get(info);
    return held == null ? new ArrayList<>() : new ArrayList<>(held);
  }

  /** Whether {@code p} still occupies its slot (it has not been freed). */
  public boolean holds(Peer p) {
    return p.index() < slots.size() && slots.get(p.index()) == p;
  }

  /** The peer's slot while it occupies one, else -1 (a released peer). */
  public int slotOf(Peer p) {
    return holds(p) ? p.index() : -1;
  }

  /** A new peer in the lowest free slot. */
  Peer place(
      ServerConnection ch, Namespace ns, RankInfo info, ServerSnapshot.Role role, WireFormat format,
      String version) {
    int index = lowestFree;
    while (index < slots.size() && slots.get(index) != null) {
      index++;
    }
    if (index == slots.size()) {
      slots.add(null);
    }
    lowestFree = index + 1;
    Peer peer = new Peer(index, ch, ns, info, role, format, version);
    slots.set(index, peer);
    List<Peer> ofRank = byRank.get(info);
    if (ofRank == null) { // not computeIfAbsent: no lambda on a connect's path ("First requests")
      ofRank = new ArrayList<>(1);
      byRank.put(info, ofRank);
    }
    int at = ofRank.size();
    while (at > 0 && ofRank.get(at - 1).index() > index) {
      at--;
    }
    ofRank.add(at, peer);
    return peer;
  }

  /** Nulls the peer's own slot (never another's); nothing if it was freed already. */
  void vacate(Peer p) {
    if (holds(p)) {
      slots.set(p.index(), null);
      lowestFree = Math.min(lowestFree, p.index());
      List<Peer> ofRank = byRank.get(p.info());
      if (ofRank != null) {
        ofRank.remove(p);
        if (ofRank.isEmpty()) {
          byRank.remove(p.info());
        }
      }
    }
  }
}
