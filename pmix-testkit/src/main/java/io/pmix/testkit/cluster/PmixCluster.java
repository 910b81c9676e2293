package io.pmix.testkit.cluster;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.server.ServerOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Several PMIx servers on this machine, each acting as its own node, serving one or more jobs
 * spread over them: the multi-node fixture, and the worked example of wiring {@link
 * io.pmix.server.PMIxServer} into a multi-node resource manager.
 *
 * <p>Each {@link ClusterNode} has its own server with its own host name ({@code node0}, {@code
 * node1}, ...) and temporary directory, and its own {@link ClusterHost}. The hosts talk to each
 * other over loopback TCP (the "network"), to complete fences across nodes (an all-gather of the
 * servers' fence blobs) and to answer direct-modex requests for processes on other nodes (the
 * owning node's host fetches the data from its server). A job ({@link ClusterJob}) says which
 * ranks live on which node; {@link #register} gives every node hosting ranks the same job data
 * (job size, node map, process map) and registers that node's ranks as its local clients, so each
 * server knows which ranks are remote.
 *
 * <pre>{@code
 * try (PmixCluster cluster = PmixCluster.builder().nodes(2).directory(tmp).start()) {
 *   ClusterJob job = ClusterJob.blocks("myjob", 2, 4);   // ranks 0-3 on node0, 4-7 on node1
 *   cluster.register(job);
 *   for (int r = 0; r < job.size(); r++) {
 *     Map<String, String> env = cluster.environment(job, r);   // PMIX_SERVER_URI41, ...
 *     // start the process with env, e.g. a C program using libpmix
 *   }
 * }
 * }</pre>
 *
 * <p>The launched processes are the caller's: the cluster only serves them.
 *
 * <p>Thread-safe. Owns its nodes (servers, host threads, interconnect loops) and, when it created
 * it, its directory; {@link #close} releases them.
 */
public final class PmixCluster implements AutoCloseable {
  private final List<ClusterNode> nodes;
  private final List<String> hostnames;
  private final ConcurrentMap<String, ClusterJob> jobs;
  private final @Nullable Path ownedDirectory;
  private boolean closed;

  private PmixCluster(
      List<ClusterNode> nodes,
      List<String> hostnames,
      ConcurrentMap<String, ClusterJob> jobs,
      @Nullable Path ownedDirectory) {
    this.nodes = List.copyOf(nodes);
    this.hostnames = List.copyOf(hostnames);
    this.jobs = jobs;
    this.ownedDirectory = ownedDirectory;
  }

  /** A builder; {@link Builder#start} starts the cluster. */
  public static Builder builder() {
    return new Builder();
  }

  /** The nodes, by index. */
  public List<ClusterNode> nodes() {
    return nodes;
  }

  /** Node {@code index}. */
  public ClusterNode node(int index) {
    return nodes.get(index);
  }

  /** The nodes' host names, by index. */
  public List<String> hostnames() {
    return hostnames;
  }

  /**
   * Registers a job on every node that hosts its ranks: the namespace with the job data of {@link
   * ClusterJob#jobInfo} and that node's rank count ({@code PMIx_server_register_nspace}), then
   * each of that node's ranks as a client of this process's uid and gid ({@code
   * PMIx_server_register_client}).
   *
   * @throws IllegalArgumentException if the job names more nodes than the cluster has
   * @throws IllegalStateException if a job with that namespace is registered
   * @throws PmixException with the server's status if a registration fails
   */
  public void register(ClusterJob job) {
    requireNonNull(job, "job");
    checkArgument(
        job.nodeSlots() <= nodes.size(),
        "%s needs %s nodes, the cluster has %s",
        job,
        job.nodeSlots(),
        nodes.size());
    synchronized (this) {
      checkState(!closed, "cluster closed");
    }
    // Known to every host first, so a fence or a direct modex can be routed at once.
    checkState(jobs.putIfAbsent(job.nspace(), job) == null, "%s is registered", job.nspace());
    int[] ids = ClusterNode.effectiveIds();
    for (ClusterNode node : nodes) {
      List<Integer> local = job.ranksOn(node.index());
      if (local.isEmpty()) {
        continue;
      }
      check(
          node.server().registerNspace(job.nspace(), local.size(), job.jobInfo(hostnames)),
          "register " + job.nspace() + " on " + node.hostname());
      for (int rank : local) {
        check(
            node.server().registerClient(Proc.of(job.nspace(), rank), ids[0], ids[1]),
            "register " + job.nspace() + ":" + rank + " on " + node.hostname());
      }
    }
  }

  /**
   * Deregisters a job from every node that hosts its ranks ({@code
   * PMIx_server_deregister_nspace}), so its namespace may be used again.
   *
   * @throws PmixException with the server's status if a deregistration fails
   */
  public void deregister(ClusterJob job) {
    requireNonNull(job, "job");
    checkState(jobs.remove(job.nspace(), job), "%s is not registered", job.nspace());
    for (ClusterNode node : nodes) {
      if (!job.ranksOn(node.index()).isEmpty()) {
        check(
            node.server().deregisterNspace(job.nspace()),
            "deregister " + job.nspace() + " on " + node.hostname());
      }
    }
  }

  /** The node hosting rank {@code rank} of {@code job}. */
  public ClusterNode nodeOf(ClusterJob job, int rank) {
    int n = job.nodeOf(rank);
    checkArgument(n >= 0, "no rank %s in %s", rank, job);
    return nodes.get(n);
  }

  /**
   * The environment rank {@code rank} of {@code job} must be started with: that of its node's
   * server ({@code PMIx_server_setup_fork}: {@code PMIX_NAMESPACE}, {@code PMIX_RANK}, {@code
   * PMIX_SERVER_URI*}, {@code PMIX_HOSTNAME}, ...). Add it to the process's environment, after
   * removing any {@code PMIX_*} variable inherited from elsewhere.
   */
  public Map<String, String> environment(ClusterJob job, int rank) {
    return nodeOf(job, rank).environment(job.proc(rank));
  }

  /**
   * Closes every node (server first, then its host's connections), then deletes the directory if
   * the cluster created it. Idempotent.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    RuntimeException failure = null;
    for (ClusterNode node : nodes) {
      try {
        node.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (ownedDirectory != null) {
      deleteTree(ownedDirectory);
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static void check(Status status, String what) {
    if (!status.equals(Status.OPERATION_SUCCEEDED) && !status.isSuccess()) {
      throw new PmixException(status, what + " failed");
    }
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }

  @Override
  public String toString() {
    return "PmixCluster" + nodes;
  }

  /**
   * Builds and starts a {@link PmixCluster}. Defaults: 2 nodes named {@code node0}, {@code
   * node1}, ..., in a fresh temporary directory deleted at close. Not thread-safe.
   */
  public static final class Builder {
    private int nodes = 2;
    private String hostnamePrefix = "node";
    private @Nullable Path directory;
    private Consumer<ServerOptions.Builder> serverOptions = b -> {};

    private Builder() {}

    /** How many nodes (at least 1). */
    @CanIgnoreReturnValue
    public Builder nodes(int nodes) {
      checkArgument(nodes >= 1, "nodes must be at least 1: %s", nodes);
      this.nodes = nodes;
      return this;
    }

    /** Node {@code i} is named prefix + i. */
    @CanIgnoreReturnValue
    public Builder hostnamePrefix(String prefix) {
      requireNonNull(prefix, "prefix");
      checkArgument(!prefix.isEmpty() && !prefix.contains(","), "unusable prefix: %s", prefix);
      this.hostnamePrefix = prefix;
      return this;
    }

    /**
     * The directory under which each node gets its temporary directory ({@code <dir>/<host>},
     * created); borrowed, never deleted. Without it the cluster makes a temporary directory of its
     * own and deletes it at close.
     */
    @CanIgnoreReturnValue
    public Builder directory(Path directory) {
      this.directory = requireNonNull(directory, "directory");
      return this;
    }

    /**
     * Adjusts every node's server options after the cluster has set the host name, the session and
     * system tmpdir, the server namespace ({@code pmix-cluster-<host>}), the server rank (the node
     * index) and tool support (so tools can attach to a node; the hosts themselves do not need
     * it).
     */
    @CanIgnoreReturnValue
    public Builder serverOptions(Consumer<ServerOptions.Builder> customizer) {
      this.serverOptions = requireNonNull(customizer, "customizer");
      return this;
    }

    /**
     * Starts the nodes.
     *
     * @throws UncheckedIOException if a directory cannot be created
     * @throws PmixException with {@code ERR_INIT} if a server or an interconnect endpoint cannot
     *     start
     */
    public PmixCluster start() {
      Path owned = null;
      Path root;
      try {
        if (directory != null) {
          root = Files.createDirectories(directory);
        } else {
          owned = Files.createTempDirectory("pmix-cluster-");
          root = owned;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create the cluster directory", e);
      }
      ConcurrentMap<String, ClusterJob> jobs = new ConcurrentHashMap<>();
      List<String> hostnames = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        hostnames.add(hostnamePrefix + i);
      }
      // Each endpoint is known once its node has started; nodes only talk once jobs run.
      AtomicReferenceArray<InetSocketAddress> addresses = new AtomicReferenceArray<>(nodes);
      List<ClusterNode> started = new ArrayList<>();
      try {
        for (int i = 0; i < nodes; i++) {
          String host = hostnames.get(i);
          Path tmp = Files.createDirectories(root.resolve(host));
          ServerOptions.Builder ob =
              ServerOptions.builder()
                  .hostname(host)
                  .tmpdir(tmp)
                  .systemTmpdir(tmp)
                  .serverNspace("pmix-cluster-" + host)
                  .serverRank(i)
                  .toolSupport(true);
          serverOptions.accept(ob);
          ClusterNode node =
              ClusterNode.start(i, host, tmp, ob.build(), jobs::get, addresses::get);
          started.add(node);
          addresses.set(i, node.interconnectAddress());
        }
      } catch (IOException | RuntimeException e) {
        for (ClusterNode n : started) {
          try {
            n.close();
          } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed);
          }
        }
        if (owned != null) {
          try {
            deleteTree(owned);
          } catch (UncheckedIOException suppressed) {
            e.addSuppressed(suppressed);
          }
        }
        if (e instanceof IOException io) {
          throw new UncheckedIOException("cannot create a node directory", io);
        }
        throw (RuntimeException) e;
      }
      return new PmixCluster(started, hostnames, jobs, owned);
    }
  }
}
