package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import io.pmix.client.PMIx;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.testkit.cluster.ClusterJob;
import io.pmix.testkit.cluster.RemoteModex;
import java.io.ByteArrayOutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * {@code pmixrun} nested under another PMIx runtime: started as a process of an outer job (by
 * {@code srun --mpi=pmix}, {@code mpirun}, {@code prterun}: {@code PMIX_NAMESPACE}, {@code
 * PMIX_RANK} and a server URI in its environment), each pmixrun is one node of ONE inner job and
 * uses pmix-java's own client to reach the outer runtime for what crosses nodes.
 *
 * <ul>
 *   <li><b>Joining</b> ({@link #join}): {@code PMIx.init} to the outer server; the outer job's
 *       size is the number of nodes, each pmixrun's outer rank its node index. One collecting
 *       outer fence exchanges what each node brings ({@value #NODE_KEY}: its host, how many
 *       processes of each app it runs, its direct-modex endpoint). The inner job's ranks are
 *       consecutive per node in outer-rank order (node 0's first), or with {@code --map-by node}
 *       dealt round robin over the nodes ({@link #placement}); an MPMD job's ({@code pmixrun --app
 *       FILE} on every node, the same apps) app by app, each app's ranks placed so ({@link
 *       #layout}, as PRRTE ranks one map per app). Node names are the outer runtime's host names,
 *       made distinct when several nodes share a host ({@code host-<outer rank>}), so each outer
 *       rank is a node of its own even on one machine.
 *   <li><b>The inner job</b>: namespace {@code jrun-<outer namespace>@1} ({@link #prefixOf};
 *       never {@code pmix...}), the same on every node, registered on every node with
 *       the whole job's data ({@link ClusterJob#jobInfo}: sizes, node and process maps, every
 *       rank's node, host and local rank), from which each node's server derives its own local
 *       peers; the servers' namespace {@code jrun-<outer namespace>@0}, rank the node index.
 *   <li><b>Fences</b> that reach the host ({@link #fence}): one outer fence over the outer ranks
 *       of the participating nodes. When collecting, each node first puts its contribution (the
 *       local participants' data) under a key naming the collective, and the outer fence
 *       collects; each node then reads the others' contributions from the outer modex and hands
 *       them all back to its server. Without collecting, the outer fence carries no data. The
 *       collective's key is the fence's proc list plus how many fences over that list this node
 *       ran before, so the nodes agree without a coordinator (they run fences over one list in
 *       the same order, as every PMIx fence requires).
 *   <li><b>Direct modex</b> of a rank on another node: over a TCP link between the node servers
 *       ({@link RemoteModex}), whose endpoints were exchanged at joining. PMIx gives a client of
 *       the outer job no request the owning node could answer on demand (see there).
 *   <li><b>Connect, disconnect, groups</b> among the inner job's processes on several nodes: a
 *       collecting outer fence of their nodes, as a fence ({@link NestedCollectives}: why, and
 *       how context ids are agreed).
 *   <li><b>Job control</b> ({@link SingleNodeHost}): of processes of this node only; any target
 *       on another node, a whole job or every job is refused with {@code NOT_SUPPORTED}.
 *   <li><b>Spawn</b>: refused with {@code NOT_SUPPORTED}. A spawned job would have to be
 *       registered on every node's server (so that connects and gets from any node know it),
 *       its layout known to the direct-modex link, and deregistered everywhere when it ends: a
 *       request from one node's pmixrun to the others' (a message on the {@link RemoteModex}
 *       link, answered once registered), which they do not have yet. The outer runtime cannot
 *       carry it: a client of the outer job cannot make another act on demand.
 *   <li><b>Losses</b> ({@link #watch}): the outer runtimes tell the survivors of a lost rank
 *       nothing (mpirun 4.1 and prterun 3.0 fail or even complete the fence under way, then
 *       SIGTERM them; docs/libpmix-facts.md §4), so the nodes watch each other over their
 *       direct-modex links: a node whose process died tells the others ({@link #announceLost}),
 *       and a node whose pmixrun ended is seen by its link closing. Either way the other nodes
 *       tell their processes as pmixrun tells them of a local death ({@code
 *       PMIX_ERR_PROC_ABORTED} from the first lost rank, {@code pmix.evaffected} naming them
 *       all), fail the fences across nodes under way ({@code PMIX_ERR_PARTIAL_SUCCESS}) and end
 *       the job after the grace; no node aborts the outer job before the grace has passed, so
 *       every node's survivors get it. A node whose outer server goes away ({@code
 *       PMIX_ERR_LOST_CONNECTION} on its client: the outer launcher died) ends its processes at
 *       once.
 *   <li><b>Leaving</b> ({@link #leave}): after the local processes ended, a plain outer fence (so
 *       that every node keeps serving direct-modex requests until every node's processes are
 *       done), then {@code PMIx.finalize}. A node whose processes failed instead calls {@code
 *       PMIx.abort} with the failure's status, which ends every node: the outer runtime kills
 *       the other pmixruns, which kill their processes.
 * </ul>
 *
 * <p>Threading: {@link #fence} and {@link #directModex} are called on the server's host executor
 * and only start asynchronous client calls. The fence rounds are guarded by this object's lock,
 * never held across a client call.
 */
final class Nested implements SingleNodeHost.OtherNodes {
  /**
   * The outer modex key of a node's joining data: "host counts address port", counts the number
   * of processes of each app, comma-separated.
   */
  static final String NODE_KEY = "jrun.nested.node";

  /** One node as it announced itself at joining: how many processes of each app it runs. */
  record Node(String host, List<Integer> apps, InetSocketAddress endpoint) {
    Node {
      apps = List.copyOf(apps);
    }

    /** How many processes this node runs. */
    int nprocs() {
      return apps.stream().mapToInt(Integer::intValue).sum();
    }
  }

  private final Proc outer;
  private final int self;
  private final List<Node> nodes;
  private final List<String> names;
  private final String prefix;
  private final ClusterJob layout;
  private final RemoteModex modex;
  private final Map<String, Integer> rounds = new HashMap<>();
  private final NestedCollectives collectives = new NestedCollectives(this);
  /** The cross-node fences under way, failed when a node is lost; guarded by this. */
  private final Set<CompletableFuture<byte[]>> fences = new HashSet<>();
  /** The nodes known lost; guarded by this. */
  private final Set<Integer> lost = new HashSet<>();
  /** The inner ranks of other nodes already reported lost; guarded by this. */
  private final Set<Integer> reported = new HashSet<>();
  /** Set before this node's last barrier: peers closing their endpoints then is no loss. */
  private volatile boolean leaving;
  /** When this node first learned of a lost process (System.nanoTime), or 0. */
  private volatile long lossNanos;

  private Nested(
      Proc outer,
      List<Node> nodes,
      List<String> names,
      String prefix,
      ClusterJob layout,
      RemoteModex modex) {
    this.outer = outer;
    this.self = outer.rank();
    this.nodes = List.copyOf(nodes);
    this.names = List.copyOf(names);
    this.prefix = prefix;
    this.layout = layout;
    this.modex = modex;
  }

  /**
   * Whether this process was started as a process of a PMIx job (the variables a PMIx server
   * gives its clients), i.e. pmixrun is to run nested.
   */
  static boolean detected(Map<String, String> env) {
    return env.containsKey("PMIX_NAMESPACE")
        && env.containsKey("PMIX_RANK")
        && env.keySet().stream().anyMatch(k -> k.startsWith("PMIX_SERVER_URI"));
  }

  /**
   * Joins the outer job as the node running {@code apps.get(a)} processes of each app {@code a}
   * of the inner job: init, the joining exchange. On failure the client is finalized again.
   *
   * @param apps how many processes of each app this node runs (one entry unless MPMD)
   * @param defaultHost this machine's host name, for an outer runtime that gives none
   * @param byNode whether the ranks are dealt round robin over the nodes ({@code --map-by
   *     node}) rather than consecutive per node
   * @throws PmixException if the outer runtime cannot be reached, the exchange fails, or the
   *     nodes were given different numbers of apps ({@code ERR_BAD_PARAM})
   */
  static Nested join(List<Integer> apps, String defaultHost, boolean byNode) {
    Proc me = PMIx.init();
    RemoteModex modex = null;
    try {
      String ns = me.nspace();
      int size = (int) PMIx.get(Proc.wildcard(ns), Keys.JOB_SIZE.name()).asLong();
      List<String> hosts = new ArrayList<>();
      for (int r = 0; r < size; r++) {
        hosts.add(outerHost(Proc.of(ns, r), r == me.rank() ? defaultHost : null));
      }
      String myHost = hosts.get(me.rank());
      // One machine for all: nobody else needs to reach the endpoint from outside.
      boolean oneMachine = hosts.stream().allMatch(myHost::equals);
      InetAddress bind = oneMachine ? InetAddress.getLoopbackAddress() : wildcard();
      ClusterJob[] layout = new ClusterJob[1];
      String prefix = prefixOf(ns);
      String nspace = prefix + "@1";
      modex =
          RemoteModex.start(
              me.rank(),
              "pmixrun-nested",
              bind,
              n -> n.equals(nspace) ? layout[0] : null);
      String advertised =
          oneMachine ? InetAddress.getLoopbackAddress().getHostAddress() : advertisedAddress();
      PMIx.put(
          Scope.GLOBAL,
          NODE_KEY,
          Value.of(
              myHost + " " + apps.stream().map(String::valueOf).collect(Collectors.joining(","))
                  + " " + advertised + " " + modex.address().getPort()));
      PMIx.commit();
      PMIx.fence(List.of(Proc.wildcard(ns)), Info.of(Keys.COLLECT_DATA, Value.of(true)));
      List<Node> nodes = new ArrayList<>();
      for (int r = 0; r < size; r++) {
        Node node = parse(r, PMIx.get(Proc.of(ns, r), NODE_KEY));
        nodes.add(node);
        if (r != me.rank()) {
          modex.peer(r, node.endpoint());
        }
      }
      List<String> names = nodeNames(nodes.stream().map(Node::host).toList());
      layout[0] = layout(nspace, nodes.stream().map(Node::apps).toList(), byNode);
      return new Nested(me, nodes, names, prefix, layout[0], modex);
    } catch (RuntimeException e) {
      if (modex != null) {
        modex.close();
      }
      try {
        PMIx.finalize();
      } catch (RuntimeException again) {
        e.addSuppressed(again);
      }
      throw e;
    }
  }

  /**
   * The inner job's ranks, given how many processes of each app every node runs: as PRRTE ranks
   * an MPMD job, app by app (each app's ranks consecutive, app 0's first, {@code pmix.appnum}
   * the position on the command line), each app's ranks placed over the nodes as {@link
   * #placement} says: node by node in outer-rank order, each node's processes of the app
   * consecutive, or with {@code byNode} dealt round robin. {@code mpirun -n 3 pmixrun -n 2 ./a :
   * -n 1 ./b} is thus what {@code prterun --map-by ppr:2:node ./a : --map-by ppr:1:node ./b}
   * gives on 3 nodes: app 0 ranks 0-5 (node 0 has 0,1; node 1 2,3; node 2 4,5), app 1 ranks 6-8
   * (one on each node); node 0's local ranks are 0, 1 and 6. With one app, node 0's ranks come
   * first, then node 1's.
   *
   * @throws PmixException with {@code ERR_BAD_PARAM} if the nodes run different numbers of apps
   */
  static ClusterJob layout(String nspace, List<List<Integer>> appsByNode, boolean byNode) {
    int napps = appsByNode.get(0).size();
    for (int n = 0; n < appsByNode.size(); n++) {
      if (appsByNode.get(n).size() != napps) {
        throw new PmixException(
            Status.ERR_BAD_PARAM,
            "nested pmixruns must be given the same apps: node 0 runs " + napps + " app(s), node "
                + n + " " + appsByNode.get(n).size() + " (" + appsByNode + ")");
      }
    }
    List<List<Integer>> ranks = new ArrayList<>();
    for (int n = 0; n < appsByNode.size(); n++) {
      ranks.add(new ArrayList<>());
    }
    List<Integer> appSizes = new ArrayList<>();
    int next = 0;
    for (int a = 0; a < napps; a++) {
      List<Integer> counts = new ArrayList<>();
      int size = 0;
      for (List<Integer> node : appsByNode) {
        counts.add(node.get(a));
        size += node.get(a);
      }
      List<List<Integer>> app = placement(counts, byNode);
      for (int n = 0; n < app.size(); n++) {
        for (int r : app.get(n)) {
          ranks.get(n).add(next + r);
        }
      }
      appSizes.add(size);
      next += size;
    }
    return ClusterJob.of(nspace, ranks, appSizes);
  }

  /**
   * The ranks of each node, given how many processes each runs: consecutive per node in node
   * order, or with {@code byNode} dealt round robin as mpirun's {@code --map-by node} does (rank
   * r on the next node, in node order, that still has a process to place).
   */
  static List<List<Integer>> placement(List<Integer> counts, boolean byNode) {
    List<List<Integer>> ranks = new ArrayList<>();
    int total = 0;
    for (int c : counts) {
      ranks.add(new ArrayList<>());
      total += c;
    }
    int node = 0;
    for (int r = 0; r < total; r++) {
      if (byNode) {
        while (ranks.get(node).size() == counts.get(node)) {
          node = (node + 1) % counts.size();
        }
        ranks.get(node).add(r);
        node = (node + 1) % counts.size();
      } else {
        while (ranks.get(node).size() == counts.get(node)) {
          node++;
        }
        ranks.get(node).add(r);
      }
    }
    return ranks;
  }

  /**
   * {@code jrun-<outer namespace>}, every character but letters, digits, {@code _} and {@code -}
   * made {@code -}: the servers' namespace may hold no {@code .} or {@code ;} (Slurm's are
   * {@code slurm.pmix.<job>.<step>}) and {@code @} separates the job number.
   */
  static String prefixOf(String outerNspace) {
    return "jrun-" + outerNspace.replaceAll("[^A-Za-z0-9_-]", "-");
  }

  /** What the outer runtime calls the host of {@code proc}, else {@code fallback}. */
  private static String outerHost(Proc proc, String fallback) {
    try {
      Value v = PMIx.get(proc, Keys.HOSTNAME.name());
      if (v instanceof Value.Str s && s.value() != null && !s.value().isEmpty()) {
        return s.value();
      }
    } catch (PmixException e) {
      // Not given by this runtime: the node says it itself at the exchange.
    }
    return fallback != null ? fallback : "node-" + proc.rank();
  }

  private static Node parse(int rank, Value v) {
    String text = v instanceof Value.Str s ? s.value() : null;
    String[] f = text == null ? new String[0] : text.split(" ");
    if (f.length != 4 || !f[1].matches("[0-9]+(,[0-9]+)*")) {
      throw new PmixException(
          Status.ERR_BAD_PARAM, "node " + rank + " announced " + v + " under " + NODE_KEY);
    }
    try {
      List<Integer> apps = new ArrayList<>();
      for (String c : f[1].split(",")) {
        apps.add(Integer.parseInt(c));
      }
      return new Node(f[0], apps, new InetSocketAddress(f[2], Integer.parseInt(f[3])));
    } catch (IllegalArgumentException e) {
      throw new PmixException(
          Status.ERR_BAD_PARAM, "node " + rank + " announced " + text + ": " + e.getMessage());
    }
  }

  /**
   * The nodes' names: each host's own, or {@code host-<index>} for every node of a host that runs
   * several (the node map needs distinct names).
   */
  static List<String> nodeNames(List<String> hosts) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < hosts.size(); i++) {
      String h = hosts.get(i);
      names.add(Collections.frequency(hosts, h) > 1 ? h + "-" + i : h);
    }
    return names;
  }

  private static InetAddress wildcard() {
    try {
      return InetAddress.getByAddress(new byte[4]);
    } catch (java.net.UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first IPv4 address of an interface that is up and not loopback, else loopback. */
  private static String advertisedAddress() {
    try {
      for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!ni.isUp() || ni.isLoopback()) {
          continue;
        }
        for (InetAddress a : Collections.list(ni.getInetAddresses())) {
          if (a instanceof Inet4Address) {
            return a.getHostAddress();
          }
        }
      }
    } catch (SocketException e) {
      // Fall back to loopback: only nodes of this machine can reach it then.
    }
    return InetAddress.getLoopbackAddress().getHostAddress();
  }

  /**
   * Whether a variable of pmixrun's environment is one the outer launcher set to tell pmixrun
   * who it is, which must not reach the processes of the inner job (each would take itself for
   * a process of the outer job): Open MPI's and PRRTE's process and job identity ({@code
   * OMPI_COMM_WORLD_*}, {@code OMPI_MCA_orte_*}, {@code OMPI_MCA_ess*}, {@code OMPI_MCA_pmix*},
   * the app context variables, {@code PRTE_*}) and Slurm's task variables ({@code SLURM_*}; the
   * inner job's own are exported again with {@code --slurm-env}). The {@code PMIX_} variables
   * are replaced for every job anyway.
   */
  static boolean outerVariable(String name) {
    if (name.startsWith("SLURM_") || name.startsWith("PRTE_") || name.startsWith("PRRTE_")) {
      return true;
    }
    for (String p :
        List.of(
            "OMPI_COMM_WORLD_", "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix",
            "OMPI_MCA_prte", "OMPI_APP_CTX_", "OMPI_UNIVERSE_SIZE", "OMPI_FIRST_RANKS",
            "OMPI_NUM_APP_CTX", "OMPI_ARGV", "OMPI_FILE_LOCATION", "OMPI_MCA_initial_wdir",
            "OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
            "OMPI_MCA_orte_precondition_transports", "OMPI_MCA_ompi_", "OMPI_COMMAND")) {
      if (name.startsWith(p)) {
        return true;
      }
    }
    return false;
  }

  /**
   * What every process of this node gets in its environment beyond a single-node job's. When
   * other nodes of the job run on this same machine: Open MPI's shared-memory transport makes its
   * segments in /dev/shm under names of the host, the job and the local rank, which processes of
   * two nodes of one machine share (each has a local rank 0): they would attach each other's
   * segments and crash (a segmentation fault in vader's polling, seen with Open MPI 4.1.4). Its
   * backing directory ({@code btl_vader_backing_directory}; Open MPI 5's {@code sm}) is then
   * the node's own directory {@code nodeDir}, as on machines of their own.
   */
  Map<String, String> childEnvironment(Path nodeDir) {
    if (neighbours() == 0) {
      return Map.of();
    }
    return Map.of(
        "OMPI_MCA_btl_vader_backing_directory", nodeDir.toString(),
        "OMPI_MCA_btl_sm_backing_directory", nodeDir.toString());
  }

  /** How many processes the other nodes on this node's machine run. */
  int neighbours() {
    int n = 0;
    for (int i = 0; i < nodes.size(); i++) {
      if (i != self && nodes.get(i).host().equals(nodes.get(self).host())) {
        n += nodes.get(i).nprocs();
      }
    }
    return n;
  }

  /** This pmixrun in the outer job. */
  Proc outer() {
    return outer;
  }

  /** This node's index (its outer rank). */
  int node() {
    return self;
  }

  /** This node's name, as its server and its processes know it. */
  String nodeName() {
    return names.get(self);
  }

  /** The prefix of the inner namespaces: the job is {@code prefix@1}, the servers {@code @0}. */
  String prefix() {
    return prefix;
  }

  /** The inner job's namespace. */
  String nspace() {
    return layout.nspace();
  }

  /**
   * The ranks of this node's processes, ascending, which is the order they are started in (app
   * by app).
   */
  List<Integer> ranks() {
    return layout.ranksOn(self);
  }

  /** How many processes the inner job has, over all nodes. */
  int size() {
    return layout.size();
  }

  /** The number of nodes. */
  int nodeCount() {
    return nodes.size();
  }

  /**
   * The inner job's data, the same on every node but for what names this node's server: the
   * layout's ({@link ClusterJob#jobInfo}) plus the job's temporary directory and the server's
   * namespace and rank.
   */
  List<Info> jobInfo(Path tmpdir, String serverNspace, int serverRank) {
    List<Info> l = new ArrayList<>(layout.jobInfo(names));
    l.add(Info.of(Keys.TMPDIR, Value.of(tmpdir.toString())));
    l.add(Info.of(Keys.SERVER_NSPACE, Value.of(serverNspace)));
    l.add(Info.of(Keys.SERVER_RANK, Value.rank(serverRank)));
    return l;
  }

  /** The direct-modex link, to be attached to this node's server before it starts. */
  RemoteModex modex() {
    return modex;
  }

  /** A plain fence of every node: once all have come here, every node is ready or done. */
  void barrier() {
    PMIx.fence(List.of(Proc.wildcard(outer.nspace())));
  }

  @Override
  public CompletionStage<byte[]> fence(List<Proc> procs, List<Info> info, byte[] data) {
    SortedSet<Integer> at;
    try {
      at = nodesOf(procs);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    synchronized (this) {
      for (int n : at) {
        if (lost.contains(n)) {
          return CompletableFuture.failedFuture(partial(n));
        }
      }
      fences.add(result);
    }
    var unusedForget = result.whenComplete((r, e) -> {
      synchronized (this) {
        fences.remove(result);
      }
    });
    String signature = procs.stream().map(Proc::toString).collect(Collectors.joining(","));
    int round;
    synchronized (this) {
      round = rounds.merge(signature, 1, Integer::sum);
    }
    String key = "jrun.fence." + digest(signature) + "." + round;
    boolean collect = data.length > 0;
    List<Proc> participants = new ArrayList<>();
    if (at.size() == nodes.size()) {
      participants.add(Proc.wildcard(outer.nspace()));
    } else {
      for (int n : at) {
        participants.add(Proc.of(outer.nspace(), n));
      }
    }
    List<Info> directives = new ArrayList<>();
    if (collect) {
      directives.add(Info.of(Keys.COLLECT_DATA, Value.of(true)));
    }
    Status local = Status.SUCCESS;
    for (Info i : info) {
      if (i.key().equals(Keys.TIMEOUT.name())) {
        directives.add(i);
      } else if (i.key().equals(Keys.LOCAL_COLLECTIVE_STATUS.name())
          && i.value() instanceof Value.StatusValue v) {
        local = v.status();
      }
    }
    // A local participant died (the server says PARTIAL_SUCCESS or LOST_CONNECTION): the node
    // still takes part in the outer fence, so the others are not kept waiting, and then gives
    // its own processes that status, as a 4.2.2 host does with pmix.loc.col.st.
    Status localStatus = local;
    Info[] d = directives.toArray(new Info[0]);
    CompletableFuture<Void> ready;
    try {
      if (collect) {
        PMIx.put(Scope.GLOBAL, key, Value.of(data));
        ready = PMIx.commitAsync();
      } else {
        ready = CompletableFuture.completedFuture(null);
      }
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<byte[]> unused =
        ready
            .thenCompose(v -> PMIx.fenceAsync(participants, d))
            .thenCompose(
                v -> collect ? gather(at, key, data) : CompletableFuture.completedFuture(data))
            .whenComplete(
                (r, e) -> {
                  if (e == null && !localStatus.equals(Status.SUCCESS)) {
                    result.completeExceptionally(
                        new PmixException(localStatus, "a participant on this node was lost"));
                  } else if (e == null) {
                    result.complete(r);
                  } else {
                    result.completeExceptionally(e);
                  }
                });
    return result;
  }

  /** Every participating node's contribution, in node order: what the server is handed back. */
  private CompletableFuture<byte[]> gather(SortedSet<Integer> at, String key, byte[] mine) {
    List<CompletableFuture<byte[]>> parts = new ArrayList<>();
    for (int n : at) {
      if (n == self) {
        parts.add(CompletableFuture.completedFuture(mine));
      } else {
        parts.add(
            PMIx.getAsync(Proc.of(outer.nspace(), n), key)
                .thenApply(
                    v -> {
                      if (v instanceof Value.Bytes b) {
                        return b.bytes();
                      }
                      throw new PmixException(
                          Status.ERR_BAD_PARAM, "node " + n + " contributed " + v + " to " + key);
                    }));
      }
    }
    return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            v -> {
              ByteArrayOutputStream all = new ByteArrayOutputStream();
              for (CompletableFuture<byte[]> p : parts) {
                all.writeBytes(p.join());
              }
              return all.toByteArray();
            });
  }

  @Override
  public CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
    return modex.directModex(proc, info);
  }

  /**
   * An abort of processes of other nodes too ends the outer job at once, with the abort's status
   * and message: the outer runtime ends every pmixrun, each of which ends its processes. The
   * other nodes' processes are not spared until their own launcher notices (their fences would
   * fail first, each node ending with its own status instead of the abort's).
   */
  @Override
  public void abort(Proc caller, Status status, @Nullable String message, List<Proc> procs) {
    boolean elsewhere = procs.isEmpty();
    for (Proc p : procs) {
      if (!p.nspace().equals(layout.nspace())) {
        continue;
      }
      int n = p.rank() == Proc.RANK_WILDCARD ? -1 : layout.nodeOf(p.rank());
      elsewhere |= n != self;
    }
    if (!elsewhere) {
      return;
    }
    CompletableFuture<Void> unused =
        PMIx.abortAsync(
                status,
                "rank " + caller.rank() + " of " + caller.nspace() + " (pmixrun node " + self
                    + "): " + (message == null ? "PMIx_Abort" : message),
                Proc.wildcard(outer.nspace()))
            .exceptionally(e -> null); // the outer runtime is ending us anyway
  }

  @Override
  public CompletionStage<Void> connect(List<Proc> procs, List<Info> info, boolean disconnect) {
    return collectives.connect(procs, info);
  }

  @Override
  public CompletionStage<List<Info>> groupConstruct(
      String groupId, List<Proc> procs, List<Info> info) {
    return collectives.groupConstruct(procs, info);
  }

  /** The nodes hosting a fence's participants. */
  private SortedSet<Integer> nodesOf(List<Proc> procs) {
    SortedSet<Integer> at = new TreeSet<>();
    for (Proc p : procs) {
      if (!p.nspace().equals(layout.nspace())) {
        throw new PmixException(
            Status.ERR_NOT_SUPPORTED,
            "a fence across nodes of a nested pmixrun spans only its job " + layout.nspace()
                + ", not " + p.nspace());
      }
      layout.addNodesOf(p, at);
    }
    return at;
  }

  private static String digest(String s) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(s.getBytes(UTF_8));
      return HexFormat.of().formatHex(h, 0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /**
   * Leaves the outer job once this node's processes have ended with launcher status {@code
   * status}: a barrier of every node and {@code PMIx.finalize} when 0, else {@code PMIx.abort}
   * with that status, which ends every node. Closes the direct-modex link (after the server was
   * closed). Never throws: what fails is printed by the caller's report.
   *
   * @param closeServer closes this node's server; run between the barrier and the link's close
   */
  void leave(int status, String why, Runnable closeServer) {
    leaving = true;
    try {
      if (status == 0) {
        barrier();
      } else {
        graceAfterLoss();
        PMIx.abort(
            Status.of(status),
            "pmixrun node " + self + " (" + nodeName() + "): " + why,
            Proc.wildcard(outer.nspace()));
      }
    } catch (PmixException e) {
      // The outer runtime is gone or refused: we end anyway.
    } finally {
      closeServer.run();
      modex.close();
      try {
        PMIx.finalize();
      } catch (PmixException e) {
        // Already gone.
      }
    }
  }

  /** Closes the direct-modex link and leaves the outer job, for a node that failed to start. */
  void abandon() {
    modex.close();
    try {
      PMIx.finalize();
    } catch (PmixException e) {
      // Already gone.
    }
  }

  /** What a nested node is told of the job's losses elsewhere. Called on a thread of the links. */
  interface Losses {
    /**
     * Processes {@code ranks} of the inner job, on other nodes, are gone (empty: the outer
     * runtime itself is), which ends the job with launcher status {@code status}.
     */
    void lost(List<Integer> ranks, int status, String why);
  }

  /**
   * Watches the other nodes for the rest of the job and tells {@code l} of what is lost there:
   * the processes another node announces dead ({@link #announceLost}), every process of a node
   * whose pmixrun ended (its direct-modex endpoint closed: the outer runtimes tell the survivors
   * nothing, docs/libpmix-facts.md §4), and of an outer runtime that went away (the client lost
   * its connection: {@code PMIX_ERR_LOST_CONNECTION}) or reports a pmixrun aborted or
   * terminated. The fences under way that involve a lost node fail with {@code
   * PMIX_ERR_PARTIAL_SUCCESS}, the status the outer runtimes and a single node give a fence's
   * survivors, and so does every later one. Once, after the barrier that follows the servers'
   * start.
   */
  void watch(Losses l) {
    modex.watch(
        new RemoteModex.LossListener() {
          @Override
          public void ranksLost(int node, int status, List<Integer> ranks) {
            Nested.this.nodeLost(node, ranks, status, l, "rank" + (ranks.size() == 1 ? " " : "s ")
                + PmixRun.ranges(ranks) + " on pmixrun node " + node + " died");
          }

          @Override
          public void nodeLost(int node) {
            if (!leaving) {
              Nested.this.nodeLost(node, layout.ranksOn(node), 1, l,
                  "pmixrun node " + node + " (" + names.get(node) + ") was lost");
            }
          }
        });
    try {
      long unused =
          PMIx.registerEventHandler(
              List.of(Status.ERR_LOST_CONNECTION, Status.ERR_PROC_ABORTED,
                  Status.ERR_PROC_ABORTED_BY_SIG, Status.EVENT_PROC_TERMINATED,
                  Status.PROC_TERMINATED, Status.ERR_JOB_TERMINATED),
              e -> outerEvent(e, l));
    } catch (PmixException e) {
      // The runtime takes no handler: the links between the nodes still watch them.
    }
  }

  private void outerEvent(Event e, Losses l) {
    if (leaving) {
      return;
    }
    if (e.status().equals(Status.ERR_LOST_CONNECTION)) {
      failFences(new PmixException(Status.ERR_LOST_CONNECTION, "the outer runtime is gone"));
      l.lost(List.of(), 1, "lost the connection to the outer PMIx runtime");
      return;
    }
    List<Proc> affected = new ArrayList<>();
    for (Info i : e.info()) {
      if (i.key().equals(Keys.EVENT_AFFECTED_PROC.name()) && i.value() instanceof Proc p) {
        affected.add(p);
      }
    }
    if (affected.isEmpty()) {
      affected.add(e.source());
    }
    for (Proc p : affected) {
      if (!p.nspace().equals(outer.nspace()) || p.rank() == self) {
        continue;
      }
      if (p.rank() == Proc.RANK_WILDCARD) {
        failFences(partial(-1));
        l.lost(List.of(), 1, "the outer job ended (" + e.status() + ")");
      } else if (p.rank() >= 0 && p.rank() < nodes.size()) {
        nodeLost(p.rank(), layout.ranksOn(p.rank()), 1, l,
            "pmixrun node " + p.rank() + " ended (" + e.status() + ")");
      }
    }
  }

  private void nodeLost(int node, List<Integer> ranks, int status, Losses l, String why) {
    if (leaving) {
      return;
    }
    List<Integer> fresh = new ArrayList<>();
    synchronized (this) {
      if (ranks.equals(layout.ranksOn(node))) {
        lost.add(node);
      }
      for (int r : ranks) {
        if (reported.add(r)) {
          fresh.add(r);
        }
      }
    }
    if (fresh.isEmpty()) {
      return; // told already
    }
    lossSeen();
    // The processes are told first: the event then reaches them ahead of their failed fence's
    // reply (both leave through the server's progress thread in order), so a survivor knows
    // why its fence failed when it returns, even if the outer runtime kills the job at once
    // (srun --kill-on-bad-exit does, milliseconds after a node's pmixrun died).
    l.lost(fresh, status, why);
    failFences(partial(node));
  }

  private void failFences(PmixException why) {
    List<CompletableFuture<byte[]>> l;
    synchronized (this) {
      l = List.copyOf(fences);
    }
    for (CompletableFuture<byte[]> f : l) {
      f.completeExceptionally(why);
    }
  }

  private static PmixException partial(int node) {
    return new PmixException(
        Status.ERR_PARTIAL_SUCCESS,
        node < 0 ? "the outer job ended" : "participants on pmixrun node " + node + " were lost");
  }

  /**
   * Tells the other nodes that this node's processes {@code ranks} died, ending the job with
   * launcher status {@code status}: their processes are told too, as this node's are.
   */
  void announceLost(int status, List<Integer> ranks) {
    lossSeen();
    modex.announceLost(status, ranks);
  }

  private void lossSeen() {
    if (lossNanos == 0) {
      lossNanos = System.nanoTime() | 1; // never 0
    }
  }

  /**
   * After a loss, the outer abort waits until {@link PmixRun#DEATH_GRACE} has passed since this
   * node learned of it: every node learned at about the same time, and their survivors get that
   * grace to act on the event (and their output to leave) before the abort ends them all (srun
   * SIGKILLs at once). A node whose processes all ended early would otherwise cut it short.
   */
  private void graceAfterLoss() {
    long since = lossNanos;
    if (since == 0) {
      return;
    }
    long left = PmixRun.DEATH_GRACE.toNanos() - (System.nanoTime() - since);
    if (left > 0) {
      try {
        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return "Nested{node " + self + " of " + nodes.size() + ", " + nodeName() + ", "
        + requireNonNull(layout).ranksOn(self) + "}";
  }
}
