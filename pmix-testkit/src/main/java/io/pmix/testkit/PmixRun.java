package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.dataserver.DataServerClient;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.gds.StaleStores;
import io.pmix.testkit.internal.LauncherJvm;
import io.pmix.testkit.internal.MpiLinkage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
// The one way for a JVM launcher to act on SIGINT/SIGTERM/SIGHUP itself (kill the job, report,
// exit 128+signal) rather than in a shutdown hook racing the main thread; javac warns about it.
import sun.misc.Signal;

/**
 * {@code pmixrun}: runs N copies of a command on this node under an embedded {@link PMIxServer}
 * with the {@link SingleNodeHost}, like {@code mpirun} on one node. {@code bin/pmixrun} replaces
 * itself with this JVM, so the launcher's pid is the server's pid and the processes are its
 * direct children. See {@link PmixRunOptions#USAGE} (printed by {@code pmixrun --help}) for the
 * options and the exit status.
 */
public final class PmixRun {
  private PmixRun() {}

  /** How long a job's survivors of a rank's death get to finalize before they are killed. */
  static final Duration DEATH_GRACE = Duration.ofSeconds(2);

  /** Runs {@code pmixrun} and exits with its status. */
  public static void main(String[] args) {
    // Before anything else: logging started on demand, no class-path scans (LauncherJvm).
    LauncherJvm.prepare();
    int status = run(args);
    System.out.flush();
    System.err.flush();
    System.exit(status);
  }

  /** The signals that stop the job, and their numbers on Linux. */
  private static final String[][] STOP_SIGNALS = {{"INT", "2"}, {"TERM", "15"}, {"HUP", "1"}};

