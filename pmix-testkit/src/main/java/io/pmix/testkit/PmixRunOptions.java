package io.pmix.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The command line of {@code pmixrun}, parsed. As under mpirun, {@code :} separates the apps of
 * one job (MPMD): each app is {@code [options] [--] command [args...]}; {@code -n} and {@code -x}
 * belong to the app they precede, every other option is the launcher's, wherever it appears.
 * Options come first in each app; its command starts after {@code --} or at the first argument
 * that is not an option, and runs to the next {@code :} or the end.
 *
 * @param apps the apps, in app-number order (empty only with help or version)
 * @param timeout the job's time limit, or null
 * @param reportState where to write the state report, or null
 * @param tagOutput whether to tag output lines
 * @param slurmEnv whether to export the Slurm variables: TRUE, FALSE, or null to decide by
 *     looking at the command
 * @param toolSupport whether tool connections were asked for
 * @param dataserver the remote data server's HOST:PORT, or null
 * @param handshakeTimeout the server's handshake timeout, or null for its default
 * @param maxPendingHandshakes the server's cap on connections awaiting their handshake, or 0
 *     for its default
 * @param outputFiles where each rank's output is written to files, or null
 * @param mapByNode whether {@code --map-by node} was asked for: nested, the ranks are dealt
 *     round robin over the nodes; otherwise (the default, {@code slot}, {@code core}...) each
 *     node's ranks are consecutive
 * @param help whether help was asked for (nothing else is then required)
 * @param version whether the version was asked for (nothing else is then required)
 * @param warnings what the launcher should say about the command line before it runs
 */
