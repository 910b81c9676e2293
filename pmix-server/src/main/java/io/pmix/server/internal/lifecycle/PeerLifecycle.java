package io.pmix.server.internal.lifecycle;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.server.HostModule;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.HostCalls;
import io.pmix.server.internal.JobData;
import io.pmix.server.internal.Replies;
import io.pmix.server.internal.ServerConnection;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Every server-side rule of docs/lifecycle.md, in one place: what happens to a peer, its rank and
 * its namespace from registration to deregistration. The single writer of the lifecycle counters
 * (a namespace's local process count and departed ranks, a rank's peer index and live process
 * count, a peer's state); the finalized count and the "all local processes finalized" condition
 * are not counters at all but read off the peers' states ({@link #nfinalized}, {@link
 * #allLocalFinalized}), so they cannot drift from what the slots hold.
 *
 * <ul>
 *   <li>Registration (§6.2.2): {@link #registerNspace}, {@link #registerClient}, {@link
 *       #registerEpilog}. A rank registered again, or reconnecting after its last process died,
 *       is a local process again.
 *   <li>Connection (§6.2.4, "Reclaim on reconnect"): {@link #attach}, the one assignment for every
 *       role. The tombstone (or lost peer) at the rank's index is reclaimed first, then the rank
 *       points at the new peer. A peer still open at the index (a clone, or a finalizing peer
 *       whose close is not processed yet) is left alone.
 *   <li>Finalize (§6.2.4, §6.2.4.1): {@link #handleFinalize} counts the peer finalized and
 *       prunes its client-scoped state; at socket close ({@link #closed}) a client becomes a
 *       tombstone at its slot, a peer no index names (stranded) and a pure tool are freed.
 *   <li>Lost connections: an unfinalized peer's close; once the rank's last process is gone,
 *       collectives and waiting requests stop waiting for it and it leaves the local process
 *       count (as 4.2.2).
 *   <li>Deregistration of a client (§6.2.5) and of a namespace (§6.2.6): every peer released and
 *       its slot nulled, the registration removed, everything naming them pruned, epilogs run,
 *       and the "all local processes finalized" notification, once per namespace.
 *   <li>Tools (§6.2.4.1): a tool's namespace and rank made by the server are dropped with its
 *       last peer.
 * </ul>
 *
 * <p>What the other parts must do when these rules fire (prune registrations, fail waiting
 * requests, recount fences) goes through {@link Effects}. Progress thread only; host code runs
 * through {@link HostCalls}.
 */
public final class PeerLifecycle {
  private static final System.Logger LOG = LazyLogger.of(PeerLifecycle.class);

  /**
   * What the rest of the server does when a lifecycle rule fires. Implementations answer the
   * requests concerned and prune their own state; they never change peers, ranks or counters.
   */
  public interface Effects {
    /** The peer's client-scoped registrations end: events, forwarding, its parked GETs. */
    void peerPruned(Peer peer);

    /** The rank finalized with no other active process: nothing of it will commit this cycle. */
    void rankFinalized(Proc proc);

    /**
     * The rank will not contribute any more: its last process died unfinalized ({@code
     * ERR_LOST_CONNECTION}) or the host deregistered it ({@code ERR_NOT_FOUND}).
     */
    void rankDeparted(Proc proc, Status why);

    /**
     * A process of the rank connected while none of the rank was running a cycle: what the rank
     * committed in earlier cycles is dropped, so the new cycle starts on a clean slate.
     */
    void cycleBegins(Proc proc);

    /** The rank is a local process again (registered again, or reconnected). */
    void rankReturned(Proc proc);

    /** The namespace's registration changed: what waited for it can be re-evaluated. */
    void registrationChanged(Namespace ns);

    /** The namespace is being deregistered: nothing may name it afterwards. */
    void namespaceGone(Namespace ns);
  }

  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final boolean clientCallsHere;
  private final String hostname;
  private final BooleanSupplier stopping;
  private final Effects effects;

  /**
   * The lifecycle of one server.
   *
   * @param hostname this node's name (job data is built with it at registration)
   * @param stopping whether the server is shutting down (its own closes are not accounted)
   */
  public PeerLifecycle(
      Registry registry, HostModule host, HostCalls hostCalls, String hostname,
      BooleanSupplier stopping, Effects effects) {
    this.registry = requireNonNull(registry, "registry");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.clientCallsHere = host.clientCallsReturnAtOnce();
    this.hostname = requireNonNull(hostname, "hostname");
    this.stopping = requireNonNull(stopping, "stopping");
    this.effects = requireNonNull(effects, "effects");
  }

  // ============================================================================================
  // Registration
  // ============================================================================================

  /** Registers (or re-registers) a namespace; SUCCESS or the reason it was refused. */
  public Status registerNspace(String nspace, int nlocalprocs, List<Info> infos) {
    Namespace known = takeBack(nspace);
    Namespace ns = known != null ? known : registry.unmapped(nspace);
    List<Info> copy = List.copyOf(infos);
    JobData built;
    try {
      // Built now so a malformed registration is refused here, not at the first client's REQ.
      built = ns.candidateJobData(nlocalprocs, copy, hostname);
    } catch (PmixException e) {
      return e.status();
    } catch (RuntimeException e) {
      return Status.ERR_BAD_PARAM;
    }
    ns.register(nlocalprocs, copy, built);
    if (known == null) {
      registry.put(ns);
    }
    effects.registrationChanged(ns);
    return Status.SUCCESS;
  }

  /**
   * The host registers something in {@code nspace}: if a singleton made a namespace of that name
   * (before the host registered its job), the host takes the name back. The singleton's peers
   * are closed and everything naming its namespace goes, so the host's job starts as registered.
   *
   * @return the namespace of that name still known (never a singleton's), or null
   */
  private @Nullable Namespace takeBack(String nspace) {
    Namespace known = registry.namespace(nspace);
    if (known == null || !known.madeBySingleton()) {
      return known;
    }
    LOG.log(Level.INFO, "the host registers {0}: closing the singletons using the name", nspace);
    for (Peer p : registry.peersOf(known)) {
      release(p);
    }
    for (RankInfo r : known.ranks()) {
      r.released();
    }
    known.clearRanks();
    effects.namespaceGone(known);
    registry.remove(known);
    return null;
  }

  /**
   * Registers a local client; creates a placeholder namespace if needed (docs/register-nspace.md
   * NOTES). Registering a rank again updates its registration in place.
   */
  public Status registerClient(Proc proc, int uid, int gid, @Nullable Object hostObject) {
    if (proc.isSpecialRank()) {
      return Status.ERR_BAD_PARAM;
    }
    Namespace unused = takeBack(proc.nspace()); // a singleton's namespace of that name goes
    Namespace ns = registry.placeholder(proc.nspace());
    RankInfo info = ns.rank(proc.rank());
    if (info == null) {
      info = registry.addRank(ns, proc.rank(), uid, gid, hostObject);
    }
    info.hostRegistration(uid, gid, hostObject);
    // A rank the host deregistered, or whose process died, is a local process again: the host
    // registers it before it starts it anew.
    rankReturned(ns, proc.rank());
    ns.invalidate();
    effects.registrationChanged(ns);
    return Status.SUCCESS;
  }

  /** Registers cleanup for a rank (run at its deregistration) or a namespace (wildcard rank). */
  public Status registerEpilog(Proc proc, Runnable epilog) {
    Namespace ns = registry.namespace(proc.nspace());
    if (ns == null) {
      return Status.ERR_NOT_FOUND;
    }
    if (proc.rank() == Proc.RANK_WILDCARD) {
      ns.addEpilog(epilog);
      return Status.SUCCESS;
    }
    RankInfo info = ns.rank(proc.rank());
    if (info == null) {
      return Status.ERR_NOT_FOUND;
    }
    info.epilogs().add(epilog);
    return Status.SUCCESS;
  }

  /**
   * A rank is a local process again (the host registered it again, or it reconnected after its
   * last process died): it counts in nlocalprocs, and the other parts are told.
   */
  private void rankReturned(Namespace ns, int rank) {
    ns.rankReturned(rank);
    effects.rankReturned(Proc.of(ns.name(), rank));
  }

  // ============================================================================================
  // Connection and close
  // ============================================================================================

  /**
   * The one connection assignment for every role (client, singleton, tool, launcher): reclaims
   * what the rank's previous cycle left at its index (a tombstone or a lost peer: its socket is
   * closed, so that cycle is over and this is a quiescent point), takes the lowest free slot and
   * points the rank at the new peer. A peer still open at the index (a running clone, or a
   * finalizing one whose close is not processed yet) is left alone: it is freed when its own
   * close arrives, as a stranded peer.
   */
  public Peer attach(
      ServerConnection ch, Namespace ns, RankInfo info, ServerSnapshot.Role role, WireFormat format,
      String version) {
    Peer old = registry.peerAt(info.peerIndex());
    if (old != null && old.info() == info && old.closed()) {
      // Reclaim on reconnect: slot nulled (which drops the finalized count it held).
      registry.vacate(old);
    }
    if (!rankHasActive(info)) {
      // No process of the rank is running its cycle (none ever did, or all finalized or died):
      // this connection begins a new one, which must not inherit the old cycle's data (§6.2.10
      // "No cross-cycle carryover"). A clone joining a running process keeps it.
      effects.cycleBegins(Proc.of(ns.name(), info.rank()));
    }
    if (ns.rank(info.rank()) == info) {
      // A rank whose last process died unfinalized is a local process again.
      rankReturned(ns, info.rank());
    }
    Peer peer = registry.place(ch, ns, info, role, format, version);
    info.connected(peer.index());
    LOG.log(Level.DEBUG, "accepted {0}", peer);
    return peer;
  }

  /**
   * The peer's socket closed (lost_connection). Only the rank's live count changes for a peer
   * the rank's index still names: a finalized client becomes a tombstone, one that died becomes
   * a lost peer, both kept inert at their slot, so a collective or GET resolving the rank
   * concurrently sees nothing move. A peer no index names (displaced by a clone or a fast
   * re-init) and a pure tool are freed at once.
   */
  public void closed(Peer peer) {
    if (peer.closed()) {
      return; // the server closed it itself (deregistration, shutdown) and accounted for it
    }
    peer.markClosed();
    if (stopping.getAsBoolean() || !registry.holds(peer)) {
      return;
    }
    RankInfo info = peer.info();
    info.processGone();
    boolean referenced = info.peerIndex() == peer.index();
    if (peer.finalized()) {
      peerFinalized(peer, referenced);
    } else {
      lostConnection(peer, referenced);
    }
    if (!peer.clientSemantics()) {
      dropToolRecords(peer);
    } else if (peer.ns().madeBySingleton()) {
      dropSingletonRecords(peer);
    }
  }

  /** A finalized peer's socket dropped (pmix_server_peer_finalized). */
  private void peerFinalized(Peer peer, boolean referenced) {
    effects.peerPruned(peer);
    if (!peer.clientSemantics()) {
      freeToolPeer(peer, referenced);
    } else if (referenced) {
      // The tombstone: nothing else is touched here.
      peer.state(ServerSnapshot.PeerState.TOMBSTONE);
    } else {
      // Stranded: a newer peer owns the rank's index. Only its own slot is nulled.
      registry.vacate(peer);
    }
  }

  /**
   * An unfinalized peer's socket dropped: an abnormal termination. Collectives, parked GETs and
   * cached events stop waiting for the rank once its last process is gone (4.2.2's status);
   * nlocalprocs drops as in OpenPMIx. The peer itself is kept like a tombstone if the rank's
   * index names it.
   */
  private void lostConnection(Peer peer, boolean referenced) {
    LOG.log(Level.INFO, "lost connection to {0} before it finalized", peer);
    effects.peerPruned(peer);
    RankInfo info = peer.info();
    Namespace ns = peer.ns();
    if (info.procCount() == 0) {
      effects.rankDeparted(peer.proc(), Status.ERR_LOST_CONNECTION);
      if (peer.clientSemantics() && ns.rank(info.rank()) == info) {
        // 4.2.2: a client that died without finalizing no longer counts as a local process.
        ns.rankDeparted(info.rank());
      }
    }
    peer.state(ServerSnapshot.PeerState.LOST);
    if (!peer.clientSemantics()) {
      freeToolPeer(peer, referenced);
    } else if (!referenced) {
      registry.vacate(peer); // stranded: only its own slot is nulled
    }
  }

  /**
   * Frees a pure tool (or a singleton's peer) at close and repoints its rank's index to a live
   * sibling, or unsets it: nothing resolves a tool through the index, and a finalized tool never
   * reconnects onto its rank, so it needs no tombstone.
   */
  private void freeToolPeer(Peer peer, boolean referenced) {
    registry.vacate(peer);
    if (referenced) {
      int sibling = -1;
      for (Peer p : registry.peersOf(peer.info())) {
        if (!p.closed()) {
          sibling = p.index();
          break;
        }
      }
      peer.info().pointAt(sibling);
    }
  }

  /**
   * A singleton's peer is gone: nothing resolves a singleton's rank but its own processes, and
   * each singleton starts with a namespace of its own, so its peer needs no tombstone. The peer
   * is freed at once, its rank once no process of it remains, and the namespace with its last
   * rank, with everything naming it (§6.2.6), so singletons leave nothing behind (issue #19).
   */
  private void dropSingletonRecords(Peer peer) {
    freeToolPeer(peer, peer.info().peerIndex() == peer.index());
    RankInfo info = peer.info();
    Namespace ns = peer.ns();
    if (info.procCount() > 0) {
      return;
    }
    if (ns.rank(info.rank()) == info) {
      ns.removeRank(info.rank());
      info.released();
    }
    if (ns.hasNoRanks()) {
      effects.namespaceGone(ns);
      registry.remove(ns);
    }
  }

  /**
   * A tool's peer is gone: the rank record and namespace the server made for it are dropped once
   * no live process uses them, so tools cycling init/finalize leave nothing behind. Ranks and
   * namespaces of the host are never touched.
   */
  private void dropToolRecords(Peer peer) {
    RankInfo info = peer.info();
    Namespace ns = peer.ns();
    if (info.hostRegistered() || info.procCount() > 0 || !ns.madeForTools()) {
      return;
    }
    if (ns.rank(info.rank()) == info) {
      ns.removeRank(info.rank());
    }
    if (ns.hasNoRanks() && !ns.registered()) {
      registry.remove(ns);
    }
  }

  // ============================================================================================
  // Finalize
  // ============================================================================================

  /**
   * FINALIZE: the peer becomes finalizing and, if it follows the client lifecycle, counts as
   * finalized; its client-scoped registrations end. Its fence contributions stay: an orderly
   * finalize is not a lost participant. The host's {@code clientFinalized} (clients only) is
   * awaited before the answer.
   */
  public void handleFinalize(Peer peer, int tag) {
    if (peer.state() == ServerSnapshot.PeerState.ACTIVE) {
      peer.state(ServerSnapshot.PeerState.FINALIZING);
      if (peer.clientSemantics()) {
        peer.countFinalized();
      }
    }
    effects.peerPruned(peer);
    if (!rankHasOtherActive(peer)) {
      // Nothing of this rank will commit in this cycle: whoever waits for its data is told so
      // (OpenPMIx master answers NOT_FOUND), and events kept for it are dropped.
      effects.rankFinalized(peer.proc());
    }
    if (peer.role() == ServerSnapshot.Role.CLIENT) {
      Object hostObject = peer.info().hostObject();
      // Classes, not lambdas: a lambda's first call costs a fresh server 0.1-0.2 ms, here in
      // every job's first finalize (docs/architecture.md, "First requests").
      hostCalls.call(
          new Supplier<CompletionStage<Void>>() {
            @Override
            public CompletionStage<Void> get() {
              return host.clientFinalized(peer.proc(), hostObject);
            }
          },
          new HostCalls.Done<Void>() {
            @Override
            public void done(@Nullable Void v, @Nullable Status failure) {
              Replies.finalizeReply(
                  peer,
                  tag,
                  failure == null || failure.equals(Status.ERR_NOT_SUPPORTED)
                      ? Status.SUCCESS
                      : failure);
            }
          },
          clientCallsHere);
    } else {
      Replies.finalizeReply(peer, tag, Status.SUCCESS);
    }
  }

  /** Whether a process of the rank is connected and not finalized. */
  private boolean rankHasActive(RankInfo info) {
    for (Peer p : registry.peersOf(info)) {
      if (p.active()) {
        return true;
      }
    }
    return false;
  }

  /** Whether another process of the peer's rank is connected and not finalized. */
  private boolean rankHasOtherActive(Peer peer) {
    for (Peer p : registry.peersOf(peer.info())) {
      if (p != peer && p.active()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The namespace's finalized count ({@code nptr->nfinalized}, §6.2.4.1): its client peers that
   * FINALIZE counted (finalizing, or tombstoned) and that still hold their slot. Read off the
   * slots rather than kept, so it drops exactly when such a peer is freed: reclaimed on
   * reconnect, stranded, or deregistered.
   */
  public int nfinalized(Namespace ns) {
    int n = 0;
    for (Peer p : registry.peersOf(ns)) {
      if (p.countedFinalized()) {
        n++;
      }
    }
    return n;
  }

  // ============================================================================================
  // Deregistration
  // ============================================================================================

  /**
   * Deregisters a client (§6.2.5): every peer of the rank (live ones closed, the tombstone of a
   * finalized cycle, clones) is released and its slot nulled, the registration removed, requests
   * waiting on the rank answered NOT_FOUND, fences told it departed. Job data stays. Then the
   * "all local processes finalized" check (once per namespace) and the rank's epilogs.
   */
  public Status deregisterClient(Proc proc) {
    Namespace ns = registry.namespace(proc.nspace());
    RankInfo info = ns == null ? null : ns.rank(proc.rank());
    if (ns == null || info == null) {
      return Status.ERR_NOT_FOUND;
    }
    for (Peer p : registry.peersOf(info)) {
      release(p);
    }
    effects.rankDeparted(proc, Status.ERR_NOT_FOUND);
    ns.removeRank(info.rank());
    info.released();
    // The host says this local process is gone: it no longer counts in nlocalprocs.
    ns.rankDeparted(info.rank());
    // Once told, the host is not told again: no scan of the job's peers at each of the rest of a
    // job's deregistrations (a launcher deregisters every rank at its end: quadratic before).
    if (!ns.localAppFiniFired() && allLocalFinalized(ns)) {
      fireLocalAppFinalized(ns);
    }
    hostCalls.runEpilogs(List.copyOf(info.epilogs()));
    return Status.SUCCESS;
  }

  /**
   * Deregisters a namespace (§6.2.6): every peer and rank released, job and modex data dropped
   * with the namespace, and every registration, request, cached notification and fence naming
   * it purged, so that nothing names it afterwards. Then the "all local processes finalized"
   * notification if it did not fire yet, and the epilogs of its ranks and of the namespace.
   */
  public Status deregisterNspace(String nspace) {
    Namespace ns = registry.namespace(nspace);
    if (ns == null) {
      return Status.ERR_NOT_FOUND;
    }
    boolean hadLocal = !ns.hasNoRanks() || !ns.departedRanks().isEmpty();
    List<RankInfo> ranks = new ArrayList<>(ns.ranks());
    for (Peer p : registry.peersOf(ns)) {
      release(p);
    }
    for (RankInfo r : ranks) {
      r.released();
    }
    ns.clearRanks();
    effects.namespaceGone(ns);
    registry.remove(ns);
    if (hadLocal) {
      // The whole job is gone: every local process counts as done (C reaches nlocalprocs ==
      // nfinalized while it walks the ranks); the latch keeps it to one notification.
      fireLocalAppFinalized(ns);
    }
    List<Runnable> epilogs = new ArrayList<>();
    for (RankInfo r : ranks) {
      epilogs.addAll(r.epilogs());
    }
    epilogs.addAll(ns.epilogs());
    hostCalls.runEpilogs(epilogs);
    return Status.SUCCESS;
  }

  /**
   * Removes a peer for good (deregistration): pruned, slot freed, socket closed. The rank's
   * counters are reset by the caller, which releases the whole rank.
   */
  private void release(Peer p) {
    effects.peerPruned(p);
    registry.vacate(p);
    if (!p.closed()) {
      p.markClosed();
      p.connection().close();
    }
  }

  /**
   * The "all local processes finalized" condition ({@code nlocalprocs == nfinalized}) counted by
   * rank rather than by connection, so clones cannot count twice: every rank still counted in
   * nlocalprocs has a finalized peer and no active one. The one place the decision is made.
   */
  private boolean allLocalFinalized(Namespace ns) {
    if (ns.nlocalprocs() < 0) {
      return false;
    }
    // One pass over the slots, then one over the ranks: this runs at every client's
    // deregistration, and a slot scan per rank made it O(N^2) per call (O(N^3) per job).
    Set<RankInfo> finalized = Collections.newSetFromMap(new IdentityHashMap<>());
    Set<RankInfo> active = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Peer p : registry.peers()) {
      if (p.finalized()) {
        finalized.add(p.info());
      }
      if (p.state() == ServerSnapshot.PeerState.ACTIVE) {
        active.add(p.info());
      }
    }
    int done = 0;
    for (RankInfo r : ns.ranks()) {
      if (ns.departed(r.rank())) {
        continue;
      }
      if (finalized.contains(r) && !active.contains(r)) {
        done++;
      }
    }
    return done >= ns.nlocalprocs();
  }

  /** Tells the host, once per namespace, that all of its local processes finalized. */
  private void fireLocalAppFinalized(Namespace ns) {
    if (!ns.fireLatch()) {
      return;
    }
    String name = ns.name();
    hostCalls.call(() -> host.localAppFinalized(name), (v, failure) -> {});
  }

  // ============================================================================================
  // Shutdown
  // ============================================================================================

  /**
   * Closes every connection (shutdown): the server's own closes are not accounted as departures,
   * so the snapshot keeps showing what was connected.
   */
  public List<CompletableFuture<Void>> closeAll() {
    List<CompletableFuture<Void>> closes = new ArrayList<>();
    for (Peer p : registry.peers()) {
      if (!p.closed()) {
        p.markClosed();
        p.connection().close();
        closes.add(p.connection().closed());
      }
    }
    return closes;
  }
}