  static int run(String[] args) {
    PrintStream err = System.err;
    PmixRunOptions o;
    try {
      o = PmixRunOptions.parse(args);
    } catch (PmixRunOptions.UsageException e) {
      err.println("pmixrun: " + e.getMessage());
      err.println("usage: pmixrun -n N [options] [--] command [args...]   (pmixrun --help)");
      return 2;
    }
    if (o.help()) {
      System.out.print(PmixRunOptions.USAGE);
      return 0;
    }
    if (o.version()) {
      System.out.print(versionText());
      return 0;
    }
    for (String w : o.warnings()) {
      err.println("pmixrun: warning: " + w);
    }
    // The libmpi check reads the programs' files (ldd where that cannot tell) on a thread of its
    // own while this JVM starts the server.
    CompletableFuture<Boolean> slurmDecision = slurmEnv(o, err);

    long pid = ProcessHandle.current().pid();
    Path tmpdir;
    // As OpenPMIx: PMIX_SERVER_TMPDIR, else TMPDIR (TEMP, TMP), else /tmp; never the JVM's own
    // java.io.tmpdir, since C tools attaching by pid search only there (issue #18).
    Path base = ServerOptions.builder().build().tmpdir();
    try {
      Files.createDirectories(base);
      removeStaleRuns(base);
      tmpdir = newRunDirectory(base, pid);
    } catch (IOException e) {
      err.println(
          "pmixrun: cannot create a temporary directory in "
              + base
              + " (PMIX_SERVER_TMPDIR, else TMPDIR, else /tmp): "
              + e.getMessage());
      return 1;
    }
    AtomicReference<@Nullable Launch> current = new AtomicReference<>();
    // The jobs the job's processes spawned and that still run: stopped with it, waited for before
    // pmixrun ends.
    List<Launch> spawned = new CopyOnWriteArrayList<>();
    AtomicReference<String @Nullable []> pendingSignal = new AtomicReference<>();
    for (String[] sig : STOP_SIGNALS) {
      try {
        Signal.handle(
            new Signal(sig[0]),
            s -> {
              Launch l = current.get();
              if (l != null) {
                l.stop("received SIG" + sig[0], 128 + Integer.parseInt(sig[1]));
                for (Launch c : spawned) {
                  c.stop("received SIG" + sig[0], 128 + Integer.parseInt(sig[1]));
                }
              } else {
                pendingSignal.compareAndSet(null, sig);
              }
            });
      } catch (IllegalArgumentException e) {
        // This JVM does not let us handle it (e.g. -Xrs): the default action stays.
      }
    }

    SingleNodeHost host = null;
    PMIxServer server = null;
    Nested nested = null;
    // What the job ended with: a nested node leaves the outer job by it (0: barrier, else abort).
    int finalStatus = 1;
    String finalWhy = "pmixrun failed";
    try {
      ServerOptions.Builder ob =
          ServerOptions.builder().tmpdir(tmpdir).systemTmpdir(tmpdir).toolSupport(o.toolSupport());
      if (o.handshakeTimeout() != null) {
        ob.handshakeTimeout(o.handshakeTimeout());
      }
      if (o.maxPendingHandshakes() > 0) {
        ob.maxPendingHandshakes(o.maxPendingHandshakes());
      }
      String prefix;
      if (nested()) {
        try {
          nested =
              Nested.join(
                  o.apps().stream().map(PmixRunOptions.AppLine::nprocs).toList(),
                  ob.build().hostname(),
                  o.mapByNode());
        } catch (RuntimeException e) {
          err.println("pmixrun: started as a PMIx client (PMIX_NAMESPACE and a server URI are set)"
              + " but cannot join the outer job: " + e.getMessage()
              + " (PMIXRUN_NESTED=0 runs on this node alone)");
          return 1;
        }
        ob.hostname(nested.nodeName()).serverRank(nested.node());
        prefix = nested.prefix();
      } else {
        // PRRTE's form (prterun-<host>-<pid>@<job>, the DVM @0): unique on the node, and not
        // "pmix...", which libpmix reserves for its keys while clients build keys from it.
        prefix = namespacePrefix(ob.build().hostname(), pid);
      }
      ServerOptions options = ob.serverNspace(prefix + "@0").build();
      if (o.dataserver() != null) {
        host =
            new SingleNodeHost(
                options.hostname(), DataServerClient.builder(o.dataserver()).name(prefix).build());
      } else if (nested != null) {
        // What one node publishes, the others must find.
        host = new SingleNodeHost(options.hostname(), new OuterDataService());
      } else {
        // The embedded store on the server's progress thread, given once the server runs.
        host = SingleNodeHost.storeOnServerThread(options.hostname());
      }
      try {
        if (nested != null) {
          host.otherNodes(nested);
          server = PMIxServer.create(host, options);
          nested.modex().attach(server); // serves the other nodes before any process runs
          server.start();
        } else {
          server = PMIxServer.init(host, options);
        }
        if (o.dataserver() == null && nested == null) {
          host.storeOn(server, DataStoreOptions.fromEnvironment(System.getenv()));
        }
      } catch (RuntimeException e) {
        err.println("pmixrun: cannot start the PMIx server: " + e.getMessage());
        return 1;
      }
      if (nested != null) {
        nested.barrier(); // every node's server is up and can answer the others
      }
      // The children write to our standard output and error themselves unless their output is
      // tagged or also written to files (Launch.Output.standardStreams); then it goes through
      // System.out/err, the pumps locking the stream for each write, as println does, so
      // pmixrun's messages never land inside a child's forwarded chunk.
      OutputStream out = System.out;
      OutputStream errOut = System.err;
      String nspace = prefix + "@1";
      LogChannels logs = new LogChannels(out, errOut, o.tagOutput());
      host.logTo(logs);
      AtomicInteger jobSeq = new AtomicInteger(1);
      PMIxServer srv = server;
      SingleNodeHost h = host;
      Messages reporter = new Messages(err, o.timeout(), null);
      Nested nest = nested;
      // A client that dies without PMIx_Finalize ends its job, as under mpirun/prterun: the
      // survivors are told (PMIX_ERR_PROC_ABORTED from the dead rank, which simpdie's ranks wait
      // for), get DEATH_GRACE to finalize and exit, and then are killed. A rank that fails before
      // it connected does too (mpirun ends the job on any non-zero exit): the server never saw it,
      // so it is deregistered first, or the survivors' fences would wait for it until their own
      // timeouts; they return the lost-participant status instead (Launch deregisters every
      // process that ends without connecting, before it reports the end).
      reporter.onDeath(
          e -> {
            Proc dead = Proc.of(e.nspace(), e.rank());
            Status unused =
                srv.notifyEvent(
                    Status.ERR_PROC_ABORTED,
                    dead,
                    DataRange.NAMESPACE.code(),
                    List.of(Info.of(Keys.EVENT_AFFECTED_PROC, dead)));
            Launch l = current.get();
            int status = (e.code() & 0xff) != 0 ? e.code() : 1;
            if (nest != null) {
              nest.announceLost(status, List.of(e.rank())); // the other nodes' ranks are told too
            }
            if (l != null) {
              l.stopAfter(
                  "rank " + e.rank() + (e.connected()
                      ? " died without PMIx_Finalize"
                      : " exited with status " + JobResult.describeExit(e.code())
                          + " before it connected"),
                  status,
                  DEATH_GRACE);
            }
          });
      // A spawned process that fails ends every job, as mpirun's does: its parent would
      // otherwise wait for it (in MPI_Comm_spawn's connect) until --timeout, or forever.
      AtomicReference<Launch.@Nullable Exit> spawnFailure = new AtomicReference<>();
      Consumer<Launch.Exit> endAll =
          e -> {
            if (!spawnFailure.compareAndSet(null, e)) {
              return;
            }
            String how =
                e.code() != 0
                    ? "exited with status " + JobResult.describeExit(e.code())
                    : "exited after PMIx_Init without PMIx_Finalize";
            err.println("pmixrun: rank " + e.rank() + " of spawned job " + e.nspace() + " (pid "
                + e.pid() + ") " + how + ": ending every job, as mpirun does");
            stopAll(current.get(), spawned, spawnFailure.get());
          };
      Messages spawnedReporter = new Messages(err, o.timeout(), endAll);
      Map<String, String> exports = o.exports();
      boolean slurm = slurmDecision.join();
      boolean slurmEnv = slurm;
      SingleNodeHost.Spawner spawner =
          (requester, apps, jobInfo) -> {
            int seq = jobSeq.incrementAndGet();
            String ns = prefix + "@" + seq;
            Launch.Spec child =
                Launch.spawnSpec(
                    ns,
                    requester,
                    apps,
                    slurmEnv,
                    exports,
                    new Launch.Output(false, out, errOut, o.tagOutput(), false, files(o, seq), true),
                    o.timeout());
            Launch c;
            try {
              c = Launch.start(srv, h, child, spawnedReporter);
            } catch (IOException e) {
              // The requester only gets a status; say which command, as prterun does
              // (docs/commands.md §6.4).
              err.println("pmixrun: cannot spawn a job for rank " + requester.rank() + " of "
                  + requester.nspace() + ": " + e.getMessage()
                  + " (answered PMIX_ERR_JOB_FAILED_TO_LAUNCH)");
              throw e;
            }
            spawned.add(c);
            // Forgotten once it has ended (after the add, so an early end cannot be missed): a
            // long job spawning thousands of jobs kept every ended one's processes, output pumps
            // and state snapshots, about 35 KiB each (bin/soak's jobs phase, issue #18).
            CompletableFuture<JobResult> unusedForget =
                c.done().whenComplete((r, t) -> spawned.remove(c));
            if (spawnFailure.get() != null) {
              stopAll(null, List.of(c), spawnFailure.get()); // failed while we listed it
            }
            return ns;
          };
      if (nested == null) {
        // Nested, a spawned job would have to span the nodes too: not done, refused.
        host.spawner(spawner);
      }
      List<Launch.App> apps = new ArrayList<>();
      for (PmixRunOptions.AppLine a : o.apps()) {
        apps.add(new Launch.App(a.nprocs(), a.command(), a.env(), null, null));
      }
      Launch.Spec spec =
          new Launch.Spec(
              nspace,
              apps,
              slurm,
              Map.of(),
              o.timeout(),
              new Launch.Output(false, out, errOut, o.tagOutput(), true, files(o, 1), true),
              List.of(),
              null,
              nested == null
                  ? null
                  : new Launch.Placement(
                      nested.ranks(),
                      nested.size(),
                      nested.jobInfo(
                          options.tmpdir(), options.serverNspace(), options.serverRank()),
                      nested.neighbours(),
                      nested.childEnvironment(options.tmpdir())));
      Launch launch;
      try {
        launch = Launch.start(server, host, spec, reporter);
      } catch (IOException e) {
        err.println("pmixrun: " + e.getMessage());
        return 127;
      } catch (IllegalStateException e) {
        err.println("pmixrun: " + e.getMessage());
        return 1;
      }
      current.set(launch);
      if (nest != null) {
        nest.watch((ranks, status, why) -> lostElsewhere(srv, launch, nspace, ranks, status, why));
      }
      if (spawnFailure.get() != null) {
        stopAll(launch, List.of(), spawnFailure.get());
      }
      String[] early = pendingSignal.get();
      if (early != null) {
        launch.stop("received SIG" + early[0], 128 + Integer.parseInt(early[1]));
      }
      JobResult result = launch.done().join();
      // Like mpirun, the launcher ends when the jobs spawned from its job have ended too.
      for (Launch c : spawned) {
        JobResult unused = c.done().join();
      }
      logs.close(); // the aggregated duplicates' counts, before the launcher's last word
      if (o.reportState() != null) {
        try {
          StateReport.write(o.reportState(), result);
        } catch (IOException e) {
          err.println("pmixrun: cannot write " + o.reportState() + ": " + e.getMessage());
        }
      }
      // A nested node's results are indexed by its processes; the job's ranks are its own.
      List<Integer> here = nest == null ? null : nest.ranks();
      summarize(err, result, o, i -> here == null || i < 0 ? i : here.get(i));
      finalStatus = result.status();
      finalWhy = "job " + result.nspace() + " ended with status " + finalStatus;
      return result.status();
    } catch (RuntimeException | Error e) {
      // Said before a nested node's abort below ends this process with the others.
      err.println("pmixrun: " + e);
      finalWhy = e.toString();
      throw e;
    } finally {
      Launch l = current.get();
      if (l != null && l.anyAlive()) {
        l.stop("pmixrun failed", 1); // never leave the processes behind
        try {
          l.done().get(2 * Launch.KILL_GRACE.toSeconds() + 5, TimeUnit.SECONDS);
        } catch (Exception e) {
          // Nothing more to do: the processes were signalled.
        }
      }
      for (Launch c : spawned) {
        if (c.anyAlive()) {
          c.stop("pmixrun failed", 1);
          try {
            c.done().get(2 * Launch.KILL_GRACE.toSeconds() + 5, TimeUnit.SECONDS);
          } catch (Exception e) {
            // Signalled; nothing more to do.
          }
        }
      }
      PMIxServer srv = server;
      if (nested != null) {
        nested.leave(finalStatus, finalWhy, () -> {
          if (srv != null) {
            srv.close();
          }
        });
      } else if (srv != null) {
        srv.close();
      }
      if (host != null) {
        host.close();
      }
      deleteTree(tmpdir);
    }
  }

