package io.pmix.server.internal;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * One fence, connect or disconnect in progress ({@code pmix_server_trkr_t}, whose {@code type}
 * says which; 4.2.2 runs all three through the same tracker): the sorted participant set, how many local
 * participants must arrive, who has arrived (and on which tag to answer), and whether the host
 * has been handed the cross-node part. Progress thread only.
 *
 * <p>Participants are counted by identity (namespace, rank), as OpenPMIx master does, not by
 * connection: a rank has contributed once any of its processes (a clone, or the same rank in a
 * later init/finalize cycle) arrived, and it stops being waited for only when it is lost (its
 * last process died unfinalized) or deregistered. An orderly finalize never removes a rank from a
 * fence: the rank can init again and join it.
 */
final class FenceTracker {
  /** A local participant that arrived: where the answer goes. */
  record Arrival(Peer peer, int tag) {}

  final List<Proc> procs;
  /** FENCENB, CONNECTNB or DISCONNECTNB: trackers of different types never merge. */
  final Command type;
  /** Every arrival, clones and dead peers included: each live one is answered. */
  final List<Arrival> arrived = new ArrayList<>();
  /** Local ranks that contributed, by identity. */
  final Set<Proc> contributed = new HashSet<>();
  /** Counted ranks that departed (lost or deregistered) before contributing. */
  final Set<Proc> departed = new HashSet<>();
  /**
   * Local ranks not counted in {@link #nlocal} because they were already gone (lost or
   * deregistered) when the tracker was made: counted again if they come back.
   */
  final Set<Proc> excluded = new HashSet<>();
  /** Namespaces with local participants, in the order relative ranks are counted. */
  final List<Namespace> nslist = new ArrayList<>();
  /** Every participant is local: no host upcall needed. */
  boolean local = true;
  /** Every participating namespace is known well enough to count the local participants. */
  boolean defComplete;
  /** Local participants expected. */
  int nlocal;
  /** The first caller's directives. */
  @Nullable List<Info> info;
  boolean collect;
  /** Participants disagreed about data collection (completes with ERR_INVALID_ARG). */
  boolean collectMismatch;
  /** The local collective status: PARTIAL_SUCCESS or LOST_CONNECTION once a participant died. */
  Status localStatus = Status.SUCCESS;
  boolean hostCalled;
  @Nullable ScheduledFuture<?> timer;

  FenceTracker(List<Proc> procs) {
    this(procs, Command.FENCENB);
  }

  FenceTracker(List<Proc> procs, Command type) {
    this.procs = List.copyOf(procs);
    this.type = type;
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

  boolean locallyComplete() {
    return defComplete && contributed.size() + departed.size() >= nlocal;
  }

  /** The 4.2.2 local collective status: success, or partial/lost once a counted rank departed. */
  Status statusAfterDepartures() {
    if (departed.isEmpty()) {
      return Status.SUCCESS;
    }
    return nlocal - departed.size() > 0 ? Status.ERR_PARTIAL_SUCCESS : Status.ERR_LOST_CONNECTION;
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
}
