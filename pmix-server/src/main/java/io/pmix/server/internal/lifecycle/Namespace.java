package io.pmix.server.internal.lifecycle;

import io.pmix.common.Info;
import io.pmix.server.internal.JobData;
import io.pmix.server.internal.modex.NamespaceData;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One job ({@code pmix_namespace_t}, docs/lifecycle.md §6.2.2): registration, ranks, the local
 * process count, job data and the modex data of its processes. Lives until the host deregisters
 * it. Its ranks are changed by the {@link Registry}; its counters ({@link #nlocalprocs}, the
 * departed ranks, the one-shot latch) only by {@link PeerLifecycle}, through the package-private
 * mutators here. Progress thread only.
 */
public final class Namespace {
  private final String name;
  /** Whether the namespace was made for tools (not by the host): dropped with its last rank. */
  private final boolean madeForTools;
  /**
   * Whether a singleton's connection made the namespace (not the host): it belongs to {@link
   * #singletonUid} alone, is dropped with its last peer, and a host registration of its name
   * takes the name back.
   */
  private final boolean madeBySingleton;
  /** The uid of the singleton that made the namespace (meaningful only if made by one). */
  private final int singletonUid;
  /** Whether the host called register-nspace (false: a placeholder). */
  private boolean registered;
  /**
   * The host's local process count; -1 until registered. Reduced (and the rank put in {@link
   * #departedRanks}) when a rank's last process dies unfinalized or the host deregisters the
   * rank; restored when it comes back.
   */
  private int nlocalprocs = -1;
  /** Ranks currently subtracted from {@link #nlocalprocs}: lost or deregistered. */
  private final Set<Integer> departedRanks = new HashSet<>();
  /** The local process count as the host registered it (job data and locality use this). */
  private int registeredNlocalprocs = -1;
  /** One-shot latch of the "all local processes finalized" host notification. */
  private boolean localAppFiniFired;
  /** Cleanup the host registered for the whole namespace: run once, at deregistration. */
  private final List<Runnable> epilogs = new ArrayList<>();
  private List<Info> infos = List.of();
  private final TreeMap<Integer, RankInfo> ranks = new TreeMap<>(Integer::compareUnsigned);
  private final NamespaceData data = new NamespaceData();
  /** The version string of the first client that connected (C stores it as pmix.bfrops.mod). */
  private @Nullable String bfropsVersion;
  private @Nullable JobData jobData;
  /**
   * Counts the changes that alter the job data's content (a registration, a rank's change); the
   * first client's version does not count: the stores append it to what they hold.
   */
  private long jobDataGeneration;

  Namespace(String name, boolean madeForTools) {
    this.name = name;
    this.madeForTools = madeForTools;
    this.madeBySingleton = false;
    this.singletonUid = -1;
  }

  /** A namespace a singleton of {@code uid} made for itself. */
  Namespace(String name, int singletonUid) {
    this.name = name;
    this.madeForTools = false;
    this.madeBySingleton = true;
    this.singletonUid = singletonUid;
  }

  /** The namespace's name. */
  public String name() {
    return name;
  }

  /** Whether the host registered it (false: a placeholder for ranks, tools or remote data). */
  public boolean registered() {
    return registered;
  }

  /** The host's local process count less the departed ranks; -1 until registered. */
  public int nlocalprocs() {
    return nlocalprocs;
  }

  /** The local process count as the host registered it; -1 until registered. */
  public int registeredNlocalprocs() {
    return registeredNlocalprocs;
  }

  /** Whether {@code rank} is subtracted from {@link #nlocalprocs} (lost or deregistered). */
  public boolean departed(int rank) {
    return departedRanks.contains(rank);
  }

  /** The ranks subtracted from {@link #nlocalprocs}; a read-only view. */
  public Set<Integer> departedRanks() {
    return Collections.unmodifiableSet(departedRanks);
  }

  /** Whether the "all local processes finalized" notification went to the host. */
  public boolean localAppFiniFired() {
    return localAppFiniFired;
  }

  /** Whether the server made the namespace for tools (the host may have registered it since). */
  boolean madeForTools() {
    return madeForTools;
  }

  /**
   * Whether a singleton's connection made the namespace: then it is that singleton user's alone
   * ({@link #singletonUid}), never the host's.
   */
  public boolean madeBySingleton() {
    return madeBySingleton;
  }

  /** The uid of the singleton that made the namespace; only meaningful if {@link #madeBySingleton}. */
  public int singletonUid() {
    return singletonUid;
  }

  /** Whether the namespace was made for tools and the host never registered it. */
  public boolean isToolNamespace() {
    return madeForTools && !registered;
  }

  /** The registration of {@code rank}, or null. */
  public @Nullable RankInfo rank(int rank) {
    return ranks.get(rank);
  }

  /** Whether {@code rank} is registered here. */
  public boolean hasRank(int rank) {
    return ranks.containsKey(rank);
  }

  /** Whether no rank is registered. */
  public boolean hasNoRanks() {
    return ranks.isEmpty();
  }

  /** The registered ranks in unsigned rank order; a read-only view. */
  public Collection<RankInfo> ranks() {
    return Collections.unmodifiableCollection(ranks.values());
  }

  /** The registered rank numbers in unsigned order; a read-only view. */
  public Set<Integer> rankNumbers() {
    return Collections.unmodifiableSet(ranks.keySet());
  }

  /**
   * Whether this namespace has local processes this server knows of: registered by the host, or
   * with ranks (registered clients, singletons, tools). A namespace that is neither holds only
   * data the host delivered for another node's processes.
   */
  public boolean hosted() {
    return registered || !ranks.isEmpty();
  }

  /** The modex data of its processes. */
  public NamespaceData data() {
    return data;
  }

  /** The job data, built on first use after a change. */
  public JobData jobData(String hostname) {
    if (jobData == null) {
      if (!registered) {
        return JobData.empty(registeredNlocalprocs);
      }
      jobData = JobData.build(infos, registeredNlocalprocs, localRanks(), hostname, bfropsVersion);
    }
    return jobData;
  }

  /**
   * A client of the registered namespace asks for its job data: 4.2.2 stores the first client's
   * version string in it as {@code pmix.bfrops.mod}.
   */
  public void noteClientVersion(String version) {
    if (bfropsVersion == null && registered) {
      bfropsVersion = version;
      // One value more: no need to build the whole job data again.
      JobData jd = jobData;
      jobData = jd == null ? null : jd.withBfropsVersion(version);
    }
  }

  /**
   * Whether every local client has been registered (C's {@code all_registered}); a rank the host
   * deregistered since still counts as registered.
   */
  public boolean allRegistered() {
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

  // ---- registration (PeerLifecycle) ----

  /**
   * The job data a registration with these values would have; throws what {@link JobData#build}
   * throws for a malformed one. Changes nothing.
   */
  JobData candidateJobData(int newNlocalprocs, List<Info> newInfos, String hostname) {
    return JobData.build(newInfos, newNlocalprocs, localRanks(), hostname, bfropsVersion);
  }

  /**
   * The host registered the namespace (again) with {@code built} as its job data: the host's
   * count is authoritative again, nothing is subtracted from it any more.
   */
  void register(int newNlocalprocs, List<Info> newInfos, JobData built) {
    registered = true;
    nlocalprocs = newNlocalprocs;
    registeredNlocalprocs = newNlocalprocs;
    infos = List.copyOf(newInfos);
    jobData = built;
    jobDataGeneration++;
    departedRanks.clear();
  }

  /** A rank changed: the job data is rebuilt at its next use. */
  void invalidate() {
    jobData = null;
    jobDataGeneration++;
  }

  /**
   * Which content the job data has: equal numbers, equal data but for the first client's version
   * (pmix.bfrops.mod), which may have been added since.
   */
  public long jobDataGeneration() {
    return jobDataGeneration;
  }

  List<Runnable> epilogs() {
    return epilogs;
  }

  void addEpilog(Runnable epilog) {
    epilogs.add(epilog);
  }

  // ---- ranks (Registry) ----

  void putRank(RankInfo info) {
    ranks.put(info.rank(), info);
  }

  void removeRank(int rank) {
    ranks.remove(rank);
  }

  void clearRanks() {
    ranks.clear();
  }

  // ---- the lifecycle counters (PeerLifecycle only) ----

  /** {@code rank} is no longer a local process (lost or deregistered), once. */
  void rankDeparted(int rank) {
    if (!departedRanks.contains(rank) && nlocalprocs > 0) {
      departedRanks.add(rank);
      nlocalprocs--;
    }
  }

  /** {@code rank} is a local process again, if it had departed. */
  void rankReturned(int rank) {
    if (departedRanks.remove(rank)) {
      nlocalprocs++;
    }
  }

  /** Sets the one-shot latch; true only the first time. */
  boolean fireLatch() {
    if (localAppFiniFired) {
      return false;
    }
    localAppFiniFired = true;
    return true;
  }
}
