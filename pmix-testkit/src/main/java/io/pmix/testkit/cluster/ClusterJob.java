package io.pmix.testkit.cluster;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedSet;
import java.util.stream.Collectors;

/**
 * Where the ranks of one namespace live in a {@link PmixCluster}: for each node (by index), the
 * ranks it hosts. Every node's server is given the same job-level data ({@link #jobInfo}): the
 * job size, the node map and the process map, from which each server derives what a client asks
 * at init (its local peers, local size, node count, the node of every rank) and which ranks are
 * remote, i.e. reached through the host's fence and direct modex.
 *
 * <p>Immutable and thread-safe.
 */
public final class ClusterJob {
  private final String nspace;
  private final ImmutableList<ImmutableList<Integer>> ranksByNode;
  private final int[] nodeOfRank;
  /** The sizes of the apps, whose ranks are consecutive, app 0's first (PRRTE's rule). */
  private final ImmutableList<Integer> appSizes;

  private ClusterJob(
      String nspace,
      ImmutableList<ImmutableList<Integer>> ranksByNode,
      int[] nodes,
      ImmutableList<Integer> appSizes) {
    this.nspace = nspace;
    this.ranksByNode = ranksByNode;
    this.nodeOfRank = nodes;
    this.appSizes = appSizes;
  }

  /**
   * A job with the given ranks on each node.
   *
   * @param nspace the namespace
   * @param ranksByNode element {@code i}: the ranks on node {@code i}, in any order; a node may
   *     host none. Together the lists must hold ranks 0 to size-1, each once.
   * @throws IllegalArgumentException if the ranks are not 0 to size-1 exactly once, or no rank is
   *     given
   */
  public static ClusterJob of(String nspace, List<? extends List<Integer>> ranksByNode) {
    int size = ranksByNode.stream().mapToInt(List::size).sum();
    return of(nspace, ranksByNode, List.of(size));
  }

  /**
   * A job of several apps (MPMD) with the given ranks on each node: as PRRTE numbers them, each
   * app's ranks are consecutive, app 0's first, so app {@code a} holds the {@code appSizes[a]}
   * ranks after the earlier apps'.
   *
   * @throws IllegalArgumentException as {@link #of(String, List)}, or if the app sizes are not
   *     positive or do not add up to the job's size
   */
  public static ClusterJob of(
      String nspace, List<? extends List<Integer>> ranksByNode, List<Integer> appSizes) {
    Proc unusedCheck = Proc.of(requireNonNull(nspace, "nspace"), 0); // validates the name
    int size = ranksByNode.stream().mapToInt(List::size).sum();
    checkArgument(size > 0, "a job needs at least one rank");
    int[] nodes = new int[size];
    Arrays.fill(nodes, -1);
    ImmutableList.Builder<ImmutableList<Integer>> copy = ImmutableList.builder();
    for (int n = 0; n < ranksByNode.size(); n++) {
      List<Integer> ranks = ImmutableList.sortedCopyOf(ranksByNode.get(n));
      for (int r : ranks) {
        checkArgument(r >= 0 && r < size, "rank %s out of range 0..%s", r, size - 1);
        checkArgument(nodes[r] < 0, "rank %s placed twice", r);
        nodes[r] = n;
      }
      copy.add(ImmutableList.copyOf(ranks));
    }
    checkArgument(
        !appSizes.isEmpty()
            && appSizes.stream().allMatch(s -> s > 0)
            && appSizes.stream().mapToInt(Integer::intValue).sum() == size,
        "app sizes %s do not make %s ranks",
        appSizes,
        size);
    return new ClusterJob(nspace, copy.build(), nodes, ImmutableList.copyOf(appSizes));
  }