record PmixRunOptions(
    List<AppLine> apps,
    @Nullable Duration timeout,
    @Nullable Path reportState,
    boolean tagOutput,
    @Nullable Boolean slurmEnv,
    boolean toolSupport,
    @Nullable String dataserver,
    @Nullable Duration handshakeTimeout,
    int maxPendingHandshakes,
    @Nullable OutputFiles outputFiles,
    boolean mapByNode,
    boolean help,
    boolean version,
    List<String> warnings) {

  /**
   * One app of the command line.
   *
   * @param nprocs its number of processes
   * @param command its command and arguments
   * @param env its {@code -x} exports, in the order given
   */
  record AppLine(int nprocs, List<String> command, Map<String, String> env) {
    AppLine {
      command = List.copyOf(command);
      env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
    }
  }

  /**
   * {@code --output-filename DIR[:nojobid,nocopy]} as Open MPI 4.1 reads it: the files go to
   * {@code DIR/JOB/rank.N/stdout} and {@code stderr}, JOB the job's number (1, then 2, 3, ...
   * for spawned jobs), or to {@code DIR/rank.N/...} with {@code nojobid}; with {@code nocopy}
   * the output goes to the files only, not also to pmixrun's stdout and stderr.
   *
   * @param dir the directory, absolute
   * @param jobIdDir whether a directory per job sits between DIR and the rank directories
   * @param copy whether the output is also forwarded as without the option
   */
  record OutputFiles(Path dir, boolean jobIdDir, boolean copy) {
    /** The directory of the job numbered {@code job}. */
    Path jobDir(int job) {
      return jobIdDir ? dir.resolve(Integer.toString(job)) : dir;
    }
  }

  /** The number of processes over all apps. */
  int nprocs() {
    int n = 0;
    for (AppLine a : apps) {
      n += a.nprocs();
    }
    return n;
  }

  /** The first app's command (empty only with help or version). */
  List<String> command() {
    return apps.isEmpty() ? List.of() : apps.get(0).command();
  }

  /**
   * Every {@code -x} export of every app, a later one of the same name winning: what mpirun
   * gives the jobs that MPI_Comm_spawn starts.
   */
  Map<String, String> exports() {
    Map<String, String> m = new LinkedHashMap<>();
    for (AppLine a : apps) {
      m.putAll(a.env());
    }
    return Collections.unmodifiableMap(m);
  }

  static final String USAGE =
      """
      usage: pmixrun -n N [options] [--] command [args...] [: -n M [-x ...] command2 ...]

      Runs N copies of a command on this node under an embedded PMIx server (pmix-java,
      byte-compatible with OpenPMIx 4.2.2), like mpirun on one node: each copy is a PMIx
      client of one job (ranks 0..N-1) and gets the server's environment; the job's data
      (sizes, local peers and ranks, node and process maps, app number, job id) is
      registered before any copy starts. The job's namespace is jrun-<host>-<pid>@1 (the
      server's jrun-<host>-<pid>@0), as PRRTE's prterun-<host>-<pid>@1: never "pmix...",
      which libpmix reserves for its own keys.

      Several apps separated by ':' make one job (MPMD), as under mpirun: ranks numbered
      consecutively across the apps, app 0's first; each rank is told its pmix.appnum and
      pmix.apprank. -n and -x belong to the app they precede; the other options are the
      launcher's wherever they appear. "--app FILE" (mpirun's appfile) reads the apps from
      FILE instead, one a line ("-n 2 -x A=1 ./a"; words split at blanks, no quoting; '#'
      starts a comment): what a nested pmixrun needs, since mpirun, srun and prterun take
      a ':' on their own command line for theirs.

      options:
        -n, -np N               number of processes of the app, 1 to 65535 (required)
        --app FILE              the apps, one a line of FILE (above); no -n, -x or
                                command on the command line then
        -x VAR[=value]          export VAR to the app's processes, with this value or with
                                its value in pmixrun's environment; the jobs the processes
                                spawn get every app's exports
        --timeout S             kill the job after S seconds (exit status 124)
        --report-state FILE     write the server's state as JSON: after every process
                                has ended but before the job is deregistered
                                ("beforeDeregister") and after ("afterDeregister");
                                bin/pmix-state FILE prints it as tables
        --tag-output            prefix each output line with [jobid,rank]<stdout>: or
                                [jobid,rank]<stderr>:
        --output-filename DIR[:nojobid,nocopy]
                                also write each rank's stdout and stderr to
                                DIR/JOB/rank.R/stdout and DIR/JOB/rank.R/stderr, as
                                Open MPI 4.1 names them (JOB 1 for this job, 2, 3, ...
                                for spawned jobs; R zero-padded by the job's size);
                                nojobid leaves out JOB, nocopy the terminal copy
        --slurm-env             export SLURM_JOBID, SLURM_STEP_ID and SLURM_NODELIST to
                                the processes. Open MPI 4.1 treats a process as
                                direct-launched only inside a launch environment it
                                recognizes; without these, each rank of an MPI program
                                runs as a singleton (MPI_COMM_WORLD of size 1). On by
                                default when the command is an executable linked
                                against libmpi (checked with ldd)
        --no-slurm-env          never export them
        --tool-support          accept tool connections (pps, a debugger, PMIxTool): the
                                server publishes itself in rendezvous files, found by
                                pmixrun's pid or by its namespace jrun-<host>-<pid>@0
        --dataserver HOST:PORT  publish/lookup through a shared pmix-dataserver
                                (bin/pmix-dataserver) instead of the embedded store
        --handshake-timeout S   close a connection that has not sent its connect request
                                S seconds (1 to 3600) after its accept (default 10)
        --max-pending-handshakes N
                                at most N connections (1 to 1000000) awaiting their
                                connect decision at once; one more replaces the oldest
                                that has not sent its request (default 4096, the listen
                                backlog)
        --map-by POLICY[:modifiers]
                                how ranks are placed on the nodes of a nested pmixrun, as
                                mpirun's: slot, core, hwthread, socket, package, numa,
                                l1cache, l2cache or l3cache (each node's ranks consecutive,
                                node 0's first: the default) or node (rank r on node
                                r mod nodes, round robin, skipping full nodes); modifiers
                                (":OVERSUBSCRIBE"...) are accepted and ignored. On one node
                                every policy places every rank here
        --oversubscribe, --allow-run-as-root
                                accepted, for command lines written for mpirun: pmixrun
                                never refuses more processes than processors, nor root
        -V, --version           the version, and the PMIx version it speaks
        -h, --help              this text
      Any other option is an error (exit status 2).

      Launch environment: every process gets the server's PMIX_* variables, the Slurm
      variables (above), OMPI_MCA_mpi_oversubscribe as mpirun sets it (1 when this node
      runs more processes than it has processors, so that Open MPI yields when idle
      instead of busy-polling; 0 otherwise; a value in pmixrun's environment or given
      with -x is kept) and its app's -x exports. PMIX_MCA_<name> variables set the
      embedded store's parameters (e.g. PMIX_MCA_prte_data_server_timeout) and pass on
      to the processes; other inherited PMIX_* variables are removed from their
      environment.

      Publish/lookup/unpublish are served by an embedded pmix-dataserver store (or the
      --dataserver); fences, connects and disconnects are completed by the server (every
      process is local). PMIx_Spawn from a process starts one job of all its apps on
      this node (ranks numbered across the apps, app 0's first, as PRRTE does; namespace
      jrun-<host>-<pid>@2, @3, ...; the same launch environment as the first job;
      --timeout applies to it from its start, its output is forwarded too); pmixrun ends
      once the spawned jobs have ended too. A process of a spawned job that fails (exits
      with a non-zero status, or after PMIx_Init without PMIx_Finalize) ends every job,
      as under mpirun, rather than leave its parent waiting.

      Nested: started as a process of a PMIx job (srun --mpi=pmix, mpirun, prterun: its
      environment has PMIX_NAMESPACE, PMIX_RANK and a server URI; PMIXRUN_NESTED=0 turns
      this off), each pmixrun is one node of ONE job over all of them, e.g.
      "mpirun -n 3 --map-by ppr:1:node pmixrun -n 2 -- ./app" runs 6 ranks on 3 nodes. It
      joins the outer job with pmix-java's client; node i's ranks follow node i-1's (outer
      rank order), or with --map-by node rank r runs on node r mod nodes; the namespace
      is jrun-<outer namespace>@1 on every node (characters other than letters, digits,
      '_' and '-' as '-'); each outer rank is a node of its own, named
      after its host (host-<outer rank> when several share a host). Fences that span nodes
      are outer fences (collecting data when the inner fence does); a get of a remote rank's
      data not collected comes by direct modex from its node over TCP; publish/lookup go to
      the outer runtime's data service (or --dataserver); an abort of ranks on other nodes
      aborts the outer job, and a node whose processes failed aborts it with their status.
      MPMD: give every pmixrun the same apps with --app FILE (the outer launcher would take
      a ':' for its own apps); app 0's ranks come first, node by node (or dealt round robin
      with --map-by node), then app 1's. Connect/disconnect and groups span the nodes (outer
      fences); job control acts on the requester's node only.
      A process or a pmixrun lost on one node is reported to every node's processes
      (PMIX_ERR_PROC_ABORTED naming the lost ranks), fences across nodes under way fail
      (PMIX_ERR_PARTIAL_SUCCESS) and the job ends; a pmixrun whose outer launcher dies ends
      its processes.
      Refused with NOT_SUPPORTED: PMIx_Spawn, job control of processes on other nodes.

      Output of the processes is forwarded to pmixrun's stdout and stderr; rank 0 reads
      pmixrun's stdin, the others an empty input. A process of the job that dies after
      PMIx_Init without PMIx_Finalize, or exits non-zero before it connected, ends the job
      as under mpirun: the others are told (PMIX_ERR_PROC_ABORTED; a fence waiting for a
      process that never connected ends without it) and killed 2 s later if still
      running. PMIx_Abort from any process kills the
      processes it names, by default the whole job (SIGTERM, then SIGKILL 2 s later);
      SIGINT, SIGTERM, SIGHUP and --timeout kill them all. pmixrun's own messages go to
      stderr, prefixed "pmixrun:".

      exit status: 0 if every process exited 0; else the first non-zero exit status
      (128+signal for a process killed by a signal) in the order the processes ended;
      the PMIx_Abort status (1 if it is 0 modulo 256) after an abort; the failed spawned
      process's status (1 if it is 0) after a spawned job failed; 124 after --timeout;
      128+signal when pmixrun was stopped by a signal; 127 if the command cannot be
      started; 2 for a bad command line; 1 if the server cannot start.
      """;

  /** A command-line mistake. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  static PmixRunOptions parse(String... args) throws UsageException {
    return parse(System.getenv(), args);
  }

  /** Parses {@code args}, taking the values of {@code -x VAR} from {@code environment}. */
  static PmixRunOptions parse(Map<String, String> environment, String... args)
      throws UsageException {
    return parse(environment, false, args);
  }

  /** {@code fromFile}: {@code args} are the expansion of {@code --app FILE} ({@link Appfile}). */
  private static PmixRunOptions parse(
      Map<String, String> environment, boolean fromFile, String... args) throws UsageException {
    int appAt = -1;
    Duration timeout = null;
    Path report = null;
    boolean tag = false;
    Boolean slurm = null;
    boolean tools = false;
    String dataserver = null;
    Duration handshake = null;
    int pending = 0;
    OutputFiles files = null;
    boolean byNode = false;
    boolean help = false;
    boolean version = false;
    List<String> warnings = new ArrayList<>();
    List<AppLine> apps = new ArrayList<>();
    int i = 0;
    while (i < args.length) {
      int n = -1;
      Map<String, String> env = new LinkedHashMap<>();
      for (; i < args.length; i++) {
        String a = args[i];
        if (a.equals("--")) {
          i++;
          break;
        }
        if (a.equals(":") || !a.startsWith("-") || a.equals("-")) {
          break;
        }
        switch (a) {
          case "-n", "-np", "--np", "--n" -> n = positive(a, value(args, ++i, a), 65535);
          case "-x", "--x" -> export(value(args, ++i, a), environment, env, warnings);
          case "--timeout" ->
              timeout = Duration.ofSeconds(positive(a, value(args, ++i, a), 1 << 30));
          case "--report-state" -> report = Path.of(value(args, ++i, a));
          case "--tag-output" -> tag = true;
          case "--slurm-env" -> slurm = Boolean.TRUE;
          case "--no-slurm-env" -> slurm = Boolean.FALSE;
          case "--tool-support" -> tools = true;
          case "--dataserver" -> {
            dataserver = value(args, ++i, a);
            int colon = dataserver.lastIndexOf(':');
            if (colon <= 0 || colon == dataserver.length() - 1) {
              throw new UsageException("--dataserver wants HOST:PORT, not " + dataserver);
            }
            int unused = positive(a, dataserver.substring(colon + 1), 65535);
          }
          case "--handshake-timeout" ->
              handshake = Duration.ofSeconds(positive(a, value(args, ++i, a), 3600));
          case "--max-pending-handshakes" -> pending = positive(a, value(args, ++i, a), 1_000_000);
          case "--output-filename" -> files = outputFiles(value(args, ++i, a));
          case "--map-by", "-map-by" -> byNode = mapByNode(value(args, ++i, a));
          // mpirun refuses more processes than slots, or to run as root, unless told: pmixrun
          // refuses neither, so a command line written for mpirun keeps working.
          case "--oversubscribe", "--allow-run-as-root" -> {}
          case "--app" -> {
            if (fromFile || appAt >= 0 || !apps.isEmpty() || n >= 0 || !env.isEmpty()) {
              throw new UsageException(
                  "--app FILE gives every app: once, with no -n or -x on the command line");
            }
            appAt = i;
            String unused = value(args, ++i, a);
          }
          case "-V", "--version" -> version = true;
          case "-h", "--help" -> help = true;
          default -> {
            if (a.startsWith("-n") && a.length() > 2 && Character.isDigit(a.charAt(2))) {
              n = positive("-n", a.substring(2), 65535);
            } else {
              throw new UsageException(
                  "unknown option " + a + " (pmixrun --help lists the options; a command that"
                      + " starts with '-' goes after --)");
            }
          }
        }
      }
      if (appAt >= 0) {
        if (n >= 0 || !env.isEmpty() || i < args.length) {
          throw new UsageException(
              "--app FILE gives every app: no -n, -x or command on the command line");
        }
        return parse(environment, true, Appfile.expand(args, appAt));
      }
      List<String> command = new ArrayList<>();
      for (; i < args.length && !args[i].equals(":"); i++) {
        command.add(args[i]);
      }
      String which = "app " + apps.size();
      if (command.isEmpty()) {
        if (i < args.length || !apps.isEmpty()) {
          throw new UsageException("no command given for " + which + " (before or after ':')");
        }
        if (!help && !version) {
          if (n < 0) {
            throw new UsageException("-n N is required");
          }
          throw new UsageException("no command given");
        }
        break; // --help or --version alone

      }
      if (n < 0) {
        throw new UsageException(
            "-n N is required" + (apps.isEmpty() && i >= args.length ? "" : " for " + which
                + " (" + command.get(0) + ")"));
      }
      apps.add(new AppLine(n, command, env));
      if (i < args.length) {
        i++; // the ':'
        if (i >= args.length) {
          throw new UsageException("nothing after the last ':'");
        }
      }
    }
    int total = 0;
    for (AppLine a : apps) {
      total += a.nprocs();
    }
    if (total > 65535) {
      throw new UsageException("more than 65535 processes over all apps: " + total);
    }
    return new PmixRunOptions(
        List.copyOf(apps), timeout, report, tag, slurm, tools, dataserver, handshake, pending,
        files, byNode, help, version,
        List.copyOf(warnings));
  }

  /**
   * {@code -x VAR=value} sets VAR; {@code -x VAR} exports VAR's value in pmixrun's environment
   * (mpirun warns and exports nothing when it is not set; so does pmixrun).
   */
  private static void export(
      String spec, Map<String, String> environment, Map<String, String> env, List<String> warnings)
      throws UsageException {
    int eq = spec.indexOf('=');
    String name = eq < 0 ? spec : spec.substring(0, eq);
    if (name.isEmpty()) {
      throw new UsageException("-x wants VAR or VAR=value, not " + spec);
    }
    if (eq >= 0) {
      env.put(name, spec.substring(eq + 1));
      return;
    }
    String v = environment.get(name);
    if (v == null) {
      warnings.add("-x " + name + ": " + name + " is not set in pmixrun's environment;"
          + " nothing exported");
    } else {
      env.put(name, v);
    }
  }

  /** Whether {@code --map-by} names {@code node}; a policy mpirun does not know is an error. */
  private static boolean mapByNode(String v) throws UsageException {
    String policy = v.split(":", 2)[0].toLowerCase(java.util.Locale.ROOT);
    return switch (policy) {
      case "node" -> true;
      case "slot", "core", "hwthread", "socket", "package", "numa", "l1cache", "l2cache",
          "l3cache" -> false;
      default -> throw new UsageException("--map-by " + v + ": pmixrun maps by slot, core,"
          + " hwthread, socket, package, numa, l1cache, l2cache, l3cache or node");
    };
  }

  private static OutputFiles outputFiles(String v) throws UsageException {
    String dir = v;
    boolean jobId = true;
    boolean copy = true;
    int colon = v.indexOf(':');
    if (colon >= 0) {
      dir = v.substring(0, colon);
      for (String d : v.substring(colon + 1).split(",", -1)) {
        if (d.equalsIgnoreCase("nojobid")) {
          jobId = false;
        } else if (d.equalsIgnoreCase("nocopy")) {
          copy = false;
        } else {
          throw new UsageException(
              "--output-filename DIR[:nojobid,nocopy]: unknown directive '" + d + "'");
        }
      }
    }
    if (dir.isEmpty()) {
      throw new UsageException("--output-filename needs a directory");
    }
    return new OutputFiles(Path.of(dir).toAbsolutePath().normalize(), jobId, copy);
  }

  private static String value(String[] args, int i, String option) throws UsageException {
    if (i >= args.length) {
      throw new UsageException(option + " needs a value");
    }
    return args[i];
  }

  private static int positive(String option, String v, int max) throws UsageException {
    int x;
    try {
      x = Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new UsageException(option + " wants a number, not " + v);
    }
    if (x < 1 || x > max) {
      throw new UsageException(option + " must be 1 to " + max + ", not " + v);
    }
    return x;
  }
}