  /**
   * Whether pmixrun runs nested ({@link Nested}): started as a process of a PMIx job, unless
   * {@code PMIXRUN_NESTED=0}.
   */
  private static boolean nested() {
    Map<String, String> env = System.getenv();
    return !"0".equals(env.get("PMIXRUN_NESTED")) && Nested.detected(env);
  }

  /** {@code jrun-<host>-<pid>}: the launcher's jobs are this {@code @1}, {@code @2}, .... */
  static String namespacePrefix(String hostname, long pid) {
    return "jrun-" + hostname + "-" + pid;
  }

  /** Where the job numbered {@code job} writes its output files, if anywhere. */
  private static Launch.Output.@Nullable FileOutput files(PmixRunOptions o, int job) {
    PmixRunOptions.OutputFiles f = o.outputFiles();
    return f == null ? null : new Launch.Output.FileOutput(f.jobDir(job), f.copy());
  }

  /**
   * Processes of this nested job on other nodes were lost (none named: the outer runtime is
   * gone): this node's processes are told as of a death here (PMIX_ERR_PROC_ABORTED from the
   * first, naming every one), get {@link #DEATH_GRACE} to finalize and are then killed, the job
   * ending with {@code status}; without the outer runtime they are killed at once.
   */
  private static void lostElsewhere(
      PMIxServer srv, Launch launch, String nspace, List<Integer> ranks, int status, String why) {
    if (!ranks.isEmpty()) {
      List<Proc> procs = ranks.stream().map(r -> Proc.of(nspace, r)).toList();
      List<Info> info = new ArrayList<>(List.of(Info.of(Keys.EVENT_AFFECTED_PROC, procs.get(0))));
      if (procs.size() > 1) {
        info.add(Info.of(Keys.EVENT_AFFECTED_PROCS, DataArray.of(DataType.PROC, procs)));
      }
      Status unused =
          srv.notifyEvent(Status.ERR_PROC_ABORTED, procs.get(0), DataRange.NAMESPACE.code(), info);
    }
    launch.stopAfter(why, status, ranks.isEmpty() ? Duration.ZERO : DEATH_GRACE);
  }

