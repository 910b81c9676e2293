package io.pmix.testkit.cluster;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.LazyLogger;
import io.pmix.server.HostModule;
import io.pmix.server.PMIxServer;
import io.pmix.testkit.cluster.Interconnect.DmodexReply;
import io.pmix.testkit.cluster.Interconnect.DmodexRequest;
import io.pmix.testkit.cluster.Interconnect.FenceData;
import io.pmix.testkit.cluster.Interconnect.Message;
import java.io.ByteArrayOutputStream;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The host module of one node of a {@link PmixCluster}: how a multi-node resource manager wires
 * a {@link io.pmix.server.PMIxServer}'s cross-node upcalls to its own network. Only the two
 * upcalls a job spread over nodes needs are implemented; every other one keeps the interface's
 * default ({@code NOT_SUPPORTED}).
 *
 * <h2>Fence ({@link #fenceNb})</h2>
 *
 * The server calls {@code fenceNb} once per collective, when all of the fence's local
 * participants have arrived and some participant lives on another node. Its {@code data} is this
 * node's contribution (docs/commands.md §7.1): one BYTE_OBJECT unit holding the REMOTE-scope data
 * of every local participant, or nothing when the fence does not collect data. The host runs an
 * all-gather among the nodes that host participants: it sends its contribution to each of them and
 * waits for theirs; when it has all of them it completes the stage with the contributions
 * concatenated (in node order; any order would do), which is exactly what the server must be handed
 * back: every node's BYTE_OBJECT unit, back to back, or an empty array when nothing was collected.
 * Each server then stores every rank's data and releases its local participants.
 *
 * <p>The nodes agree on which collective a contribution belongs to without a coordinator: the id
 * is the fence's sorted proc list plus how many fences over that same list this node has run
 * before. Every node runs the fences over one proc list in the same order (each is a barrier of
 * the same processes), so the ids match. A {@code pmix.timeout} in the fence's info bounds the
 * wait ({@code ERR_TIMEOUT}); once the server has called the host, the host owns the timeout.
 *
 * <h2>Direct modex ({@link #directModex})</h2>
 *
 * The server calls {@code directModex} when a client asks for data of a process on another node
 * that it does not have (the fence did not collect it). The host finds the node hosting the
 * process from the job's layout and asks that node's host, which obtains the process's committed
 * REMOTE-scope data from its own server ({@link PMIxServer#dmodexRequest}, what a C host does
 * with {@code PMIx_server_dmodex_request}) and sends it back: plain KVAL units (docs/commands.md
 * §7.2), which the requesting
 * server stores as that process's remote data before answering its client. The owning server
 * waits for the process to commit; the client's {@code pmix.timeout} (else one hour) bounds that.
 *
 * <p>Threading: the server calls the upcalls on its host executor; they only hand work to this
 * node's interconnect loop, which owns all of this object's bookkeeping (no locks) and completes
 * the stages. The counters ({@link #fences}, {@link #dmodexRequested}, {@link #dmodexServed}) are
 * thread-safe snapshots for tests.
 */
public final class ClusterHost implements HostModule {
  private static final System.Logger LOG = LazyLogger.of(ClusterHost.class);

  /** How long an owning server may wait for a commit when the client gave no timeout. */
  static final int DEFAULT_DMODEX_TIMEOUT_SECONDS = 3600;

  private final int self;
  private final Function<String, @Nullable ClusterJob> jobs;
  // Set once by attach(), before the server can call an upcall.
  private volatile @Nullable Interconnect link;
  private volatile @Nullable PMIxServer local;

  // Interconnect loop only.
  private final Map<String, Integer> fenceRounds = new HashMap<>();
  private final Map<String, Collective> collectives = new HashMap<>();
  private final Map<Long, CompletableFuture<byte[]>> dmodexWaiting = new HashMap<>();
  private long nextRequest;

  private final List<List<Proc>> fences = new CopyOnWriteArrayList<>();
  private final List<Proc> dmodexRequested = new CopyOnWriteArrayList<>();
  private final List<Proc> dmodexServed = new CopyOnWriteArrayList<>();

  /** One fence instance as this node sees it: who must contribute, what arrived. */
  private static final class Collective {
    final String id;
    /** Contributions by node, in node order. */
    final Map<Integer, byte[]> arrived = new TreeMap<>();
    /** Set when the local server's fenceNb arrived. */
    @Nullable SortedSet<Integer> expected;
    @Nullable CompletableFuture<byte[]> result;
    @Nullable List<Proc> procs;
    @Nullable ScheduledFuture<?> timer;

    Collective(String id) {
      this.id = id;
    }
  }

  ClusterHost(int self, Function<String, @Nullable ClusterJob> jobs) {
    this.self = self;
    this.jobs = requireNonNull(jobs, "jobs");
  }

  /** Wires the node's network and its own server; called once, before the server starts. */
  void attach(Interconnect link, PMIxServer local) {
    this.link = requireNonNull(link, "link");
    this.local = requireNonNull(local, "local");
  }

  private Interconnect link() {
    return requireNonNull(link, "not attached");
  }

  /** This node's index. */
  public int node() {
    return self;
  }

  /** The proc lists of the fences this node's host completed, in completion order. */
  public List<List<Proc>> fences() {
    return List.copyOf(fences);
  }

  /** The processes this node's server asked the host for by direct modex, in order. */
  public List<Proc> dmodexRequested() {
    return List.copyOf(dmodexRequested);
  }

  /** The processes of this node whose data this host served to other nodes, in order. */
  public List<Proc> dmodexServed() {
    return List.copyOf(dmodexServed);
  }

  // ---------------------------------------------------------------------------------------------
  // Fence

  @Override
  public CompletionStage<byte[]> fenceNb(List<Proc> procs, List<Info> info, byte[] data) {
    SortedSet<Integer> nodes;
    try {
      nodes = nodesOf(procs);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    int timeout = timeoutOf(info);
    String signature = procs.stream().map(Proc::toString).collect(Collectors.joining(","));
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    onLoop(result, () -> startFence(signature, List.copyOf(procs), nodes, data, timeout, result));
    return result;
  }

  private void startFence(
      String signature,
      List<Proc> procs,
      SortedSet<Integer> nodes,
      byte[] data,
      int timeoutSeconds,
      CompletableFuture<byte[]> result) {
    int round = fenceRounds.merge(signature, 1, Integer::sum);
    String id = signature + "#" + round;
    Collective c = collectives.computeIfAbsent(id, Collective::new);
    c.expected = nodes;
    c.result = result;
    c.procs = procs;
    c.arrived.put(self, data);
    for (int n : nodes) {
      if (n != self) {
        CompletableFuture<Void> unused =
            link()
                .send(n, new FenceData(id, self, data))
                .whenComplete(
                    (v, e) -> {
                      if (e != null) {
                        failFence(id, result, e);
                      }
                    });
      }
    }
    if (timeoutSeconds > 0) {
      c.timer =
          link()
              .loop()
              .schedule(
                  () ->
                      failFence(
                          id,
                          result,
                          new PmixException(
                              Status.ERR_TIMEOUT, "fence " + id + " timed out on node " + self)),
                  timeoutSeconds,
                  TimeUnit.SECONDS);
    }
    maybeComplete(c);
  }

  private void onFenceData(FenceData m) {
    Collective c = collectives.computeIfAbsent(m.collective(), Collective::new);
    c.arrived.put(m.from(), m.data());
    maybeComplete(c);
  }

  private void maybeComplete(Collective c) {
    CompletableFuture<byte[]> result = c.result;
    if (result == null || c.expected == null || !c.arrived.keySet().containsAll(c.expected)) {
      return;
    }
    collectives.remove(c.id);
    if (c.timer != null) {
      boolean unused = c.timer.cancel(false);
    }
    // What the server must get back: every node's BYTE_OBJECT unit, back to back.
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] blob : c.arrived.values()) {
      all.writeBytes(blob);
    }
    fences.add(requireNonNull(c.procs));
    result.complete(all.toByteArray());
  }

  private void failFence(String id, CompletableFuture<byte[]> result, Throwable why) {
    onLoop(
        result,
        () -> {
          Collective c = collectives.get(id);
          if (c != null && c.result == result) {
            collectives.remove(id);
          }
          if (result.completeExceptionally(why)) {
            LOG.log(
                Level.WARNING, "fence {0} failed on node {1}: {2}", id, self, why.getMessage());
          }
        });
  }

  /** The nodes hosting a fence's participants. */
  private SortedSet<Integer> nodesOf(List<Proc> procs) {
    SortedSet<Integer> nodes = new TreeSet<>();
    for (Proc p : procs) {
      ClusterJob job = jobs.apply(p.nspace());
      if (job == null) {
        throw new PmixException(
            Status.ERR_INVALID_NAMESPACE, "namespace " + p.nspace() + " is not in the cluster");
      }
      job.addNodesOf(p, nodes);
    }
    return nodes;
  }

  // ---------------------------------------------------------------------------------------------
  // Direct modex

  @Override
  public CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
    ClusterJob job = jobs.apply(proc.nspace());
    int owner = job == null ? -1 : job.nodeOf(proc.rank());
    if (owner < 0 || owner == self) {
      // Unknown process, or job-level data (every node registered every job's data already).
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_NOT_FOUND, "no remote process " + proc));
    }
    int timeout = timeoutOf(info);
    int wait = timeout > 0 ? timeout : DEFAULT_DMODEX_TIMEOUT_SECONDS;
    dmodexRequested.add(proc);
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    onLoop(
        result,
        () -> {
          long id = ++nextRequest;
          dmodexWaiting.put(id, result);
          CompletableFuture<Void> unused =
              link()
                  .send(owner, new DmodexRequest(id, self, proc, wait))
                  .whenComplete(
                      (v, e) -> {
                        if (e != null) {
                          onLoop(result, () -> dmodexWaiting.remove(id));
                          result.completeExceptionally(e);
                        }
                      });
        });
    return result;
  }

  /** Another node wants the data of one of our processes: ask our server, send the answer. */
  private void onDmodexRequest(DmodexRequest m) {
    ClusterJob job = jobs.apply(m.proc().nspace());
    if (job == null || job.nodeOf(m.proc().rank()) != self) {
      // Never ask our server about a process it does not host: it would ask its host again.
      reply(m, Status.ERR_NOT_FOUND, new byte[0]);
      return;
    }
    // Completes on the server's progress thread; reply() only hands the answer to our loop.
    CompletionStage<byte[]> unused =
        requireNonNull(local)
            .dmodexRequest(m.proc(), List.of(Info.of(Keys.TIMEOUT, Value.of(m.timeoutSeconds()))))
            .whenComplete(
                (bytes, e) -> {
                  if (e == null) {
                    dmodexServed.add(m.proc());
                    reply(m, Status.SUCCESS, bytes);
                  } else {
                    reply(m, statusOf(e), new byte[0]);
                  }
                });
  }

  private void reply(DmodexRequest m, Status status, byte[] data) {
    CompletableFuture<Void> unused =
        link()
            .send(m.from(), new DmodexReply(m.id(), status, data))
            .whenComplete(
                (v, e) -> {
                  if (e != null) {
                    LOG.log(Level.WARNING, "dmodex reply to node {0} lost: {1}", m.from(), e);
                  }
                });
  }

  private void onDmodexReply(DmodexReply m) {
    CompletableFuture<byte[]> result = dmodexWaiting.remove(m.id());
    if (result == null) {
      return;
    }
    if (m.status().isSuccess()) {
      result.complete(m.data());
    } else {
      result.completeExceptionally(new PmixException(m.status(), "direct modex failed"));
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** Everything that arrives from the other nodes; on the loop. */
  void receive(Message m) {
    if (m instanceof FenceData f) {
      onFenceData(f);
    } else if (m instanceof DmodexRequest r) {
      onDmodexRequest(r);
    } else if (m instanceof DmodexReply r) {
      onDmodexReply(r);
    }
  }

  /** Fails every stage still waiting; on close. */
  void failPending(PmixException why) {
    onLoop(
        new CompletableFuture<>(),
        () -> {
          for (Collective c : collectives.values()) {
            if (c.result != null) {
              c.result.completeExceptionally(why);
            }
          }
          collectives.clear();
          for (CompletableFuture<byte[]> f : dmodexWaiting.values()) {
            f.completeExceptionally(why);
          }
          dmodexWaiting.clear();
        });
  }

  /** Runs {@code task} on the loop; if the node is closed, fails {@code result} instead. */
  private void onLoop(CompletableFuture<?> result, Runnable task) {
    try {
      link().loop().execute(task);
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new PmixException(Status.ERR_UNREACH, "node is closed", e));
    }
  }

  private static int timeoutOf(List<Info> info) {
    for (Info i : info) {
      if (i.key().equals(Keys.TIMEOUT.name())) {
        try {
          return (int) Math.max(0, Math.min(Integer.MAX_VALUE, i.value().asLong()));
        } catch (RuntimeException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  private static Status statusOf(Throwable e) {
    Throwable t = e;
    while (t != null) {
      if (t instanceof PmixException p) {
        return p.status();
      }
      t = t.getCause();
    }
    return Status.ERROR;
  }
}
