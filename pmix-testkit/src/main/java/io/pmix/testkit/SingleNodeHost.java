package io.pmix.testkit;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.LazyLogger;
import io.pmix.dataserver.DataService;
import io.pmix.dataserver.DataServiceHostModule;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.IdentityResolver;
import io.pmix.dataserver.LocalDataService;
import io.pmix.server.HostModule;
import io.pmix.server.PMIxServer;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The host module of a launcher whose processes all run on this one node: what {@code pmixrun}
 * and {@link TestingPmixServer} give their {@link io.pmix.server.PMIxServer}.
 *
 * <ul>
 *   <li>Client connected and finalized: accepted at once, and noted for the launcher (mpirun
 *       counts a process that called PMIx_Init and exits without PMIx_Finalize as failed).
 *   <li>Fences: all participants are local, which the server completes itself; should one ever
 *       reach the host, this node's contribution is the whole answer and is handed back.
 *   <li>Connect, disconnect: likewise completed by the server when every participant is local;
 *       one that reaches the host naming a namespace this node does not run (another launcher's
 *       job, whose processes can never take part) is refused with {@code PMIX_ERR_UNREACH}
 *       rather than answered success into a hang.
 *   <li>Groups: a construct that reaches the host (it asks for a context id, {@code
 *       pmix.grp.actxid}) gets the next id of this launcher's counter, from 1; a group with a
 *       member of a job this host does not run is refused with {@code PMIX_ERR_UNREACH}.
 *   <li>Spawn: the launcher that owns this host starts the job on this node, through the same
 *       code that starts its own jobs, as a new namespace registered before the answer (its job
 *       data also holds {@code pmix.parent}, the requester, and {@code pmix.spawned}). All the
 *       apps of one request make one job, as under PRRTE: the ranks numbered consecutively across
 *       the apps (app 0's first), each rank running its app's command, arguments, environment and
 *       working directory, and the job data giving each rank its {@code pmix.appnum} and {@code
 *       pmix.apprank} and each app its array ({@code pmix.app.size}, {@code pmix.aldr}, {@code
 *       pmix.wdir}, {@code pmix.app.argv}). An app of {@code maxprocs} 0 runs one process (PRRTE
 *       fills the allocation's slots; a single-node launcher has no allocation to fill).
 *       Job-level directives ({@link #spawn spawn}'s {@code jobInfo}):
 *       <ul>
 *         <li>{@code pmix.mapby} and {@code pmix.rankby} are accepted whatever their value: every
 *             process is placed on this node whatever the policy, and the only ranking one node
 *             gives is the order of the apps and their processes, which is the one used;
 *         <li>{@code pmix.bindto} {@code none} is honoured (nothing is bound); another binding is
 *             not done (Open MPI 4.1's mpirun does bind, and fails a spawn whose core binding
 *             would put more processes than cores on the node);
 *         <li>{@code pmix.parent} (the server's or a tool's note of the requester) and the output
 *             forwarding requests {@code pmix.fwd.*} (the server's business) are accepted;
 *         <li>any other directive, and a binding, is ignored unless flagged required ({@link
 *             Info#isRequired()}, C's {@code PMIX_INFO_REQD}): then the spawn fails with {@code
 *             PMIX_ERR_NOT_SUPPORTED} and nothing is started. (PRRTE caches the directives it
 *             does not know into the job's data; this launcher does neither that nor the
 *             many it knows, so a caller who depends on one is told.)
 *       </ul>
 *       Without a launcher attached, {@code PMIX_ERR_NOT_SUPPORTED}; no app, or an app without a
 *       command, {@code PMIX_ERR_BAD_PARAM}; a command that cannot be started is {@code
 *       PMIX_ERR_JOB_FAILED_TO_LAUNCH}.
 *   <li>Direct modex: {@code PMIX_ERR_NOT_FOUND} (there is no other node to ask).
 *   <li>Unless the job spans several nodes ({@link #otherNodes}: pmixrun nested under another
 *       PMIx runtime): then fences, direct-modex requests, connects, disconnects and group
 *       constructs and destructs that involve another node go through that (a construct's
 *       context id too); job control acts on this node's processes only (a target elsewhere, a
 *       whole job or every job is {@code PMIX_ERR_NOT_SUPPORTED}); spawn is not offered.
 *   <li>Publish, lookup, unpublish: pmix-dataserver's {@link DataServiceHostModule} over a {@link
 *       DataService}: by default an embedded store ({@link LocalDataService}; pmixrun's runs on
 *       the server's progress thread, {@link #storeOnServerThread}), or a shared data server
 *       ({@link io.pmix.dataserver.DataServerClient}); the store's rules apply (ranges,
 *       ownership, duplicates, {@code PMIX_WAIT} lookups with {@code PMIX_TIMEOUT}). Callers are
 *       identified by the uid and gid their job was registered with, in their app of the default
 *       session, on this node. What a process published with {@code PMIX_PERSIST_PROC} goes when
 *       it exits, with {@code PMIX_PERSIST_APP} when every process of its app has exited, and the
 *       rest of a job's data when its launcher ends the job.
 *   <li>Abort: answered at once, then reported to the launcher of the caller's job, which kills
 *       the processes (the caller waits for the answer, so it comes first).
 *   <li>Events: the server has already delivered them to the local clients; nobody else exists.
 *   <li>Query: what the server leaves to its host; {@code pmix.qry.ns} (the jobs this host runs)
 *       is answered, anything else is {@code PMIX_ERR_NOT_FOUND}.
 *   <li>Tools (when the server accepts them): the interface's default, i.e. the server's own
 *       rules decide.
 *   <li>Job control, as PRRTE 3.0.14 does it: the first of these directives is done, after the
 *       answer (SUCCESS, no results) has gone to the requester, which may itself be a target:
 *       <ul>
 *         <li>{@code pmix.jctrl.kill}: the named processes are killed (SIGTERM, SIGKILL after the
 *             grace); as under PRRTE that is no failure: the job goes on with the others, ends
 *             when they do, with their status, and nobody is told;
 *         <li>{@code pmix.jctrl.sig} (a signal number): sent to the named processes; one it
 *             kills has died of a signal, a failure that ends its job as any death does (the
 *             survivors get PMIX_ERR_PROC_ABORTED; PRRTE also ends the job, and signals every
 *             process of the first target's job whatever ranks were named);
 *         <li>{@code pmix.jctrl.term} without targets: every job of this launcher is stopped
 *             (exit status 0, PRRTE's DVM halt); with targets, as PRRTE, NOT_SUPPORTED.
 *       </ul>
 *       The named processes: a target at rank WILDCARD is its whole job; no targets at all is
 *       every job of this launcher (PRRTE's NULL target list); targets naming none of this
 *       launcher's processes are {@code PMIX_ERR_NOT_FOUND} (PRRTE skips them and succeeds).
 *       Anything else ({@code pmix.jctrl.preempt}, {@code pmix.jctrl.ckmethod}, pause, resume,
 *       checkpoint, restart, {@code pmix.jctrl.defpset}...) is {@code PMIX_ERR_NOT_SUPPORTED}
 *       when nothing above is asked, or when it is flagged required (PRRTE ignores the flag). The
 *       cleanup directives never get here alone: the server runs them. Monitors other than
 *       heartbeats (the server's) are {@code PMIX_ERR_NOT_SUPPORTED}.
 *   <li>Log: with the launcher's {@link LogChannels} attached ({@code pmixrun}), {@code
 *       pmix.log.stdout} and {@code pmix.log.stderr} go to the launcher's stdout and stderr (see
 *       there for once, aggregation and the channels refused); without, {@code
 *       PMIX_ERR_NOT_SUPPORTED}.
 *   <li>Everything else: {@code PMIX_ERR_NOT_SUPPORTED}.
 * </ul>
 *
 * <p>Thread-safe. Owns its {@link DataService}, closed by {@link #close()} (after the server is
 * closed).
 */
public final class SingleNodeHost implements HostModule, AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(SingleNodeHost.class);

  /**
   * What a launcher learns about one of its jobs, and what it is asked to do to it. The job
   * control calls come on a thread of their own once the requester's answer is on its way; every
   * call only queues the work, never blocks.
   */
  interface JobListener {
    /**
     * A process of the job called {@code PMIx_Abort}; called before the caller's answer goes, so
     * that the abort is queued ahead of the caller's exit.
     */
    void aborted(Proc caller, Status status, @Nullable String message, List<Proc> targets);

    /**
     * {@code requester} asked (job control, {@code pmix.jctrl.kill}) to kill {@code ranks} of the
     * job (SIGTERM, SIGKILL after the grace): their deaths are no failure of the job, which goes
     * on with the others.
     */
    void kill(Proc requester, List<Integer> ranks);

    /**
     * {@code requester} asked ({@code pmix.jctrl.sig}) to send {@code signal} to {@code ranks}: a
     * process it kills dies as if by any other signal (a failure that ends the job).
     */
    void signal(Proc requester, List<Integer> ranks, int signal);

    /** {@code requester} asked ({@code pmix.jctrl.term}) to end the job: every process goes. */
    void terminate(Proc requester);
  }

  /**
   * One job: its size here, its apps' sizes here (app 0's processes first), the rank of each
   * process here (null: the index; a job spread over nodes has others), its ids, who to tell, and
   * which of its ranks connected and finalized.
   */
  private record Job(
      int nprocs,
      List<Integer> appSizes,
      @Nullable List<Integer> ranks,
      int uid,
      int gid,
      JobListener listener,
      Set<Integer> connected,
      Set<Integer> finalized) {
    /** The app of {@code rank}, or {@link Identity#UNKNOWN} for a rank not run here. */
    int appOf(int rank) {
      int i = indexOf(rank);
      int first = 0;
      for (int a = 0; a < appSizes.size(); a++) {
        first += appSizes.get(a);
        if (i >= 0 && i < first) {
          return a;
        }
      }
      return Identity.UNKNOWN;
    }

    /** The index here of the process of rank {@code rank}, or -1 if it does not run here. */
    int indexOf(int rank) {
      if (ranks == null) {
        return rank >= 0 && rank < nprocs ? rank : -1;
      }
      return ranks.indexOf(rank);
    }
  }

  /** Starts the jobs clients spawn: what the launcher that owns this host plugs in. */
  interface Spawner {
    /**
     * Registers one job of all of {@code apps} with the server and starts its processes; returns
     * once the namespace is registered. Called on the server's host executor, with the
     * directives already checked.
     *
     * @throws IOException if the processes cannot be started (the job is then gone again)
     * @throws IllegalStateException if the server refuses the job or the launcher is closed
     * @throws IllegalArgumentException if an app has no command
     */
    String start(Proc requester, List<Value.App> apps, List<Info> jobInfo) throws IOException;
  }

  private volatile @Nullable Spawner spawner;
  private volatile @Nullable LogChannels logs;

  /**
   * How the host of one node of a job spread over several nodes reaches the others: what pmixrun
   * nested under another PMIx runtime plugs in ({@link Nested}). Called on the server's host
   * executor; must not block it.
   */
  interface OtherNodes {
    /**
     * A fence with participants on other nodes, all of this node's having arrived: completes
     * with every participating node's contribution, back to back ({@link HostModule#fenceNb}).
     */
    CompletionStage<byte[]> fence(List<Proc> procs, List<Info> info, byte[] data);

    /** The remote data of {@code proc}, which runs on another node ({@link HostModule#directModex}). */
    CompletionStage<byte[]> directModex(Proc proc, List<Info> info);

    /**
     * A process of this node called PMIx_Abort for {@code procs} (empty: its whole job): the
     * other nodes' processes among them are to be ended too. Called after this node's own
     * processes were told to end, before the caller's answer goes; must not block.
     */
    void abort(Proc caller, Status status, @Nullable String message, List<Proc> procs);

    /**
     * A connect ({@code disconnect} false) or disconnect of participants of which some run on
     * other nodes, all of this node's having arrived ({@link HostModule#connect}).
     */
    CompletionStage<Void> connect(List<Proc> procs, List<Info> info, boolean disconnect);

    /**
     * A group construct with members on other nodes, or asking for a context id: the results
     * ({@link HostModule#groupConstruct}).
     */
    CompletionStage<List<Info>> groupConstruct(String groupId, List<Proc> procs, List<Info> info);
  }

  private volatile @Nullable OtherNodes otherNodes;

  private final String hostname;
  /** Whether the store runs on the server's progress thread ({@link #storeOnServerThread}). */
  private final boolean dataCallsHere;
  // Given at construction, or once by storeOn (before any process runs); null until then.
  private volatile @Nullable DataService data;
  private volatile @Nullable DataServiceHostModule publishing;
  private final Map<String, Job> jobs = new ConcurrentHashMap<>();
  /** The next group context id: unique among this launcher's groups, as PRRTE's are. */
  private final AtomicLong nextContextId = new AtomicLong(1);

  /** A host for the node {@code hostname} with an embedded store of the default options. */
  public SingleNodeHost(String hostname) {
    this(hostname, LocalDataService.create(DataStoreOptions.defaults()));
  }

  /**
   * A host for the node {@code hostname} serving publish/lookup from {@code data}, which it takes
   * over: {@link #close()} closes it.
   */
  public SingleNodeHost(String hostname, DataService data) {
    this.hostname = requireNonNull(hostname, "hostname");
    this.dataCallsHere = false;
    use(requireNonNull(data, "data"));
  }

  private SingleNodeHost(String hostname, boolean dataCallsHere) {
    this.hostname = requireNonNull(hostname, "hostname");
    this.dataCallsHere = dataCallsHere;
  }

  /**
   * A host for the node {@code hostname} whose embedded store will run on its server's progress
   * thread, given by {@link #storeOn} once the server has started (pmixrun): publish, lookup and
   * unpublish then cross no thread, as under libpmix's host server, which answers them on its one
   * thread (docs/architecture.md, "Like for like"). Until then they are answered {@code
   * PMIX_ERR_NOT_AVAILABLE}.
   */
  static SingleNodeHost storeOnServerThread(String hostname) {
    return new SingleNodeHost(hostname, true);
  }

  /**
   * Gives a host made by {@link #storeOnServerThread} its embedded store, run on {@code server}'s
   * progress thread: once, after the server started and before any process of it runs.
   */
  void storeOn(PMIxServer server, DataStoreOptions options) {
    if (!dataCallsHere || data != null) {
      throw new IllegalStateException("this host has its store already");
    }
    use(LocalDataService.create(options, server.progressExecutor()));
  }

  private void use(DataService d) {
    IdentityResolver fallback = IdentityResolver.fromServerInfo(hostname);
    this.publishing = new DataServiceHostModule(d, (proc, info) -> identity(proc, info, fallback));
    this.data = d;
  }

  /**
   * The publish/lookup service.
   *
   * @throws IllegalStateException for a host whose store is not given yet ({@link #storeOn})
   */
  public DataService dataService() {
    DataService d = data;
    if (d == null) {
      throw new IllegalStateException("the host's store is not given yet");
    }
    return d;
  }

  /** The name of the node. */
  public String hostname() {
    return hostname;
  }

  /** The namespaces of the jobs this host runs now. */
  public List<String> namespaces() {
    return List.copyOf(new ArrayList<>(jobs.keySet()));
  }

  /** Makes fences and direct-modex requests that leave this node go through {@code o}. */
  void otherNodes(OtherNodes o) {
    this.otherNodes = requireNonNull(o, "o");
  }

  /** Serves clients' {@code PMIx_Log} through {@code l} (the launcher's stdout and stderr). */
  void logTo(LogChannels l) {
    this.logs = requireNonNull(l, "l");
  }

  /** Lets clients spawn jobs, started by {@code s}. */
  void spawner(Spawner s) {
    this.spawner = requireNonNull(s, "s");
  }

  /** A job of the apps of {@code appSizes} processes each (app 0's ranks first). */
  void addJob(String nspace, List<Integer> appSizes, int uid, int gid, JobListener listener) {
    addJob(nspace, appSizes, null, uid, gid, listener);
  }

  /**
   * A job of the apps of {@code appSizes} processes each here, process {@code i} here being rank
   * {@code ranks.get(i)} (null: rank {@code i}) of a job spread over nodes.
   */
  void addJob(
      String nspace,
      List<Integer> appSizes,
      @Nullable List<Integer> ranks,
      int uid,
      int gid,
      JobListener listener) {
    int nprocs = 0;
    for (int size : appSizes) {
      nprocs = Math.addExact(nprocs, size);
    }
    Job j =
        new Job(
            nprocs,
            List.copyOf(appSizes),
            ranks == null ? null : List.copyOf(ranks),
            uid,
            gid,
            listener,
            ConcurrentHashMap.newKeySet(),
            ConcurrentHashMap.newKeySet());
    if (jobs.putIfAbsent(requireNonNull(nspace, "nspace"), j) != null) {
      throw new IllegalStateException("a job " + nspace + " is already running");
    }
  }

  /** The processes of the jobs this host runs now (the node's load, as mpirun counts it). */
  int processes() {
    int n = 0;
    for (Job j : jobs.values()) {
      n += j.nprocs();
    }
    return n;
  }

  /** Whether {@code proc}, of a job of this host, has connected to the server. */
  boolean connected(Proc proc) {
    Job j = jobs.get(proc.nspace());
    return j != null && j.connected().contains(proc.rank());
  }

  /** Whether {@code proc}, of a job of this host, has called PMIx_Finalize. */
  boolean finalized(Proc proc) {
    Job j = jobs.get(proc.nspace());
    return j != null && j.finalized().contains(proc.rank());
  }

  /**
   * The process {@code proc} of a job of this host has exited: waits (briefly) until the store
   * has dropped what it published with {@code PMIX_PERSIST_PROC}.
   */
  void procEnded(Proc proc) {
    if (jobs.containsKey(proc.nspace())) {
      DataService d = data;
      if (d != null) {
        ended(d.procEnded(proc), "process " + proc);
      }
    }
  }

  /**
   * Every process of app {@code app} of the job {@code nspace} has exited: waits (briefly) until
   * the store has dropped what they published with {@code PMIX_PERSIST_APP}.
   */
  void appEnded(String nspace, int app) {
    if (jobs.containsKey(nspace)) {
      DataService d = data;
      if (d != null) {
        ended(d.appEnded(nspace, app), "app " + app + " of " + nspace);
      }
    }
  }

  /** The job ended: forgets it, and waits (briefly) until the store has dropped its data. */
  void removeJob(String nspace) {
    if (jobs.remove(nspace) == null) {
      return;
    }
    DataService d = data;
    if (d != null) {
      ended(d.namespaceEnded(nspace), nspace);
    }
  }

  private static void ended(CompletionStage<Status> told, String what) {
    try {
      Status s = told.toCompletableFuture().get(5, TimeUnit.SECONDS);
      if (!s.isSuccess()) {
        LOG.log(Level.WARNING, "the data store could not end {0}: {1}", what, s);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.log(Level.WARNING, "the data store did not end {0}: {1}", what, e.toString());
    }
  }

  private Identity identity(Proc proc, List<Info> info, IdentityResolver fallback) {
    Job j = jobs.get(proc.nspace());
    if (j == null) {
      // Not one of ours (registered by hand on the server): what the server attached.
      return fallback.resolve(proc, info);
    }
    return new Identity(proc, j.uid(), j.gid(), j.appOf(proc.rank()), Identity.UNKNOWN, hostname);
  }

  /**
   * True for a host whose store runs on the server's progress thread ({@link
   * #storeOnServerThread}): its publish, lookup and unpublish only queue a task there.
   */
  @Override
  public boolean dataCallsReturnAtOnce() {
    return dataCallsHere;
  }

  /** Both only update a concurrent set: the server may call them on its progress thread. */
  @Override
  public boolean clientCallsReturnAtOnce() {
    return true;
  }

  @Override
  public CompletionStage<Void> clientConnected(Proc proc, @Nullable Object hostObject) {
    Job j = jobs.get(proc.nspace());
    if (j != null) {
      j.connected().add(proc.rank());
      j.finalized().remove(proc.rank()); // a new init/finalize cycle
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> clientFinalized(Proc proc, @Nullable Object hostObject) {
    Job j = jobs.get(proc.nspace());
    if (j != null) {
      j.finalized().add(proc.rank());
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> abort(
      Proc proc,
      @Nullable Object hostObject,
      Status status,
      @Nullable String message,
      List<Proc> procs) {
    Job j = jobs.get(proc.nspace());
    if (j == null) {
      LOG.log(Level.WARNING, "{0} called PMIx_Abort({1}, {2}) but is no job of this host",
          proc, status, message);
      return CompletableFuture.completedFuture(null);
    }
    OtherNodes others = otherNodes;
    // Both only queue their work (the launcher's job thread kills; the other nodes are told
    // asynchronously), so they are done before the caller has its answer: queued on another
    // thread instead, the abort could reach the job thread after the caller, answered, had
    // exited, and the job ended as a plain failure (seen in NestedIT: no abort reported, the
    // other nodes' fences failed instead of being ended).
    try {
      j.listener().aborted(proc, status, message, procs);
      if (others != null) {
        others.abort(proc, status, message, procs);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "abort handling failed", e);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<byte[]> fenceNb(List<Proc> procs, List<Info> info, byte[] data) {
    OtherNodes o = otherNodes;
    return o != null ? o.fence(procs, info, data) : CompletableFuture.completedFuture(data);
  }

  @Override
  public CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
    OtherNodes o = otherNodes;
    if (o != null) {
      return o.directModex(proc, info);
    }
    return CompletableFuture.failedFuture(
        new PmixException(Status.ERR_NOT_FOUND, "single node: no other node holds " + proc));
  }

  @Override
  public CompletionStage<Void> publish(Proc proc, List<Info> info) {
    DataServiceHostModule p = publishing;
    return p != null ? p.publish(proc, info) : storeNotGiven();
  }

  @Override
  public CompletionStage<List<Value.PData>> lookup(Proc proc, List<String> keys, List<Info> info) {
    DataServiceHostModule p = publishing;
    return p != null ? p.lookup(proc, keys, info) : storeNotGiven();
  }

  @Override
  public CompletionStage<Void> unpublish(Proc proc, List<String> keys, List<Info> info) {
    DataServiceHostModule p = publishing;
    return p != null ? p.unpublish(proc, keys, info) : storeNotGiven();
  }

  @Override
  public CompletionStage<Void> notifyEvent(Status code, Proc source, int range, List<Info> info) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<List<Info>> query(Proc requester, List<Value.Query> queries) {
    List<Info> answers = new ArrayList<>();
    for (Value.Query q : queries) {
      for (String key : q.keys()) {
        if (key.equals("pmix.qry.ns")) {
          answers.add(Info.of(key, Value.of(String.join(",", namespaces()))));
        }
      }
    }
    if (answers.isEmpty()) {
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_NOT_FOUND, "no answer to " + queries));
    }
    return CompletableFuture.completedFuture(answers);
  }

  /**
   * Job control, as PRRTE 3.0.14 does it for its own jobs: the first of {@code pmix.jctrl.kill},
   * {@code pmix.jctrl.sig} and {@code pmix.jctrl.term} (the latter without targets only) among the
   * directives is done, after the answer (SUCCESS, no results) has gone; see the class comment.
   */
  @Override
  public CompletionStage<List<Info>> jobControl(
      Proc requester, List<Proc> targets, List<Info> directives) {
    if (otherNodes != null) {
      String elsewhere = elsewhere(targets);
      if (elsewhere != null) {
        return acrossNodes("PMIx_Job_control of " + elsewhere);
      }
    }
    Info act = null;
    for (Info d : directives) {
      String k = d.key();
      if (k.startsWith("pmix.clnup.") || k.equals(Keys.REGISTER_CLEANUP.name())
          || k.equals(Keys.REGISTER_CLEANUP_DIR.name())) {
        continue; // the server's, already done
      }
      boolean ours =
          (k.equals(Keys.JOB_CTRL_KILL.name()) && flag(d.value()))
              || k.equals(Keys.JOB_CTRL_SIGNAL.name())
              || (k.equals(Keys.JOB_CTRL_TERMINATE.name()) && flag(d.value())
                  && targets.isEmpty());
      if (ours) {
        if (act == null) {
          act = d;
        }
      } else if (d.isRequired()) {
        return notSupported("this launcher does not do the required job-control directive " + k
            + (k.equals(Keys.JOB_CTRL_TERMINATE.name()) ? " with targets" : ""));
      }
    }
    if (act == null) {
      return notSupported("this launcher acts on pmix.jctrl.kill, pmix.jctrl.sig and"
          + " pmix.jctrl.term (without targets) only");
    }
    int signal = 0;
    if (act.key().equals(Keys.JOB_CTRL_SIGNAL.name())) {
      try {
        signal = act.value().asInt();
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(
            new PmixException(Status.ERR_BAD_PARAM, "pmix.jctrl.sig takes a signal number"));
      }
      if (signal < 0 || signal > 64) {
        return CompletableFuture.failedFuture(
            new PmixException(Status.ERR_BAD_PARAM, "no signal " + signal));
      }
    }
    // The processes named: a WILDCARD target is its whole job; no target at all is every job of
    // this launcher (PRRTE's NULL target list); names of nothing here are skipped, as PRRTE does.
    Map<String, List<Integer>> named = new java.util.LinkedHashMap<>();
    if (targets.isEmpty()) {
      for (Map.Entry<String, Job> e : jobs.entrySet()) {
        named.put(e.getKey(), allRanks(e.getValue()));
      }
    } else {
      for (Proc t : targets) {
        Job j = jobs.get(t.nspace());
        if (j == null) {
          continue;
        }
        List<Integer> ranks = named.computeIfAbsent(t.nspace(), x -> new ArrayList<>());
        if (t.rank() == Proc.RANK_WILDCARD) {
          ranks.clear();
          ranks.addAll(allRanks(j));
        } else if (j.indexOf(t.rank()) >= 0 && !ranks.contains(j.indexOf(t.rank()))) {
          ranks.add(j.indexOf(t.rank()));
        }
      }
      named.values().removeIf(List::isEmpty);
    }
    if (named.isEmpty()) {
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_NOT_FOUND, "no process of this launcher among " + targets));
    }
    String key = act.key();
    int sig = signal;
    CompletableFuture<Void> unused =
        CompletableFuture.runAsync(
                () -> {
                  for (Map.Entry<String, List<Integer>> e : named.entrySet()) {
                    Job j = jobs.get(e.getKey());
                    if (j == null) {
                      continue; // ended meanwhile
                    }
                    JobListener l = j.listener();
                    if (key.equals(Keys.JOB_CTRL_KILL.name())) {
                      l.kill(requester, List.copyOf(e.getValue()));
                    } else if (key.equals(Keys.JOB_CTRL_SIGNAL.name())) {
                      l.signal(requester, List.copyOf(e.getValue()), sig);
                    } else {
                      l.terminate(requester);
                    }
                  }
                })
            .exceptionally(
                e -> {
                  LOG.log(Level.ERROR, "job control failed", e);
                  return null;
                });
    return CompletableFuture.completedFuture(List.of());
  }

  /**
   * For a job spread over nodes: what among job-control {@code targets} names processes on other
   * nodes too (every job, a whole job, a rank not run here), or null if all run here. Only these
   * are done: acting on other nodes' processes would need a request to their pmixrun, which the
   * nodes do not have yet.
   */
  private @Nullable String elsewhere(List<Proc> targets) {
    if (targets.isEmpty()) {
      return "every job (no targets)";
    }
    for (Proc t : targets) {
      Job j = jobs.get(t.nspace());
      if (j == null) {
        continue; // no job here: NOT_FOUND below, as on one node
      }
      if (t.rank() == Proc.RANK_WILDCARD || j.indexOf(t.rank()) < 0) {
        return t + " (processes of other nodes)";
      }
    }
    return null;
  }

  private static List<Integer> allRanks(Job j) {
    List<Integer> l = new ArrayList<>();
    for (int r = 0; r < j.nprocs(); r++) {
      l.add(r);
    }
    return l;
  }

  /** C's PMIX_INFO_TRUE: a true BOOL, or a flag without a value. */
  private static boolean flag(Value v) {
    return v instanceof Value.Undef || (v instanceof Value.Bool b && b.value());
  }

  private static <T> CompletionStage<T> notSupported(String why) {
    return CompletableFuture.failedFuture(new PmixException(Status.ERR_NOT_SUPPORTED, why));
  }

  @Override
  public CompletionStage<Void> log(Proc requester, List<Info> data, List<Info> directives) {
    LogChannels l = logs;
    if (l == null) {
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_NOT_SUPPORTED, "no launcher output to log to"));
    }
    return l.log(requester, data, directives);
  }

  @Override
  public CompletionStage<Void> connect(List<Proc> procs, List<Info> info) {
    return connect("PMIx_Connect", procs, info, false);
  }

  /**
   * A connect or disconnect that reached the host: a participant of a job this host does not run
   * (another launcher's, say: two pmixruns sharing a data server) can never take part: refused
   * with UNREACH, not answered success into a hang. Otherwise done: at once on one node (the
   * server already has every participant), across the nodes through {@link #otherNodes}.
   */
  private CompletionStage<Void> connect(
      String what, List<Proc> procs, List<Info> info, boolean disconnect) {
    PmixException foreign = foreignMember(what, procs);
    if (foreign != null) {
      return CompletableFuture.failedFuture(foreign);
    }
    OtherNodes o = otherNodes;
    return o != null
        ? o.connect(procs, info, disconnect)
        : CompletableFuture.completedFuture(null);
  }

  /**
   * A request that reached the host of a job spread over nodes and would act on other nodes too,
   * which this launcher does not do across nodes yet: refused rather than done on one node only.
   */
  private static <T> CompletionStage<T> acrossNodes(String what) {
    return CompletableFuture.failedFuture(
        new PmixException(
            Status.ERR_NOT_SUPPORTED,
            what + " across the nodes of a nested pmixrun is not supported yet"));
  }

  @Override
  public CompletionStage<Void> disconnect(List<Proc> procs, List<Info> info) {
    return connect("PMIx_Disconnect", procs, info, true);
  }

  /**
   * A group construct the server hands up: every member must be of a job this host runs (the
   * server has already collected the local members, which are all there are); a context id,
   * when asked for ({@code pmix.grp.actxid}), is the next of this launcher's counter.
   */
  @Override
  public CompletionStage<List<Info>> groupConstruct(
      String groupId, List<Proc> procs, List<Info> info) {
    PmixException foreign = foreignMember("group " + groupId, procs);
    if (foreign != null) {
      return CompletableFuture.failedFuture(foreign);
    }
    OtherNodes o = otherNodes;
    if (o != null) {
      return o.groupConstruct(groupId, procs, info);
    }
    if (!wantsContextId(info)) {
      return CompletableFuture.completedFuture(List.of());
    }
    return CompletableFuture.completedFuture(
        List.of(Info.of(Keys.GROUP_CONTEXT_ID, Value.size(nextContextId.getAndIncrement()))));
  }

  /** Whether a group construct's directives ask for a context id ({@code pmix.grp.actxid}). */
  static boolean wantsContextId(List<Info> info) {
    boolean wantsId = false;
    for (Info i : info) {
      if (i.key().equals(Keys.GROUP_ASSIGN_CONTEXT_ID.name())) {
        wantsId |= !(i.value() instanceof Value.Bool b) || b.value();
      }
    }
    return wantsId;
  }

  /**
   * A group destruct the server hands up: as {@link #groupConstruct}, nothing else to do on one
   * node; across nodes, a disconnect of the members (every member's node has come).
   */
  @Override
  public CompletionStage<Void> groupDestruct(String groupId, List<Proc> members, List<Info> info) {
    return connect("group " + groupId, members, info, true);
  }

  /** UNREACH if a member is of a job this host does not run (no other node to reach it on). */
  private @Nullable PmixException foreignMember(String what, List<Proc> procs) {
    for (Proc p : procs) {
      if (!jobs.containsKey(p.nspace())) {
        return new PmixException(
            Status.ERR_UNREACH, what + ": no job " + p.nspace() + " on this node");
      }
    }
    return null;
  }

  @Override
  public CompletionStage<String> spawn(Proc requester, List<Info> jobInfo, List<Value.App> apps) {
    Spawner s = spawner;
    if (s == null) {
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_NOT_SUPPORTED, "no launcher attached to spawn with"));
    }
    if (apps.isEmpty()) {
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_BAD_PARAM, "a spawn without an app"));
    }
    for (Info i : jobInfo) {
      if (i.isRequired() && !honoured(i)) {
        return CompletableFuture.failedFuture(
            new PmixException(
                Status.ERR_NOT_SUPPORTED,
                "a single-node launcher does not support the required directive " + i.key()
                    + "=" + i.value()));
      }
    }
    try {
      return CompletableFuture.completedFuture(s.start(requester, apps, jobInfo));
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(new PmixException(Status.ERR_BAD_PARAM, e.getMessage()));
    } catch (IOException | IllegalStateException e) {
      LOG.log(Level.INFO, "spawn for {0} failed: {1}", requester, e.getMessage());
      return CompletableFuture.failedFuture(
          new PmixException(Status.ERR_JOB_FAILED_TO_LAUNCH, e.getMessage()));
    }
  }

  /** Whether a spawn directive is one this host does what it asks (see the class comment). */
  private static boolean honoured(Info i) {
    String k = i.key();
    if (k.equals(Keys.MAPBY.name()) || k.equals(Keys.RANKBY.name())
        || k.equals(Keys.PARENT_ID.name()) || k.startsWith("pmix.fwd.")) {
      return true;
    }
    // Only "none" is what this launcher does; modifiers after ':' (none:overload-allowed) too.
    return k.equals(Keys.BINDTO.name())
        && i.value() instanceof Value.Str v
        && v.value() != null
        && v.value().split(":", 2)[0].equalsIgnoreCase("none");
  }

  /**
   * Closes the publish/lookup service (waiting lookups fail) and prints the log's aggregated
   * duplicates not yet told. Idempotent.
   */
  @Override
  public void close() {
    LogChannels l = logs;
    if (l != null) {
      l.close();
    }
    DataService d = data;
    if (d != null) {
      d.close();
    }
  }

  private static <T> CompletionStage<T> storeNotGiven() {
    return CompletableFuture.failedFuture(
        new PmixException(Status.ERR_NOT_AVAILABLE, "the launcher's data store is not up yet"));
  }
}