  /** {@code perNode} consecutive ranks on each of {@code nodes} nodes (0..perNode-1 on node 0). */
  public static ClusterJob blocks(String nspace, int nodes, int perNode) {
    checkArgument(nodes > 0 && perNode > 0, "nodes and perNode must be positive");
    List<List<Integer>> layout = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      List<Integer> ranks = new ArrayList<>();
      for (int i = 0; i < perNode; i++) {
        ranks.add(n * perNode + i);
      }
      layout.add(ranks);
    }
    return of(nspace, layout);
  }

  /** {@code size} ranks dealt round robin over {@code nodes} nodes: rank r on node r % nodes. */
  public static ClusterJob cyclic(String nspace, int nodes, int size) {
    checkArgument(nodes > 0 && size > 0, "nodes and size must be positive");
    List<List<Integer>> layout = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      layout.add(new ArrayList<>());
    }
    for (int r = 0; r < size; r++) {
      layout.get(r % nodes).add(r);
    }
    return of(nspace, layout);
  }

  /** The namespace. */
  public String nspace() {
    return nspace;
  }

  /** The number of ranks. */
  public int size() {
    return nodeOfRank.length;
  }

  /** The sizes of the apps, app 0's first; one app unless made MPMD. */
  public List<Integer> appSizes() {
    return appSizes;
  }

  /** The app of {@code rank}, or -1 if the job has no such rank. */
  public int appOf(int rank) {
    int end = 0;
    for (int a = 0; a < appSizes.size(); a++) {
      end += appSizes.get(a);
      if (rank >= 0 && rank < end) {
        return a;
      }
    }
    return -1;
  }

  /** The first rank of app {@code app}: its leader. */
  public int appLeader(int app) {
    int first = 0;
    for (int a = 0; a < app; a++) {
      first += appSizes.get(a);
    }
    return first;
  }

  /** The number of node slots the layout names (nodes beyond it host no rank of this job). */
  public int nodeSlots() {
    return ranksByNode.size();
  }

  /** The ranks on node {@code node}, ascending; empty for a node hosting none. */
  public List<Integer> ranksOn(int node) {
    return node >= 0 && node < ranksByNode.size() ? ranksByNode.get(node) : List.of();
  }

  /** The node hosting {@code rank}, or -1 if the job has no such rank. */
  public int nodeOf(int rank) {
    return rank >= 0 && rank < nodeOfRank.length ? nodeOfRank[rank] : -1;
  }

  /**
   * The nodes hosting {@code proc} of this job: its node, or for rank WILDCARD every node that
   * hosts a rank. Adds them to {@code into}.
   *
   * @throws PmixException with {@code ERR_BAD_PARAM} if the job has no such rank
   */
  public void addNodesOf(Proc proc, SortedSet<Integer> into) {
    if (proc.rank() == Proc.RANK_WILDCARD) {
      for (int n = 0; n < ranksByNode.size(); n++) {
        if (!ranksByNode.get(n).isEmpty()) {
          into.add(n);
        }
      }
    } else if (nodeOf(proc.rank()) >= 0) {
      into.add(nodeOf(proc.rank()));
    } else {
      throw new PmixException(Status.ERR_BAD_PARAM, "no process " + proc + " in " + nspace);
    }
  }

  /** The process {@code rank} of this job. */
  public Proc proc(int rank) {
    checkArgument(nodeOf(rank) >= 0, "no rank %s in %s", rank, nspace);
    return Proc.of(nspace, rank);
  }

  /**
   * The node map in the {@code raw:} form: the names of the nodes that host ranks, in node order.
   *
   * @param hostnames the cluster's node names, by index
   */
  public String nodeMap(List<String> hostnames) {
    List<String> used = new ArrayList<>();
    for (int n = 0; n < ranksByNode.size(); n++) {
      if (!ranksByNode.get(n).isEmpty()) {
        used.add(hostnames.get(n));
      }
    }
    return "raw:" + String.join(",", used);
  }

  /**
   * The process map in the {@code raw:} form, matching {@link #nodeMap}: for each node that hosts
   * ranks, its ranks separated by commas, the nodes separated by semicolons.
   */
  public String procMap() {
    return "raw:"
        + ranksByNode.stream()
            .filter(l -> !l.isEmpty())
            .map(l -> l.stream().map(String::valueOf).collect(Collectors.joining(",")))
            .collect(Collectors.joining(";"));
  }

  /**
   * The job-level data every node registers ({@code PMIx_server_register_nspace}), the same on
   * each node, as a multi-node host such as PRRTE gives it: namespace and job id; job, universe
   * and maximum size; node count and one app; the node and process maps; the app's data
   * ({@code pmix.app.arr}: app 0, its size and leader); and for every rank, wherever it lives, a
   * {@code pmix.pdata} array with its app number, local and node rank (its position on its node),
   * node id (its node's position in the node map), host name, global and app rank. From the maps
   * each server derives the per-node data itself: every node's local peers, local size and leader,
   * which tells it which ranks are remote.
   *
   * @param hostnames the cluster's node names, by index (at least {@link #nodeSlots} of them)
   */
  public List<Info> jobInfo(List<String> hostnames) {
    checkArgument(
        hostnames.size() >= ranksByNode.size(),
        "%s names %s nodes, the cluster has %s",
        nspace,
        ranksByNode.size(),
        hostnames.size());
    int nodesUsed = (int) ranksByNode.stream().filter(l -> !l.isEmpty()).count();
    List<Info> job = new ArrayList<>();
    job.add(Info.of(Keys.NSPACE, Value.of(nspace)));
    job.add(Info.of(Keys.JOBID, Value.of(nspace)));
    job.add(Info.of(Keys.JOB_SIZE, Value.uint32(size())));
    job.add(Info.of(Keys.UNIV_SIZE, Value.uint32(size())));
    job.add(Info.of(Keys.MAX_PROCS, Value.uint32(size())));
    job.add(Info.of(Keys.NUM_NODES, Value.uint32(nodesUsed)));
    job.add(Info.of(Keys.JOB_NUM_APPS, Value.uint32(appSizes.size())));
    job.add(Info.of(Keys.NODE_MAP, Value.of(nodeMap(hostnames))));
    job.add(Info.of(Keys.PROC_MAP, Value.of(procMap())));
    for (int a = 0; a < appSizes.size(); a++) {
      job.add(
          Info.of(
              Keys.APP_INFO_ARRAY,
              DataArray.ofInfos(
                  List.of(
                      Info.of(Keys.APPNUM, Value.uint32(a)),
                      Info.of(Keys.APP_SIZE, Value.uint32(appSizes.get(a))),
                      Info.of(Keys.APPLDR, Value.rank(appLeader(a)))))));
    }
    int nodeId = 0;
    for (int n = 0; n < ranksByNode.size(); n++) {
      List<Integer> ranks = ranksByNode.get(n);
      if (ranks.isEmpty()) {
        continue;
      }
      for (int i = 0; i < ranks.size(); i++) {
        int r = ranks.get(i);
        job.add(
            Info.of(
                Keys.PROC_DATA,
                DataArray.ofInfos(
                    List.of(
                        Info.of(Keys.RANK, Value.rank(r)),
                        Info.of(Keys.APPNUM, Value.uint32(appOf(r))),
                        Info.of(Keys.LOCAL_RANK, Value.uint16(i)),
                        Info.of(Keys.NODE_RANK, Value.uint16(i)),
                        Info.of(Keys.NODEID, Value.uint32(nodeId)),
                        Info.of(Keys.HOSTNAME, Value.of(hostnames.get(n))),
                        Info.of(Keys.GLOBAL_RANK, Value.rank(r)),
                        Info.of(Keys.APP_RANK, Value.rank(r - appLeader(appOf(r))))))));
      }
      nodeId++;
    }
    return List.copyOf(job);
  }

  @Override
  public String toString() {
    return "ClusterJob{" + nspace + " " + ranksByNode
        + (appSizes.size() > 1 ? " apps " + appSizes : "") + "}";
  }
}
