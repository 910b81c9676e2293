package io.pmix.server.internal;

import io.pmix.common.Info;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One job ({@code pmix_namespace_t}): registration, ranks, finalize accounting, job data and the
 * modex data of its processes. Lives until the host deregisters it. Progress thread only.
 */
final class Namespace {
  final String name;
  /** Whether the host called register-nspace (false: a placeholder made by register-client). */
  boolean registered;
  /**
   * The host's local process count; -1 until registered. Reduced (and the rank put in {@link
   * #departedRanks}) when a rank's last process dies unfinalized or the host deregisters the
   * rank; restored when it comes back.
   */
  int nlocalprocs = -1;
  /** Ranks currently subtracted from {@link #nlocalprocs}: lost or deregistered. */
  final Set<Integer> departedRanks = new HashSet<>();
  /** The local process count as the host registered it (job data and locality use this). */
  int registeredNlocalprocs = -1;
  /**
   * Client peers of this namespace in the finalized state (finalizing or tombstoned): raised at
   * FINALIZE, lowered only when such a peer is freed (reclaimed, stranded, deregistered).
   */
  int nfinalized;
  /** One-shot latch of the "all local processes finalized" host notification. */
  boolean localAppFiniFired;
  /** Cleanup the host registered for the whole namespace: run once, at deregistration. */
  final List<Runnable> epilogs = new ArrayList<>();
  List<Info> infos = List.of();
  final TreeMap<Integer, RankInfo> ranks = new TreeMap<>(Integer::compareUnsigned);
  final Map<Integer, ProcData> procData = new HashMap<>();
  /** Job-level values delivered by the host through direct modex for rank WILDCARD. */
  final Map<String, Value> extraJobLevel = new LinkedHashMap<>();
  /** The version string of the first client that connected (C stores it as pmix.bfrops.mod). */
  @Nullable String bfropsVersion;
  private @Nullable JobData jobData;

  Namespace(String name) {
    this.name = name;
  }

  /** Drops the cached job data; the next use rebuilds it. */
  void invalidate() {
    jobData = null;
  }

  /** The job data, built on first use after a change. */
  JobData jobData(String hostname) {
    if (jobData == null) {
      if (!registered) {
        return JobData.empty(registeredNlocalprocs);
      }
      jobData = JobData.build(infos, registeredNlocalprocs, localRanks(), hostname, bfropsVersion);
    }
    return jobData;
  }

  /**
   * The ranks the host registered as local, deregistered ones included: job data is job-scoped
   * and outlives a client's deregistration.
   */
  private List<Integer> localRanks() {
    TreeMap<Integer, Boolean> all = new TreeMap<>(Integer::compareUnsigned);
    for (int r : ranks.keySet()) {
      all.put(r, true);
    }
    for (int r : departedRanks) {
      all.put(r, true);
    }
    return new ArrayList<>(all.keySet());
  }

  /**
   * Whether every local client has been registered (C's {@code all_registered}); a rank the host
   * deregistered since still counts as registered.
   */
  boolean allRegistered() {
    if (!registered) {
      return false;
    }
    int n = ranks.size();
    for (int r : departedRanks) {
      if (!ranks.containsKey(r)) {
        n++;
      }
    }
    return n >= registeredNlocalprocs;
  }

  ProcData data(int rank) {
    return procData.computeIfAbsent(rank, r -> new ProcData());
  }
}