  /** Stops {@code main} (if any) and every job of {@code others}, for a failed spawned process. */
  private static void stopAll(
      @Nullable Launch main, List<Launch> others, Launch.@Nullable Exit failure) {
    if (failure == null) {
      return;
    }
    int status = (failure.code() & 0xff) != 0 ? failure.code() : 1;
    String reason = "rank " + failure.rank() + " of spawned job " + failure.nspace() + " failed";
    if (main != null) {
      main.stop(reason, status);
    }
    for (Launch c : others) {
      c.stop(reason, status);
    }
  }

  /** What {@code --version} prints. */
  static String versionText() {
    return "pmixrun (pmix-java) " + version() + "\n"
        + "PMIx server and launcher speaking the wire protocol of OpenPMIx 4.2.2 (PMIx v4)\n";
  }

  /** This build's version, from the jar's Maven metadata, or "unknown" outside a jar. */
  static String version() {
    try (InputStream in =
        PmixRun.class.getResourceAsStream("/META-INF/maven/io.pmix/pmix-testkit/pom.properties")) {
      if (in != null) {
        java.util.Properties p = new java.util.Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null) {
          return v;
        }
      }
    } catch (IOException e) {
      // As if absent.
    }
    return "unknown (not run from a built jar)";
  }

  private static void summarize(
      PrintStream err, JobResult r, PmixRunOptions o, java.util.function.IntUnaryOperator rankOf) {
    int status = r.status();
    if (r.abort().isPresent()) {
      JobResult.Abort a = r.abort().get();
      err.println("pmixrun: job " + r.nspace() + " aborted by rank " + a.rank() + " with status "
          + a.status().code() + (a.message() != null ? " (\"" + a.message() + "\")" : "")
          + "; exit status " + status);
    } else if (r.timedOut()) {
      Duration limit = o.timeout() != null ? o.timeout() : r.elapsed();
      err.println("pmixrun: job " + r.nspace() + " timed out after " + limit.toSeconds()
          + " s (--timeout); exit status " + status);
    } else if (r.stopReason().isPresent()) {
      err.println("pmixrun: job " + r.nspace() + " stopped (" + r.stopReason().get()
          + "); exit status " + status);
    } else if (status != 0) {
      int first = r.firstFailedRank().orElse(-1);
      long failed = r.exitCodes().stream().filter(c -> c != 0).count();
      err.println("pmixrun: job " + r.nspace() + " failed: rank " + rankOf.applyAsInt(first)
          + " exited first with"
          + " status " + JobResult.describeExit(r.exitCode(first)) + "; " + failed + " of "
          + r.nprocs() + " processes exited non-zero; exit status " + status);
    }
  }

  /** Prints the launcher's messages as the job goes. */
  private static final class Messages implements Launch.Reporter {
    private final PrintStream err;
    private final @Nullable Duration timeout;
    private final @Nullable Consumer<Launch.Exit> onFailure;
    private volatile @Nullable Consumer<Launch.Exit> onDeath;

    /** {@code onFailure}: told of each process that ends abnormally ({@link Launch.Exit}). */
    Messages(
        PrintStream err, @Nullable Duration timeout, @Nullable Consumer<Launch.Exit> onFailure) {
      this.err = err;
      this.timeout = timeout;
      this.onFailure = onFailure;
    }

    /**
     * {@code f} is told of each process that dies unless the launcher killed it: a connected
     * client that ends without PMIx_Finalize, and one that exits non-zero before it connected.
     */
    void onDeath(Consumer<Launch.Exit> f) {
      onDeath = f;
    }

    @Override
    public void exited(Launch.Exit e) {
      if (e.code() != 0 && !e.killedByLauncher()) {
        err.println("pmixrun: rank " + e.rank() + (onFailure != null ? " of " + e.nspace() : "")
            + " (pid " + e.pid() + ") exited with status " + JobResult.describeExit(e.code()));
      }
      if (onFailure != null && e.abnormal()) {
        onFailure.accept(e);
      }
      Consumer<Launch.Exit> d = onDeath;
      if (d != null && !e.killedByLauncher() && !e.finalized()
          && (e.connected() || e.code() != 0)) {
        d.accept(e);
      }
    }

    @Override
    public void aborted(JobResult.Abort abort, List<Integer> killing) {
      err.println("pmixrun: rank " + abort.rank() + " called PMIx_Abort with status "
          + abort.status().code() + (abort.message() != null ? ": \"" + abort.message() + "\"" : "")
          + (killing.isEmpty() ? "" : "; killing " + processes(killing)));
    }

    @Override
    public void timedOut(Duration after, List<Integer> killing) {
      long s = timeout != null ? timeout.toSeconds() : after.toSeconds();
      err.println("pmixrun: timeout: the job ran for " + s + " s (--timeout " + s + "); killing "
          + processes(killing));
    }

    @Override
    public void stopping(String reason, List<Integer> killing) {
      err.println("pmixrun: " + reason + ": killing " + processes(killing));
    }

    @Override
    public void killing(Proc requester, List<Integer> ranks) {
      err.println("pmixrun: " + requester + " asked (job control) to kill " + processes(ranks)
          + (onFailure != null ? " of a spawned job" : ""));
    }

    @Override
    public void signalling(Proc requester, List<Integer> ranks, int signal) {
      err.println("pmixrun: " + requester + " asked (job control) to send signal " + signal
          + " to " + processes(ranks) + (onFailure != null ? " of a spawned job" : ""));
    }

    @Override
    public void escalated(List<Integer> ranks) {
      err.println("pmixrun: " + processes(ranks) + " still running "
          + Launch.KILL_GRACE.toSeconds() + " s after SIGTERM: sending SIGKILL");
    }
  }

  /** {@code "3 processes (ranks 0-2)"}, {@code "1 process (rank 4)"}. */
  static String processes(List<Integer> ranks) {
    if (ranks.size() == 1) {
      return "1 process (rank " + ranks.get(0) + ")";
    }
    return ranks.size() + " processes (ranks " + ranges(ranks) + ")";
  }

  /** {@code [0,1,2,5,7,8]} as {@code "0-2,5,7-8"}. */
  static String ranges(List<Integer> ranks) {
    List<Integer> s = new ArrayList<>(ranks);
    s.sort(Comparator.naturalOrder());
    StringBuilder b = new StringBuilder();
    int i = 0;
    while (i < s.size()) {
      int j = i;
      while (j + 1 < s.size() && s.get(j + 1) == s.get(j) + 1) {
        j++;
      }
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(s.get(i));
      if (j > i) {
        b.append('-').append(s.get(j));
      }
      i = j + 1;
    }
    return b.toString();
  }

  /**
   * Whether the job gets Slurm's variables ({@code --slurm-env}, else whether an app is linked
   * against libmpi), decided on a thread of its own: it reads files, and may run ldd.
   */
  private static CompletableFuture<Boolean> slurmEnv(PmixRunOptions o, PrintStream err) {
    if (o.slurmEnv() != null) {
      return CompletableFuture.completedFuture(o.slurmEnv());
    }
    CompletableFuture<Boolean> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              String mpi = null;
              for (PmixRunOptions.AppLine a : o.apps()) {
                if (linkedAgainstMpi(a.command().get(0))) {
                  mpi = a.command().get(0);
                  break;
                }
              }
              if (mpi != null) {
                err.println("pmixrun: " + mpi + " is linked against libmpi: exporting"
                    + " SLURM_JOBID, SLURM_STEP_ID and SLURM_NODELIST so that Open MPI treats its"
                    + " ranks as direct-launched (--no-slurm-env turns this off)");
              }
              f.complete(mpi != null);
            },
            "pmixrun-ldd");
    t.setDaemon(true);
    t.start();
    return f;
  }

  /**
   * {@code BASE/pmixrun-<pid>-<n>}, made here (mode 0755), the first n free. Not {@code
   * Files.createTempDirectory}: its random names initialize SecureRandom and the security
   * providers, ~20 ms of every job's start; the pid already makes the name ours, and a directory
   * left by a dead pmixrun of a reused pid is skipped.
   */
  private static Path newRunDirectory(Path base, long pid) throws IOException {
    for (int n = 0; ; n++) {
      Path p = base.resolve("pmixrun-" + pid + "-" + n);
      try {
        return Files.createDirectory(
            p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
      } catch (java.nio.file.FileAlreadyExistsException e) {
        if (n >= 1000) {
          throw e;
        }
      }
    }
  }

  /**
   * Whether {@code command} names an ELF executable that loads libmpi (an MPI program), as {@code
   * ldd} would show: read from the files ({@link MpiLinkage}), through ldd where that cannot tell.
   * Looks the name up on the PATH as exec would.
   */
  static boolean linkedAgainstMpi(String command) {
    Path exe = resolve(command);
    if (exe == null) {
      return false;
    }
    MpiLinkage.Answer read = MpiLinkage.of(exe, System.getenv("LD_LIBRARY_PATH"));
    if (read != MpiLinkage.Answer.UNKNOWN) {
      return read == MpiLinkage.Answer.MPI;
    }
    try {
      Process p = new ProcessBuilder("ldd", exe.toString()).redirectErrorStream(true).start();
      p.getOutputStream().close();
      String out = new String(p.getInputStream().readAllBytes(), UTF_8);
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return out.lines().anyMatch(l -> l.trim().toLowerCase(Locale.ROOT).startsWith("libmpi.so")
          || l.contains("/libmpi.so"));
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static @Nullable Path resolve(String command) {
    if (command.contains("/")) {
      Path p = Path.of(command);
      return Files.isRegularFile(p) ? p : null;
    }
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(":", -1)) {
      Path p = Path.of(dir.isEmpty() ? "." : dir, command);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  /**
   * Removes the directories of earlier pmixruns killed before they could ({@code
   * pmixrun-<pid>-*} whose pid is provably no longer that pmixrun; see {@link
   * StaleStores#provablyDead}): nothing but their own directory is left by a SIGKILLed one.
   */
  private static void removeStaleRuns(Path base) {
    // File.list and a hand-made match: a glob or a regular expression compiles a pattern, ~2 ms
    // of a fresh JVM on every job's start.
    String[] names = base.toFile().list();
    if (names == null) {
      return;
    }
    long self = ProcessHandle.current().pid();
    for (String n : names) {
      long pid = runDirectoryPid(n);
      if (pid < 0 || pid == self) {
        continue;
      }
      Path p = base.resolve(n);
      try {
        if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)
            && Files.getOwner(p).getName().equals(System.getProperty("user.name"))
            && StaleStores.provablyDead(pid, Files.getLastModifiedTime(p).toInstant())) {
          deleteTree(p);
        }
      } catch (IOException | RuntimeException e) {
        // Best effort: a stale directory left is harmless to this run.
      }
    }
  }

  /** The pid in a run directory's name {@code pmixrun-<pid>-<n>}, or -1 for another name. */
  static long runDirectoryPid(String name) {
    String prefix = "pmixrun-";
    if (!name.startsWith(prefix)) {
      return -1;
    }
    int dash = name.indexOf('-', prefix.length());
    if (dash <= prefix.length() || dash == name.length() - 1 || dash - prefix.length() > 18) {
      return -1;
    }
    for (int i = prefix.length(); i < dash; i++) {
      char c = name.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
    }
    return Long.parseLong(name.substring(prefix.length(), dash));
  }

  /**
   * Removes {@code dir} and what it holds, deepest first; a symbolic link is removed as a link,
   * never followed. Best effort: what cannot be removed stays, harmlessly.
   */
  private static void deleteTree(Path dir) {
    if (Files.isDirectory(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      String[] names = dir.toFile().list();
      if (names != null) {
        for (String n : names) {
          deleteTree(dir.resolve(n));
        }
      }
    }
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // Best effort: a temporary directory left behind is harmless.
    }
  }
}
