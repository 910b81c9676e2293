package io.pmix.server.internal;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * One fence in progress ({@code pmix_server_trkr_t}): the sorted participant set, how many local
 * participants must arrive, who has arrived (and on which tag to answer), and whether the host
 * has been handed the cross-node part. Progress thread only.
 */
final class FenceTracker {
  /** A local participant that arrived: where the answer goes. */
  record Arrival(Peer peer, int tag) {}

  final List<Proc> procs;
  final List<Arrival> arrived = new ArrayList<>();
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
    this.procs = List.copyOf(procs);
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
    return defComplete && arrived.size() >= nlocal;
  }
}
