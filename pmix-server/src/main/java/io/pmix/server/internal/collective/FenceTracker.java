package io.pmix.server.internal.collective;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.wire.Command;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.lifecycle.Peer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * One fence, connect, disconnect, group construct or group destruct in progress ({@code
 * pmix_server_trkr_t}, whose {@code type} says which; OpenPMIx runs all five through the same
 * tracker; a group's also has its id, so two groups of the same members never merge): the sorted participant set, how
 * many local participants must arrive, who has arrived (and on which tag to answer), and whether
 * the host has been handed the cross-node part. Progress thread only.
 *
 * <p>Participants are counted by identity (namespace, rank), as OpenPMIx master does, not by
 * connection: a rank has contributed once any of its processes (a clone, or the same rank in a
 * later init/finalize cycle) {@linkplain #arrive arrived}, and it stops being waited for only when
 * it {@linkplain #depart departs}: its last process died unfinalized, or it was deregistered. An
 * orderly finalize never removes a rank from a fence: the rank can init again and join it
 * (docs/lifecycle.md §6.2.10, no shared-state mutation while a collective is in flight).
 */
final class FenceTracker {
  /** A local participant that arrived: where the answer goes. */
  record Arrival(Peer peer, int tag) {}

  /**
   * What the registry says of the participants: whether all are local, how many local ranks
   * must arrive, the local ranks not counted because they are gone for now, and whether every
   * participating namespace is known well enough to count.
   */
  record Census(boolean local, int nlocal, Set<Proc> excluded, boolean complete) {}

  private final List<Proc> procs;
  /** FENCENB, CONNECTNB, DISCONNECTNB or a group command: different types never merge. */
  private final Command type;
  /** The group's id (group commands only). */
  private final @Nullable String groupId;
  /** Every caller's directives, in arrival order (a group aggregates them, as 5.0.11 does). */
  private final List<Info> allDirectives = new ArrayList<>();
  private final boolean collect;
  /** Every arrival, clones and dead peers included: each live one is answered. */
  private final List<Arrival> arrived = new ArrayList<>();
  /** Local ranks that contributed, by identity. */
  private final Set<Proc> contributed = new HashSet<>();
  /** Counted ranks that departed (lost or deregistered) before contributing. */
  private final Set<Proc> departed = new HashSet<>();
  /**
   * Local ranks not counted in {@link #nlocal} because they were already gone (lost or
   * deregistered) when the tracker was counted: counted again if they come back.
   */
  private final Set<Proc> excluded = new HashSet<>();
  /** Every participant is local: no host upcall needed. */
  private boolean local = true;
  /** Every participating namespace is known well enough to count the local participants. */
  private boolean countComplete;
  /** Local participants expected. */
  private int nlocal;
  /** The first caller's directives. */
  private @Nullable List<Info> info;
  /** Participants disagreed about data collection (completes with ERR_INVALID_ARG). */
  private boolean collectMismatch;
  /** The local collective status: PARTIAL_SUCCESS or LOST_CONNECTION once a participant died. */
  private Status localStatus = Status.SUCCESS;
  private boolean hostCalled;
  private @Nullable ScheduledFuture<?> timer;

  FenceTracker(List<Proc> procs, Command type, boolean collect) {
    this(procs, type, collect, null);
  }

  FenceTracker(List<Proc> procs, Command type, boolean collect, @Nullable String groupId) {
    this.procs = List.copyOf(procs);
    this.type = type;
    this.collect = collect;
    this.groupId = groupId;
  }

  /** The group's id; null unless this is a group command's tracker. */
  @Nullable String groupId() {
    return groupId;
  }

  /** The sorted participant entries. */
  List<Proc> procs() {
    return procs;
  }

  Command type() {
    return type;
  }

  /** Whether this is the tracker of a {@code type} collective over exactly {@code procs}. */
  boolean matches(Command otherType, List<Proc> otherProcs) {
    return matches(otherType, otherProcs, null);
  }

  /** As {@link #matches(Command, List)}, for the group {@code id} (null: not a group). */
  boolean matches(Command otherType, List<Proc> otherProcs, @Nullable String id) {
    return type == otherType && procs.equals(otherProcs) && Objects.equals(groupId, id);
  }

  boolean collect() {
    return collect;
  }

  boolean collectMismatch() {
    return collectMismatch;
  }

  /** Whether every participant is local (no host upcall needed). */
  boolean isLocal() {
    return local;
  }

  /** Whether every participating namespace is known well enough to count. */
  boolean countComplete() {
    return countComplete;
  }

  boolean hostCalled() {
    return hostCalled;
  }

  /** The host has the cross-node part now: local arrivals and departures no longer decide it. */
  void markHostCalled() {
    hostCalled = true;
  }

  /** The local collective status (docs/commands.md §3.4): success, partial or lost. */
  Status localStatus() {
    return localStatus;
  }

  /** Every arrival, in order. */
  List<Arrival> arrivals() {
    return Collections.unmodifiableList(arrived);
  }

  /** The distinct identities that arrived, in arrival order. */
  List<Proc> arrivedProcs() {
    List<Proc> out = new ArrayList<>();
    for (Arrival a : arrived) {
      if (!out.contains(a.peer().proc())) {
        out.add(a.peer().proc());
      }
    }
    return out;
  }

  /** Takes the registry's count of the local participants. */
  void recount(Census c) {
    local = c.local();
    nlocal = c.nlocal();
    excluded.clear();
    excluded.addAll(c.excluded());
    departed.removeAll(excluded);
    countComplete = c.complete();
  }

  /**
   * {@code peer} arrived with these directives: its rank has contributed (once, whichever of its
   * processes arrives), and is counted again if it was gone. A caller the participants do not
   * name (a connect's parent naming only the job it spawned) is answered with the others but
   * contributes nothing: counted, it would complete the collective before a participant came.
   */
  void arrive(Peer peer, int tag, boolean peerCollects, List<Info> directives) {
    if (peerCollects != collect) {
      collectMismatch = true;
    }
    if (info == null) {
      info = List.copyOf(directives);
    }
    allDirectives.addAll(directives);
    arrived.add(new Arrival(peer, tag));
    Proc p = peer.proc();
    if (!includes(p)) {
      return;
    }
    if (excluded.remove(p)) {
      nlocal++;
    }
    if (departed.remove(p)) {
      localStatus = statusAfterDepartures();
    }
    contributed.add(p);
  }

  /**
   * A rank will not contribute any more (lost or deregistered). Returns whether that changes this
   * tracker: only a counted rank that has not contributed departs; a rank that contributed
   * (through any of its processes) stays contributed, as OpenPMIx master has it.
   */
  boolean depart(Proc p) {
    if (!includes(p) || contributed.contains(p) || excluded.contains(p)) {
      return false;
    }
    if (!departed.add(p)) {
      return false;
    }
    localStatus = statusAfterDepartures();
    return true;
  }

  /**
   * A rank is a local process again: the tracker waits for it again (unless the host has it
   * already). A contribution only dead processes of the rank made is void: the rank's new
   * process starts over and will contribute itself, so keeping the old one would count the rank
   * twice and mix the two incarnations' fences.
   */
  void returned(Proc p) {
    if (hostCalled) {
      return;
    }
    if (excluded.remove(p)) {
      nlocal++;
    } else if (departed.remove(p)) {
      localStatus = statusAfterDepartures();
    } else if (contributed.contains(p)
        && arrived.stream().noneMatch(a -> a.peer().proc().equals(p) && !a.peer().closed())
        && arrived.stream()
            .anyMatch(a -> a.peer().proc().equals(p)
                && a.peer().state() == ServerSnapshot.PeerState.LOST)) {
      arrived.removeIf(a -> a.peer().proc().equals(p));
      contributed.remove(p);
    }
  }

  /**
   * Whether a named local rank will not contribute: it departed before contributing, or was
   * already gone when the tracker was counted. A fence goes on without it; a group cannot.
   */
  boolean missingMembers() {
    return !departed.isEmpty() || !excluded.isEmpty();
  }

  /** Every counted local rank has contributed or departed, and the count is final. */
  boolean locallyComplete() {
    return countComplete && contributed.size() + departed.size() >= nlocal;
  }

  /**
   * The 4.2.2 local collective status: success, or partial/lost once a counted rank departed.
   * Partial while anyone is left to answer: a counted rank, or a caller the participants do not
   * name (simpdyn's parent, whose connect to a job that finalized without connecting gets -52, as
   * under prterun).
   */
  private Status statusAfterDepartures() {
    if (departed.isEmpty()) {
      return Status.SUCCESS;
    }
    return nlocal - departed.size() > 0 || !arrived.isEmpty()
        ? Status.ERR_PARTIAL_SUCCESS
        : Status.ERR_LOST_CONNECTION;
  }

  /**
   * What the host's fence, connect or disconnect upcall is told: the first caller's directives,
   * then that the procs are sorted and the local collective status, as 4.2.2 appends them.
   */
  List<Info> hostInfo() {
    List<Info> out = new ArrayList<>(info == null ? List.of() : info);
    out.add(Info.of(Keys.SORTED_PROC_ARRAY, Value.of(true)));
    out.add(Info.of(Keys.LOCAL_COLLECTIVE_STATUS, Value.status(localStatus)));
    return List.copyOf(out);
  }

  /**
   * A group's host upcall's info: every caller's directives (as 5.0.11 aggregates them), then the
   * sorted flag and the local collective status.
   */
  List<Info> groupHostInfo() {
    List<Info> out = new ArrayList<>(allDirectives);
    out.add(Info.of(Keys.SORTED_PROC_ARRAY, Value.of(true)));
    out.add(Info.of(Keys.LOCAL_COLLECTIVE_STATUS, Value.status(localStatus)));
    return List.copyOf(out);
  }

  /** Every caller's directives, in arrival order. */
  List<Info> allDirectives() {
    return Collections.unmodifiableList(allDirectives);
  }

  /** Whether {@code p} is named by a participant entry (a WILDCARD entry names every rank). */
  boolean includes(Proc p) {
    for (Proc q : procs) {
      if (q.nspace().equals(p.nspace())
          && (q.rank() == Proc.RANK_WILDCARD || q.rank() == p.rank())) {
        return true;
      }
    }
    return false;
  }

  /** Whether a participant entry names this namespace. */
  boolean namesNamespace(String nspace) {
    for (Proc q : procs) {
      if (q.nspace().equals(nspace)) {
        return true;
      }
    }
    return false;
  }

  boolean hasTimer() {
    return timer != null;
  }

  void timer(ScheduledFuture<?> t) {
    timer = t;
  }

  /** The timer fired: it no longer needs cancelling. */
  void timerFired() {
    timer = null;
  }

  void cancelTimer() {
    if (timer != null) {
      boolean unused = timer.cancel(false);
      timer = null;
    }
  }
}
