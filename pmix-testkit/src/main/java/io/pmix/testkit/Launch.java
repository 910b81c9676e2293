package io.pmix.testkit;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.internal.ChildSignals;
import io.pmix.common.internal.LazyLogger;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerSnapshot;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One job under a {@link PMIxServer} with a {@link SingleNodeHost}: registers it, starts its N
 * processes with the server's fork environment, drains their output, and then, on a thread of its
 * own, waits for them, acting on aborts, timeouts and stop requests (kill with SIGTERM, SIGKILL
 * after {@link #KILL_GRACE}) and on job-control requests (kill some ranks, which is no failure of
 * the job; send a signal), telling the host (and so the data store) of each process's end and
 * each app's, and finally deregisters the job, with a server snapshot just before and just
 * after. The shared engine of {@code pmixrun} and {@link TestingPmixServer}.
 */
final class Launch {
  private static final System.Logger LOG = LazyLogger.of(Launch.class);

  /** How long killed processes get between SIGTERM and SIGKILL. */
  static final Duration KILL_GRACE = Duration.ofSeconds(2);

  /** How long to wait, once every process has ended, for the server to see their sockets close. */
  private static final Duration SETTLE = Duration.ofSeconds(5);

  /** What a rank that does not read our input reads instead. */
  private static final File DEV_NULL = new File("/dev/null");

  /**
   * Where a job's output goes, and where its input comes from.
   *
   * @param capture whether to keep each rank's output for the {@link JobResult}
   * @param stdout where to forward the ranks' stdout, or null
   * @param stderr where to forward the ranks' stderr, or null
   * @param tag whether forwarded lines are tagged {@code [nspace,rank]<stdout>: }
   * @param stdinToRank0 whether rank 0 reads this process's stdin (as under mpirun); otherwise
   *     every rank's stdin is empty
   * @param files where each rank's output is also written to files, or null
   * @param standardStreams whether {@code stdout} and {@code stderr} are this process's standard
   *     output and error: then, when nothing else needs the ranks' bytes (no tag, no capture, no
   *     files), the ranks write to them directly, with no pipe and no pump thread per rank. The
   *     JDK starts a process through a helper that closes, one by one, every descriptor it
   *     inherited, and the launcher's ends of earlier ranks' pipes are inherited (the JDK does not
   *     mark them close-on-exec), so with pipes starting N processes cost time quadratic in N:
   *     2.2 ms more a process at 1,024 processes (docs/architecture.md, "Starting processes").
   */
  record Output(
      boolean capture,
      @Nullable OutputStream stdout,
      @Nullable OutputStream stderr,
      boolean tag,
      boolean stdinToRank0,
      @Nullable FileOutput files,
      boolean standardStreams) {
    Output(
        boolean capture,
        @Nullable OutputStream stdout,
        @Nullable OutputStream stderr,
        boolean tag,
        boolean stdinToRank0) {
      this(capture, stdout, stderr, tag, stdinToRank0, null, false);
    }

    /** Whether the ranks write to this process's standard output and error themselves. */
    boolean direct() {
      return standardStreams && !capture && !tag && files == null && stdout != null && stderr != null;
    }

    static Output captureOnly() {
      return new Output(true, null, null, false, false, null, false);
    }

    /**
     * Open MPI 4.1's {@code --output-filename}: each rank's stdout and stderr written, untagged,
     * to {@code dir/rank.N/stdout} and {@code dir/rank.N/stderr}, N the rank zero-padded as
     * Open MPI pads it (one digit more for every power of ten in the job size: rank.0 to rank.9
     * for up to 9 processes, rank.00 to rank.10 for 10 or 11). Open MPI's {@code dir} includes
     * the job's number ({@code DIR/1}) unless asked not to; the caller decides.
     *
     * @param dir the job's directory (created with the rank directories)
     * @param copy whether the output also goes where {@link Output} says (Open MPI's default;
     *     {@code nocopy} turns it off)
     */
    record FileOutput(Path dir, boolean copy) {
      FileOutput {
        requireNonNull(dir, "dir");
      }

      /** {@code rank.N}, padded as Open MPI pads it for a job of {@code n} processes. */
      static String rankDir(int rank, int n) {
        int digits = 1;
        for (int np = n / 10; np > 0; np /= 10) {
          digits++;
        }
        return String.format(java.util.Locale.ROOT, "rank.%0" + digits + "d", rank);
      }
    }
  }

  /**
   * One application of a job: its processes take the next {@code nprocs} ranks, app 0's first.
   *
   * @param nprocs the number of processes running it
   * @param argv the command each of them runs
   * @param env variables added to each of their environments after the server's
   * @param directory their working directory, or null for this process's
   * @param registeredArgv the command line registered as {@code pmix.app.argv}, or null for none
   */
  record App(
      int nprocs,
      List<String> argv,
      Map<String, String> env,
      @Nullable Path directory,
      @Nullable String registeredArgv) {
    App {
      argv = List.copyOf(argv);
      env = Map.copyOf(env);
      if (argv.isEmpty()) {
        throw new IllegalArgumentException("no command");
      }
      if (nprocs < 1) {
        throw new IllegalArgumentException("an app has at least one process: " + nprocs);
      }
    }
  }

  /**
   * What to run.
   *
   * @param nspace the job's namespace
   * @param apps the applications, in app-number order (a launcher's own job has one)
   * @param slurmEnv whether to export SLURM_JOBID, SLURM_STEP_ID and SLURM_NODELIST
   * @param env the launch environment: variables added to every process's environment after the
   *     server's and the Slurm ones, before its app's (pmixrun's {@code -x} exports)
   * @param timeout the time the job may take, or null
   * @param output where output goes
   * @param jobInfo infos registered with the job in addition to the single-node job data (a
   *     spawned job's parent, say)
   * @param user the user the processes run as, or null for this process's
   * @param placement this node's share of a job spread over several nodes, or null for a job
   *     whose processes all run here (ranks 0 to n-1, the single-node job data)
   */
  record Spec(
      String nspace,
      List<App> apps,
      boolean slurmEnv,
      Map<String, String> env,
      @Nullable Duration timeout,
      Output output,
      List<Info> jobInfo,
      @Nullable User user,
      @Nullable Placement placement) {
    Spec {
      requireNonNull(nspace, "nspace");
      apps = List.copyOf(apps);
      env = Map.copyOf(env);
      jobInfo = List.copyOf(jobInfo);
      if (apps.isEmpty()) {
        throw new IllegalArgumentException("no app");
      }
    }

    /**
     * A job of one app: {@code nprocs} processes of {@code argv}, with {@code env} added to each
     * one's environment after the server's, in {@code directory} (null: this process's).
     */
    Spec(
        String nspace,
        int nprocs,
        List<String> argv,
        Map<String, String> env,
        @Nullable Path directory,
        boolean slurmEnv,
        @Nullable Duration timeout,
        Output output,
        List<Info> jobInfo,
        @Nullable User user) {
      this(
          nspace,
          List.of(new App(nprocs, argv, env, directory, null)),
          slurmEnv,
          Map.of(),
          timeout,
          output,
          jobInfo,
          user,
          null);
    }

    /** The number of processes started here, over all apps. */
    int nprocs() {
      int n = 0;
      for (App a : apps) {
        n = Math.addExact(n, a.nprocs());
      }
      return n;
    }
  }

  /**
   * The spec of a job a client spawned, as PRRTE starts one: for each app, {@code
   * app.maxprocs()} processes (at least one; PRRTE fills the allocation's slots instead, but this
   * launcher has no allocation to fill) of the app's command with the app's arguments after
   * argv[0] (which names the program only: a Java process cannot set it apart from the command),
   * its environment entries ({@code NAME=VALUE}) and its working directory; the ranks numbered
   * consecutively across the apps, app 0's first; the whole job limited to {@code timeout} (null:
   * none). Its job data names the process that spawned it ({@code pmix.parent}) and says it was
   * spawned ({@code pmix.spawned}), as PRRTE's does, and each app's command line ({@code
   * pmix.app.argv}). It gets the launch environment of the launcher's first job ({@code
   * slurmEnv} and {@code env}), as mpirun's spawned jobs do: without it Open MPI 4.1 starts each
   * spawned process as a singleton of a job of its own, whose MPI_Init then fails.
   *
   * @throws IllegalArgumentException if there is no app or an app has no command
   */
  static Spec spawnSpec(
      String nspace,
      Proc parent,
      List<io.pmix.common.Value.App> apps,
      boolean slurmEnv,
      Map<String, String> env,
      Output output,
      @Nullable Duration timeout) {
    if (apps.isEmpty()) {
      throw new IllegalArgumentException("no app to spawn");
    }
    List<App> l = new ArrayList<>();
    for (io.pmix.common.Value.App app : apps) {
      l.add(spawnApp(app));
    }
    return new Spec(
        nspace,
        l,
        slurmEnv,
        env,
        timeout,
        output,
        List.of(
            Info.of(Keys.PARENT_ID, parent),
            Info.of(Keys.SPAWNED, io.pmix.common.Value.of(true))),
        null,
        null);
  }

  /**
   * This node's share of a job whose processes run on several nodes (pmixrun nested under
   * another PMIx runtime, {@link Nested}): the processes started here have the ranks {@code
   * ranks}, in the order they are started (app by app), and the job is registered with {@code
   * jobInfo}, the whole job's data (sizes, node and process maps, apps, every rank's data; the
   * same on every node), from which the server derives what is local to its node, instead of the
   * single-node data.
   *
   * @param ranks the rank of each process started here, app 0's first (consecutive for a job of
   *     one app; an MPMD job's apps each hold consecutive ranks of the whole job)
   * @param jobSize the number of processes of the whole job
   * @param jobInfo the job data registered in place of {@link JobInfo#singleNode}
   * @param neighbours the processes other nodes of the job run on this same machine (counted
   *     when deciding whether the machine is oversubscribed)
   * @param env variables added to every process's environment before the launch environment's
   */
  record Placement(
      List<Integer> ranks, int jobSize, List<Info> jobInfo, int neighbours, Map<String, String> env) {
    Placement {
      ranks = List.copyOf(ranks);
      if (neighbours < 0 || ranks.stream().anyMatch(r -> r < 0 || r >= jobSize)) {
        throw new IllegalArgumentException("a rank outside the job, or negative neighbours");
      }
      jobInfo = List.copyOf(jobInfo);
      env = Map.copyOf(env);
    }
  }

  private static App spawnApp(io.pmix.common.Value.App app) {
    String cmd = app.cmd();
    if (cmd == null || cmd.isEmpty()) {
      throw new IllegalArgumentException("the app has no command");
    }
    List<String> argv = new ArrayList<>();
    argv.add(cmd);
    if (app.argv().size() > 1) {
      argv.addAll(app.argv().subList(1, app.argv().size()));
    }
    Map<String, String> env = new LinkedHashMap<>();
    for (String e : app.env()) {
      int eq = e.indexOf('=');
      if (eq > 0) {
        env.put(e.substring(0, eq), e.substring(eq + 1));
      }
    }
    Path dir = app.cwd() == null ? null : Path.of(app.cwd());
    // What PRRTE registers: the app's argv as the client gave it (argv[0] included), joined.
    List<String> shown = app.argv().isEmpty() ? List.of(cmd) : app.argv();
    return new App(Math.max(1, app.maxprocs()), argv, env, dir, String.join(" ", shown));
  }

  /**
   * Another user for a job's processes: the job is registered with this uid and gid (the server
   * checks that each client's socket belongs to the uid it was registered with), and each process
   * is started through {@code setpriv --reuid=UID --regid=GID --clear-groups}, which needs root.
   * Numeric ids need no passwd entry.
   */
  record User(int uid, int gid) {
    /** The command that runs {@code argv} as this user. */
    List<String> wrap(List<String> argv) {
      List<String> l = new ArrayList<>();
      l.add("setpriv");
      l.add("--reuid=" + Integer.toUnsignedString(uid));
      l.add("--regid=" + Integer.toUnsignedString(gid));
      l.add("--clear-groups");
      l.add("--");
      l.addAll(argv);
      return l;
    }
  }

  /**
   * How a process ended.
   *
   * @param nspace its job's namespace
   * @param rank its rank
   * @param pid its pid
   * @param code its exit status (128+signal when killed by a signal)
   * @param killedByLauncher whether the launcher had signalled it (abort, timeout, stop)
   * @param connected whether it had connected to the server as a PMIx client
   * @param finalized whether it had called PMIx_Finalize
   */
  record Exit(
      String nspace,
      int rank,
      long pid,
      int code,
      boolean killedByLauncher,
      boolean connected,
      boolean finalized) {
    /**
     * Whether it ended as mpirun 4.1 counts a failure that ends every job: a non-zero status the
     * launcher did not cause, or PMIx_Init without PMIx_Finalize.
     */
    boolean abnormal() {
      return !killedByLauncher && (code != 0 || (connected && !finalized));
    }
  }

  /** What the launcher tells as it goes ({@code pmixrun} prints it). Called on the job thread. */
  interface Reporter {
    default void exited(Exit exit) {}

    default void aborted(JobResult.Abort abort, List<Integer> killing) {}

    default void timedOut(Duration after, List<Integer> killing) {}

    default void stopping(String reason, List<Integer> killing) {}

    default void escalated(List<Integer> ranks) {}

    /** A job-control request of {@code requester} has the launcher kill {@code ranks}. */
    default void killing(Proc requester, List<Integer> ranks) {}

    /** A job-control request of {@code requester} sends {@code signal} to {@code ranks}. */
    default void signalling(Proc requester, List<Integer> ranks, int signal) {}
  }

  private sealed interface Event {}

  private record Exited(int rank, int code) implements Event {}

  private record Aborted(JobResult.Abort abort) implements Event {}

  /** Job control: kill {@code ranks} (no failure of the job). */
  private record KillRequest(Proc requester, List<Integer> ranks) implements Event {}

  /** Job control: send {@code signal} to {@code ranks}. */
  private record SignalRequest(Proc requester, List<Integer> ranks, int signal)
      implements Event {}

  /** {@code grace}: how long the live ranks may still end by themselves before they are killed. */
  private record Stop(String reason, int status, boolean timeout, Duration grace)
      implements Event {}

  private final PMIxServer server;
  private final SingleNodeHost host;
  private final Spec spec;
  private final Reporter reporter;
  private final int n;
  /** The rank of the process of each index here (the index unless the job spans nodes). */
  private final int[] rankOf;
  /** The size of the whole job (n unless it spans nodes). */
  private final int jobSize;
  private final Process[] procs;
  /** Each rank's pumps; null when the rank writes to our standard streams itself. */
  private final @Nullable OutputPump[] outPumps;

  private final @Nullable OutputPump[] errPumps;
  private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final CompletableFuture<JobResult> done = new CompletableFuture<>();
  private final long startNanos;

  @GuardedBy("this")
  private boolean registered;

  /** Whether the node had more processes than processors when the job started. */
  private volatile boolean oversubscribed;

  private Launch(PMIxServer server, SingleNodeHost host, Spec spec, Reporter reporter) {
    this.server = server;
    this.host = host;
    this.spec = spec;
    this.reporter = reporter;
    this.n = spec.nprocs();
    Placement pl = spec.placement();
    if (pl != null && pl.ranks().size() != n) {
      throw new IllegalArgumentException(
          "the placement names " + pl.ranks().size() + " ranks for " + n + " processes");
    }
    this.rankOf = new int[n];
    for (int i = 0; i < n; i++) {
      rankOf[i] = pl == null ? i : pl.ranks().get(i);
    }
    this.jobSize = pl == null ? n : pl.jobSize();
    this.procs = new Process[n];
    this.outPumps = new OutputPump[n];
    this.errPumps = new OutputPump[n];
    this.startNanos = System.nanoTime();
  }

  /**
   * Registers the job and starts its processes.
   *
   * @throws IOException if a process cannot be started (those already started are killed and the
   *     job deregistered)
   * @throws IllegalStateException if the server refuses the registration
   */
  static Launch start(PMIxServer server, SingleNodeHost host, Spec spec, Reporter reporter)
      throws IOException {
    Launch l = new Launch(server, host, spec, reporter);
    l.begin();
    return l;
  }

  /** This process's uid and gid, which every child is registered with. */
  static int[] ids() {
    try {
      return new int[] {
        (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"),
        (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid")
      };
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read this process's uid/gid", e);
    }
  }

  private void begin() throws IOException {
    String nspace = spec.nspace();
    User user = spec.user();
    int[] ids = user != null ? new int[] {user.uid(), user.gid()} : ids();
    List<Path> wdirs = new ArrayList<>();
    List<JobInfo.App> appData = new ArrayList<>();
    for (App a : spec.apps()) {
      Path wdir = (a.directory() != null ? a.directory() : Path.of("")).toAbsolutePath().normalize();
      wdirs.add(wdir);
      appData.add(new JobInfo.App(a.nprocs(), wdir, a.registeredArgv()));
    }
    List<Integer> appSizes = new ArrayList<>();
    for (App a : spec.apps()) {
      appSizes.add(a.nprocs());
    }
    // Refuses a namespace in use.
    host.addJob(
        nspace,
        appSizes,
        spec.placement() == null ? null : spec.placement().ranks(),
        ids[0],
        ids[1],
        listener());
    synchronized (this) {
      registered = true;
    }
    // As mpirun's: more processes on the node than it has processors (this job's and those of
    // the jobs already running) tells Open MPI to yield when idle rather than busy-poll.
    oversubscribed =
        host.processes() + (spec.placement() == null ? 0 : spec.placement().neighbours())
            > slots();
    try {
      Placement placement = spec.placement();
      List<Info> jobInfo =
          new ArrayList<>(
              placement != null
                  ? placement.jobInfo()
                  : JobInfo.singleNode(
                      nspace,
                      appData,
                      host.hostname(),
                      server.options().tmpdir(),
                      server.options().serverNspace(),
                      server.options().serverRank()));
      if (oversubscribed) {
        // What Open MPI 5 reads (its presence means oversubscribed), as PRRTE registers it.
        jobInfo.add(Info.of(Keys.NODE_OVERSUBSCRIBED, io.pmix.common.Value.of(true)));
      }
      jobInfo.addAll(spec.jobInfo());
      Status st = server.registerNspace(nspace, n, jobInfo);
      if (!ok(st)) {
        throw new IllegalStateException("the server refused namespace " + nspace + ": " + st);
      }
      for (int r = 0; r < n; r++) {
        st = server.registerClient(Proc.of(nspace, rankOf[r]), ids[0], ids[1]);
        if (!ok(st)) {
          throw new IllegalStateException("the server refused client " + r + ": " + st);
        }
      }
      int r = 0;
      for (int a = 0; a < spec.apps().size(); a++) {
        for (int i = 0; i < spec.apps().get(a).nprocs(); i++, r++) {
          startRank(r, spec.apps().get(a), wdirs.get(a));
        }
      }
    } catch (IOException | RuntimeException e) {
      for (int r = 0; r < n; r++) {
        if (procs[r] != null) {
          destroyTree(procs[r], true);
        }
      }
      for (int r = 0; r < n; r++) {
        if (procs[r] != null) {
          procs[r].onExit().join();
        }
      }
      deregister();
      throw e;
    }
    Thread t = new Thread(this::loop, "pmix-testkit-job-" + nspace);
    t.setDaemon(true);
    t.start();
  }

  private static boolean ok(Status s) {
    return s.isSuccess() || s.equals(Status.OPERATION_SUCCEEDED);
  }

  private void startRank(int r, App app, Path wdir) throws IOException {
    User user = spec.user();
    List<String> argv = user != null ? user.wrap(app.argv()) : app.argv();
    ProcessBuilder pb = new ProcessBuilder(argv).directory(wdir.toFile());
    Map<String, String> env = pb.environment();
    // Nothing inherited may point the child at another server; user tunables (PMIX_MCA_*) stay.
    env.keySet().removeIf(k -> k.startsWith("PMIX_") && !k.startsWith("PMIX_MCA_"));
    if (spec.placement() != null) {
      // Nested: what the outer launcher told pmixrun about itself is not the child's identity.
      env.keySet().removeIf(Nested::outerVariable);
      env.putAll(spec.placement().env());
    }
    env.putAll(server.setupFork(Proc.of(spec.nspace(), rankOf[r])));
    if (spec.slurmEnv()) {
      env.putAll(slurmEnv(host.hostname()));
    }
    // mpirun 4.1 sets it for every process (1 or 0); a value the user gave is kept.
    env.putIfAbsent(OVERSUBSCRIBE_VAR, oversubscribed ? "1" : "0");
    env.putAll(spec.env());
    env.putAll(app.env());
    if (rankOf[r] == 0 && spec.output().stdinToRank0()) {
      pb.redirectInput(ProcessBuilder.Redirect.INHERIT);
    } else {
      // Empty input, and no pipe for the launcher to hold (see Output.standardStreams).
      pb.redirectInput(ProcessBuilder.Redirect.from(DEV_NULL));
    }
    Output o = spec.output();
    if (o.direct()) {
      pb.redirectOutput(ProcessBuilder.Redirect.INHERIT);
      pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    }
    OutputStream fileOut = null;
    OutputStream fileErr = null;
    if (o.files() != null) {
      Path dir = o.files().dir().resolve(Output.FileOutput.rankDir(rankOf[r], jobSize));
      Files.createDirectories(dir);
      fileOut = Files.newOutputStream(dir.resolve("stdout"));
      fileErr = Files.newOutputStream(dir.resolve("stderr"));
    }
    boolean forward = o.files() == null || o.files().copy();
    Process p;
    // The rank starts with no signal blocked, as a C launcher's (ChildSignals: a Java thread
    // blocks SIGQUIT and a started process inherits that).
    long signalsHad = ChildSignals.unblockAll();
    try {
      p = pb.start();
    } catch (IOException e) {
      closeQuietly(fileOut);
      closeQuietly(fileErr);
      throw new IOException("cannot start " + app.argv().get(0) + ": " + e.getMessage(), e);
    } finally {
      ChildSignals.restore(signalsHad);
    }
    procs[r] = p;
    final int rank = r;
    CompletableFuture<Void> unused =
        p.onExit().thenAccept(x -> events.add(new Exited(rank, x.exitValue())));
    if (o.direct()) {
      return;
    }
    String tag = "[" + spec.nspace() + "," + (rankOf[r]) + "]";
    outPumps[r] =
        new OutputPump(
            p.getInputStream(),
            forward ? o.stdout() : null,
            o.tag() ? tag + "<stdout>: " : null,
            o.capture(),
            fileOut,
            "pmix-testkit-out-" + spec.nspace() + "-" + (rankOf[r]));
    errPumps[r] =
        new OutputPump(
            p.getErrorStream(),
            forward ? o.stderr() : null,
            o.tag() ? tag + "<stderr>: " : null,
            o.capture(),
            fileErr,
            "pmix-testkit-err-" + spec.nspace() + "-" + (rankOf[r]));
    outPumps[r].start();
    errPumps[r].start();
  }

  private static void closeQuietly(@Nullable OutputStream s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // Nothing was written to it.
      }
    }
  }

  /** Open MPI's MCA parameter that its runtime sets when the node is oversubscribed. */
  static final String OVERSUBSCRIBE_VAR = "OMPI_MCA_mpi_oversubscribe";

  /**
   * The node's slots, as mpirun counts them when not told: the processors this JVM may run on
   * ({@link Runtime#availableProcessors()}, which honours the affinity mask and a cgroup CPU
   * limit; mpirun counts cores, which is the same on a machine without hyperthreads).
   */
  static int slots() {
    return Runtime.getRuntime().availableProcessors();
  }

  /** Whether the node had more processes than {@link #slots()} when the job started. */
  boolean oversubscribed() {
    return oversubscribed;
  }

  /**
   * The variables with which Open MPI 4.1 recognizes a direct launch (docs/libpmix-facts.md): a
   * job id (this launcher's pid), step 0 and this node.
   */
  static Map<String, String> slurmEnv(String hostname) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("SLURM_JOBID", Long.toString(ProcessHandle.current().pid()));
    m.put("SLURM_STEP_ID", "0");
    m.put("SLURM_NODELIST", hostname);
    return m;
  }

  String nspace() {
    return spec.nspace();
  }

  int nprocs() {
    return n;
  }

  /** The pids, by rank. */
  List<Long> pids() {
    List<Long> l = new ArrayList<>();
    for (Process p : procs) {
      l.add(p.pid());
    }
    return l;
  }

  /** Whether any process of the job still runs. */
  boolean anyAlive() {
    for (Process p : procs) {
      if (p.isAlive()) {
        return true;
      }
    }
    return false;
  }

  /** The indices (ranks less the first rank here) of the processes still running. */
  List<Integer> liveRanks() {
    List<Integer> l = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      if (procs[r].isAlive()) {
        l.add(r);
      }
    }
    return l;
  }

  /** Completes when the job has ended and been deregistered. */
  CompletableFuture<JobResult> done() {
    return done;
  }

  /**
   * Stops the job from outside: every process is killed and the launcher status becomes {@code
   * status}. Only the first stop counts. Any thread.
   */
  void stop(String reason, int status) {
    events.add(new Stop(reason, status, false, Duration.ZERO));
  }

  /**
   * Like {@link #stop}, but the live ranks first get {@code grace} to end by themselves: a rank
   * told of a peer's death (an event) may finalize and exit before the launcher kills it.
   */
  void stopAfter(String reason, int status, Duration grace) {
    events.add(new Stop(reason, status, false, grace));
  }

  /** Ends the job as timed out (launcher status 124). Any thread. */
  void timeOut() {
    events.add(new Stop("timeout", JobResult.TIMEOUT_STATUS, true, Duration.ZERO));
  }

  /** What the host tells this job of its processes' requests. */
  private SingleNodeHost.JobListener listener() {
    return new SingleNodeHost.JobListener() {
      @Override
      public void aborted(
          Proc caller, Status status, @Nullable String message, List<Proc> targets) {
        onAbort(caller, status, message, targets);
      }

      @Override
      public void kill(Proc requester, List<Integer> ranks) {
        events.add(new KillRequest(requester, List.copyOf(ranks)));
      }

      @Override
      public void signal(Proc requester, List<Integer> ranks, int signal) {
        events.add(new SignalRequest(requester, List.copyOf(ranks), signal));
      }

      @Override
      public void terminate(Proc requester) {
        // PRRTE halts its DVM: every job ends, and prterun exits 0.
        stop("job control request of " + requester + " to terminate", 0);
      }
    };
  }

  private void onAbort(Proc caller, Status status, @Nullable String message, List<Proc> targets) {
    List<Integer> ranks = new ArrayList<>();
    boolean all = targets.isEmpty();
    for (Proc p : targets) {
      if (!p.nspace().equals(spec.nspace())) {
        continue;
      }
      int i = indexOf(p.rank());
      if (p.rank() == Proc.RANK_WILDCARD) {
        all = true;
      } else if (p.rank() >= 0 && i >= 0 && i < n && !ranks.contains(i)) {
        ranks.add(i);
      }
    }
    if (all) {
      ranks.clear();
      for (int r = 0; r < n; r++) {
        ranks.add(r);
      }
    }
    events.add(new Aborted(new JobResult.Abort(caller.rank(), status, message, ranks)));
  }

  // ---------------------------------------------------------------------------------------------
  // The job thread

  private void loop() {
    int[] codes = new int[n];
    boolean[] ended = new boolean[n];
    boolean[] killed = new boolean[n];
    List<Integer> order = new ArrayList<>();
    int alive = n;
    // The app of each rank and each app's live processes: the data store is told of each
    // process's end and each app's (what was published with PMIX_PERSIST_PROC or _APP goes).
    int[] appOf = new int[n];
    int[] appAlive = new int[spec.apps().size()];
    for (int a = 0, r = 0; a < appAlive.length; a++) {
      appAlive[a] = spec.apps().get(a).nprocs();
      for (int i = 0; i < appAlive[a]; i++, r++) {
        appOf[r] = a;
      }
    }
    JobResult.Abort abort = null;
    boolean timedOut = false;
    String stopReason = null;
    int stopStatus = 0;
    long deadline =
        spec.timeout() == null ? Long.MAX_VALUE : startNanos + spec.timeout().toNanos();
    long escalateAt = Long.MAX_VALUE;
    @Nullable Stop graced = null; // a stop waiting for its grace to pass
    long gracedAt = Long.MAX_VALUE;
    boolean[] onRequest = new boolean[n]; // killed because a job-control request asked
    long requestedForceAt = Long.MAX_VALUE; // when those still alive get SIGKILL
    try {
      while (alive > 0) {
        long now = System.nanoTime();
        // An abort may spare some ranks: the deadline still holds for them.
        long wake =
            Math.min(
                Math.min(
                    Math.min(timedOut || stopReason != null ? Long.MAX_VALUE : deadline,
                        escalateAt),
                    gracedAt),
                requestedForceAt);
        Event e;
        if (wake == Long.MAX_VALUE) {
          e = events.take();
        } else {
          e = events.poll(Math.max(0, wake - now), TimeUnit.NANOSECONDS);
        }
        now = System.nanoTime();
        if (e == null && requestedForceAt != Long.MAX_VALUE && now - requestedForceAt >= 0) {
          requestedForceAt = Long.MAX_VALUE;
          List<Integer> late = new ArrayList<>();
          for (int r = 0; r < n; r++) {
            if (onRequest[r] && procs[r].isAlive()) {
              late.add(r);
            }
          }
          if (!late.isEmpty()) {
            reporter.escalated(late);
            killRanks(late, killed, true);
          }
          continue;
        }
        if (e == null) {
          if (escalateAt != Long.MAX_VALUE && now - escalateAt >= 0) {
            List<Integer> live = liveRanks();
            if (!live.isEmpty()) {
              reporter.escalated(ranks(live));
              killRanks(live, killed, true);
            }
            escalateAt = Long.MAX_VALUE;
          } else if (graced != null && now - gracedAt >= 0) {
            e = new Stop(graced.reason(), graced.status(), false, Duration.ZERO);
            graced = null;
            gracedAt = Long.MAX_VALUE;
          } else if (deadline != Long.MAX_VALUE && now - deadline >= 0 && !timedOut) {
            e = new Stop("timeout", JobResult.TIMEOUT_STATUS, true, Duration.ZERO);
          }
          if (e == null) {
            continue;
          }
        }
        if (e instanceof Exited x) {
          if (!ended[x.rank()]) {
            ended[x.rank()] = true;
            codes[x.rank()] = x.code();
            order.add(x.rank());
            alive--;
            Proc who = Proc.of(spec.nspace(), rankOf[x.rank()]);
            host.procEnded(who);
            boolean connected = host.connected(who);
            if (!connected) {
              forgetUnconnected(who);
            }
            if (--appAlive[appOf[x.rank()]] == 0) {
              host.appEnded(spec.nspace(), appOf[x.rank()]);
            }
            reporter.exited(
                new Exit(
                    spec.nspace(),
                    rankOf[x.rank()],
                    procs[x.rank()].pid(),
                    x.code(),
                    killed[x.rank()],
                    connected,
                    host.finalized(who)));
          }
        } else if (e instanceof Aborted a) {
          if (abort == null && !timedOut && stopReason == null) {
            abort = a.abort();
            List<Integer> live = new ArrayList<>(a.abort().targets());
            live.removeIf(r -> ended[r]);
            reporter.aborted(a.abort(), ranks(live));
            killRanks(live, killed, false);
            escalateAt = now + KILL_GRACE.toNanos();
          }
        } else if (e instanceof KillRequest k) {
          if (abort == null && !timedOut && stopReason == null) {
            List<Integer> live = new ArrayList<>(k.ranks());
            live.removeIf(r -> ended[r] || killed[r]);
            if (!live.isEmpty()) {
              reporter.killing(k.requester(), live);
              for (int r : live) {
                onRequest[r] = true;
              }
              killRanks(live, killed, false);
              requestedForceAt = now + KILL_GRACE.toNanos();
            }
          }
        } else if (e instanceof SignalRequest q) {
          List<Integer> live = new ArrayList<>(q.ranks());
          live.removeIf(r -> ended[r]);
          if (!live.isEmpty()) {
            reporter.signalling(q.requester(), live, q.signal());
            for (int r : live) {
              signal(procs[r], q.signal());
            }
          }
        } else if (e instanceof Stop s && !s.grace().isZero()) {
          if (graced == null) {
            graced = s;
            gracedAt = now + s.grace().toNanos();
          }
        } else if (e instanceof Stop s) {
          if (!timedOut && stopReason == null) {
            List<Integer> live = liveRanks();
            if (s.timeout()) {
              timedOut = true;
              reporter.timedOut(Duration.ofNanos(now - startNanos), ranks(live));
            } else {
              stopReason = s.reason();
              stopStatus = s.status();
              reporter.stopping(s.reason(), ranks(live));
            }
            killRanks(live, killed, false);
            escalateAt = now + KILL_GRACE.toNanos();
          }
        }
      }
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      for (Process p : procs) {
        destroyTree(p, true);
      }
    } catch (RuntimeException | Error ex) {
      // An Error too (a jar replaced under a running JVM gives NoClassDefFoundError): the job must
      // still end, or pmixrun waits on `done` forever and not even --timeout or SIGTERM stop it.
      LOG.log(Level.ERROR, "job " + spec.nspace() + " failed", ex);
      for (Process p : procs) {
        destroyTree(p, true);
      }
      done.completeExceptionally(ex);
      try {
        deregister();
      } catch (RuntimeException | Error again) {
        ex.addSuppressed(again);
      }
      return;
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);

    // Output first: once every process has ended, its pipes end too (unless a grandchild that
    // escaped the kill holds them: then we do not wait for it).
    long outputDeadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
    List<String> out = new ArrayList<>();
    List<String> err = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      OutputPump op = outPumps[r];
      OutputPump ep = errPumps[r];
      if (op == null || ep == null) {
        out.add(""); // written by the rank itself (Output.direct), so not kept
        err.add("");
        continue;
      }
      try {
        op.join(OutputPump.millisUntil(outputDeadline));
        ep.join(OutputPump.millisUntil(outputDeadline));
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
      }
      out.add(op.text());
      err.add(ep.text());
    }

    ServerSnapshot before = settledSnapshot();
    deregister();
    ServerSnapshot after = snapshotOrNull();
    List<Integer> exitCodes = new ArrayList<>();
    for (int c : codes) {
      exitCodes.add(c);
    }
    done.complete(
        new JobResult(
            spec.nspace(),
            exitCodes,
            pids(),
            out,
            err,
            order,
            abort,
            timedOut,
            stopReason,
            stopStatus,
            before,
            after,
            elapsed,
            requested(onRequest)));
  }

  private static java.util.Set<Integer> requested(boolean[] onRequest) {
    java.util.Set<Integer> s = new java.util.TreeSet<>();
    for (int r = 0; r < onRequest.length; r++) {
      if (onRequest[r]) {
        s.add(r);
      }
    }
    return s;
  }

  /** Sends {@code signal} to {@code p} (kill(1): the JDK sends only SIGTERM and SIGKILL). */
  private static void signal(Process p, int signal) {
    try {
      Process k =
          new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!k.waitFor(10, TimeUnit.SECONDS)) {
        k.destroyForcibly();
      }
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot send signal {0} to {1}: {2}", signal, p.pid(), e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The index here of the process of rank {@code rank}, or -1 if it runs elsewhere. */
  private int indexOf(int rank) {
    for (int i = 0; i < n; i++) {
      if (rankOf[i] == rank) {
        return i;
      }
    }
    return -1;
  }

  /** The ranks of the processes of indices {@code indices} here. */
  private List<Integer> ranks(List<Integer> indices) {
    List<Integer> l = new ArrayList<>(indices.size());
    for (int i : indices) {
      l.add(rankOf[i]);
    }
    return l;
  }

  /**
   * Signals the ranks all at once, then what they started. One rank signalled after another, each
   * after a scan of the process table for its descendants, let a survivor see an earlier rank's
   * death (a collective failing with PARTIAL_SUCCESS, say) and act on it, finalize even, before
   * its own signal came: a job stopped by its timeout must not go on doing things in between.
   */
  private void killRanks(List<Integer> ranks, boolean[] killed, boolean force) {
    List<Process> targets = new ArrayList<>();
    for (int r : ranks) {
      if (procs[r].isAlive()) {
        killed[r] = true;
        targets.add(procs[r]);
      }
    }
    if (!targets.isEmpty()) {
      signal(targets, descendantsOf(targets), force);
    }
  }

  /**
   * Signals {@code targets}, then {@code kids} (collected before: once a process is gone, what
   * it started is no longer ours to find): SIGKILL if {@code force}, else SIGTERM.
   */
  private static void signal(List<Process> targets, List<ProcessHandle> kids, boolean force) {
    for (Process p : targets) {
      if (force) {
        p.destroyForcibly();
      } else {
        p.destroy();
      }
    }
    for (ProcessHandle h : kids) {
      boolean unused = force ? h.destroyForcibly() : h.destroy();
    }
  }

  /** The live descendants of {@code roots}, from one walk of the process table. */
  static List<ProcessHandle> descendantsOf(List<Process> roots) {
    Map<Long, List<ProcessHandle>> children = new HashMap<>();
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              Optional<ProcessHandle> parent = h.parent();
              if (parent.isPresent()) {
                children.computeIfAbsent(parent.get().pid(), k -> new ArrayList<>()).add(h);
              }
            });
    List<ProcessHandle> out = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    ArrayDeque<Long> todo = new ArrayDeque<>();
    for (Process p : roots) {
      todo.add(p.pid());
      seen.add(p.pid());
    }
    while (!todo.isEmpty()) {
      for (ProcessHandle c : children.getOrDefault(todo.poll(), List.of())) {
        if (seen.add(c.pid())) { // a pid reused while the table was read cannot loop
          out.add(c);
          todo.add(c.pid());
        }
      }
    }
    return out;
  }

  /** Signals a process and everything it started (SIGKILL if {@code force}, else SIGTERM). */
  static void destroyTree(Process p, boolean force) {
    signal(List.of(p), p.descendants().toList(), force);
  }

  /** The server's view once it has seen every process of the job go. */
  private @Nullable ServerSnapshot settledSnapshot() {
    long end = System.nanoTime() + SETTLE.toNanos();
    while (true) {
      ServerSnapshot s = snapshotOrNull();
      if (s == null) {
        return null;
      }
      boolean busy =
          s.peers().stream()
              .anyMatch(
                  p ->
                      p.nspace().equals(spec.nspace())
                          && (p.state() == ServerSnapshot.PeerState.ACTIVE
                              || p.state() == ServerSnapshot.PeerState.FINALIZING));
      if (!busy || System.nanoTime() - end > 0) {
        return s;
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return s;
      }
    }
  }

  private @Nullable ServerSnapshot snapshotOrNull() {
    try {
      return server.snapshot();
    } catch (IllegalStateException e) {
      return null; // the server was shut down under the job
    }
  }

  /**
   * A process that ended without connecting will never contribute to a collective, and the
   * server, which never saw it, still counts it: deregistering it makes the fences and other
   * collectives waiting for it stop waiting (the survivors get the lost-participant status, as
   * for a connected process that died), whatever ended it: its own exit, a job-control kill, a
   * signal. libpmix's server leaves such collectives waiting (its deregistration only counts the
   * process as finalized); docs/libpmix-facts.md.
   */
  private void forgetUnconnected(Proc who) {
    if (!server.isShutdown()) {
      Status unused = server.deregisterClient(who); // NOT_FOUND: the host had deregistered it
    }
  }

  /** Deregisters the clients and the namespace; forgets the job at the host. Idempotent. */
  private void deregister() {
    synchronized (this) {
      if (!registered) {
        return;
      }
      registered = false;
    }
    if (!server.isShutdown()) {
      // Submitted together: the progress thread runs its tasks in order, so the namespace's
      // deregistration, waited for, comes after them. Their answers do not matter (NOT_FOUND:
      // deregistered already, having never connected).
      for (int r = 0; r < n; r++) {
        CompletionStage<Status> unused =
            server.deregisterClientAsync(Proc.of(spec.nspace(), rankOf[r]));
      }
      Status unused = server.deregisterNspace(spec.nspace());
    }
    host.removeJob(spec.nspace());
  }
}
