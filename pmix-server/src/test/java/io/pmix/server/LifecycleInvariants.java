package io.pmix.server;

import io.pmix.common.Proc;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The invariants of docs/lifecycle.md §6.2.10, checked on one {@link
 * ServerSnapshot}: the one checker every lifecycle test uses. {@link #check} collects every
 * violation and fails with all of them.
 *
 * <ul>
 *   <li>No orphaned peers, no cross-cycle carryover: every peer belongs to a registered rank; a
 *       rank keeps at most one closed object (tombstone or lost peer), and only at the slot its
 *       peer index names; the index names a peer of that rank, or is -1 with no peer left.
 *   <li>No counter drift: a rank's live count is the number of its open peers (active or
 *       finalizing); a namespace's finalized count is the number of its finalizing and tombstoned
 *       client peers; with {@link Expect#liveProcesses} the live counts add up to the processes
 *       the test knows are connected.
 *   <li>The "all local processes finalized" notification reached the host at most once per
 *       namespace, and the snapshot's latch says whether it did.
 *   <li>Nothing names a deregistered namespace: no namespace, peer or reference.
 *   <li>Client-scoped registrations (events, I/O forwarding, parked GETs) are held only by active
 *       peers: nothing survives its cycle. Once {@link Expect#quiescent} (no test process
 *       running) no peer is open and no such registration is left.
 * </ul>
 */
public final class LifecycleInvariants {
  private LifecycleInvariants() {}

  /** What the test knows besides the snapshot. Fluent, mutable, single-threaded. */
  public static final class Expect {
    final Set<String> deregistered = new HashSet<>();
    Map<String, Integer> latchCalls;
    int liveProcesses = -1;
    boolean quiescent;

    /** No process of the test is running any more. */
    public Expect quiescent() {
      this.quiescent = true;
      this.liveProcesses = 0;
      return this;
    }

    /** This many processes are connected to the server right now. */
    public Expect liveProcesses(int n) {
      this.liveProcesses = n;
      return this;
    }

    /** These namespaces were deregistered. */
    public Expect deregistered(String... nspaces) {
      deregistered.addAll(List.of(nspaces));
      return this;
    }

    /** The host's count of "all local processes finalized" notifications, by namespace. */
    public Expect latchCalls(Map<String, Integer> calls) {
      this.latchCalls = Map.copyOf(calls);
      return this;
    }
  }

  /** A fresh expectation. */
  public static Expect expect() {
    return new Expect();
  }

  /** Checks everything; fails with every violation found. */
  public static void check(ServerSnapshot s, Expect e) {
    List<String> bad = violations(s, e);
    if (!bad.isEmpty()) {
      throw new AssertionError(
          "lifecycle invariants violated:\n  " + String.join("\n  ", bad) + "\nsnapshot: "
              + s.toJson() + "\nreferences: " + s.references());
    }
  }

  /** The violations, empty when the snapshot is sound. */
  public static List<String> violations(ServerSnapshot s, Expect e) {
    List<String> bad = new ArrayList<>();
    Map<Integer, ServerSnapshot.PeerView> bySlot = new HashMap<>();
    Map<Proc, List<ServerSnapshot.PeerView>> byRank = new HashMap<>();
    for (ServerSnapshot.PeerView p : s.peers()) {
      if (bySlot.put(p.index(), p) != null) {
        bad.add("slot " + p.index() + " listed twice");
      }
      byRank.computeIfAbsent(Proc.of(p.nspace(), p.rank()), k -> new ArrayList<>()).add(p);
      ServerSnapshot.NamespaceView ns = s.namespaces().get(p.nspace());
      if (ns == null || !ns.ranks().containsKey(p.rank())) {
        bad.add("orphaned peer " + p + ": its rank is not registered");
      }
      if (e.quiescent && (p.state() == ServerSnapshot.PeerState.ACTIVE
          || p.state() == ServerSnapshot.PeerState.FINALIZING)) {
        bad.add("open peer " + p + " although no test process runs");
      }
      if (e.deregistered.contains(p.nspace())) {
        bad.add("peer " + p + " of deregistered namespace");
      }
    }
    int live = 0;
    for (ServerSnapshot.NamespaceView ns : s.namespaces().values()) {
      if (e.deregistered.contains(ns.nspace())) {
        bad.add("deregistered namespace " + ns.nspace() + " still known");
      }
      int finalized = 0;
      for (ServerSnapshot.PeerView p : s.peers()) {
        if (p.nspace().equals(ns.nspace()) && countsAsFinalizedClient(p)) {
          finalized++;
        }
      }
      if (ns.nfinalized() != finalized) {
        bad.add(ns.nspace() + ": nfinalized " + ns.nfinalized() + " but " + finalized
            + " finalizing or tombstoned client peers");
      }
      if (ns.registered() && ns.nlocalprocs() < 0) {
        bad.add(ns.nspace() + ": negative nlocalprocs " + ns.nlocalprocs());
      }
      for (ServerSnapshot.RankView r : ns.ranks().values()) {
        Proc proc = Proc.of(ns.nspace(), r.rank());
        List<ServerSnapshot.PeerView> mine = byRank.getOrDefault(proc, List.of());
        int open = 0;
        int closed = 0;
        for (ServerSnapshot.PeerView p : mine) {
          if (p.state() == ServerSnapshot.PeerState.ACTIVE
              || p.state() == ServerSnapshot.PeerState.FINALIZING) {
            open++;
          } else {
            closed++;
            if (p.index() != r.peerIndex()) {
              bad.add(proc + ": closed peer " + p + " not at the rank's index " + r.peerIndex()
                  + " (stranded, should have been freed)");
            }
          }
        }
        if (closed > 1) {
          bad.add(proc + ": " + closed + " closed objects (tombstones or lost peers)");
        }
        if (r.procCount() != open) {
          bad.add(proc + ": procCount " + r.procCount() + " but " + open + " open peers");
        }
        live += r.procCount();
        if (r.peerIndex() >= 0) {
          ServerSnapshot.PeerView at = bySlot.get(r.peerIndex());
          if (at == null || !at.nspace().equals(ns.nspace()) || at.rank() != r.rank()) {
            bad.add(proc + ": peerIndex " + r.peerIndex() + " names " + at);
          }
        } else if (!mine.isEmpty()) {
          bad.add(proc + ": peerIndex -1 but peers " + mine);
        }
      }
      if (e.latchCalls != null) {
        int calls = e.latchCalls.getOrDefault(ns.nspace(), 0);
        if (ns.localAppFiniFired() != (calls > 0)) {
          bad.add(ns.nspace() + ": latch " + ns.localAppFiniFired() + " but " + calls
              + " host notifications");
        }
      }
    }
    if (e.latchCalls != null) {
      e.latchCalls.forEach(
          (n, c) -> {
            if (c > 1) {
              bad.add(n + ": " + c + " \"all local processes finalized\" notifications");
            }
          });
    }
    if (e.liveProcesses >= 0 && live != e.liveProcesses) {
      bad.add("live counts add up to " + live + ", but " + e.liveProcesses
          + " processes are connected");
    }
    for (ServerSnapshot.Reference ref : s.references()) {
      if (e.deregistered.contains(ref.nspace())) {
        bad.add(ref + " names a deregistered namespace");
      }
      switch (ref.kind()) {
        case EVENT_REGISTRATION, IOF_REQUEST, PENDING_GET -> {
          ServerSnapshot.PeerView holder = bySlot.get(ref.holderIndex());
          if (holder == null || holder.state() != ServerSnapshot.PeerState.ACTIVE) {
            bad.add(ref + " held by " + (holder == null ? "a released peer" : holder)
                + ": client-scoped state outlived its cycle");
          }
          if (e.quiescent) {
            bad.add(ref + " left although no test process runs");
          }
        }
        case CACHED_NOTIFICATION -> {
          if (!s.namespaces().containsKey(ref.nspace())) {
            bad.add(ref + " names an unknown namespace");
          }
        }
        case COLLECTIVE -> {
          // A fence in progress may name any namespace, local or not.
        }
        case DMODEX_REQUEST -> {
          // The host's request may name a process before its namespace is registered here.
          if (e.quiescent) {
            bad.add(ref + " left although no test process runs");
          }
        }
      }
    }
    return bad;
  }

  /** Counted in nfinalized: a finalizing or tombstoned client (tools only once tombstoned). */
  private static boolean countsAsFinalizedClient(ServerSnapshot.PeerView p) {
    boolean client =
        p.role() == ServerSnapshot.Role.CLIENT || p.role() == ServerSnapshot.Role.SINGLETON;
    return p.state() == ServerSnapshot.PeerState.TOMBSTONE
        || (client && p.state() == ServerSnapshot.PeerState.FINALIZING);
  }
}
