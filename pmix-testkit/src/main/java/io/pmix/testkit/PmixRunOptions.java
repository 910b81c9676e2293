package io.pmix.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The command line of {@code pmixrun}, parsed. Options come first; the command starts after
 * {@code --} or at the first argument that is not an option.
 *
 * @param nprocs the number of processes
 * @param timeout the job's time limit, or null
 * @param reportState where to write the state report, or null
 * @param tagOutput whether to tag output lines
 * @param slurmEnv whether to export the Slurm variables: TRUE, FALSE, or null to decide by
 *     looking at the command
 * @param toolSupport whether tool connections were asked for
 * @param dataserver the remote data server's HOST:PORT, or null
 * @param help whether help was asked for (nothing else is then required)
 * @param command the command and its arguments
 */
record PmixRunOptions(
    int nprocs,
    @Nullable Duration timeout,
    @Nullable Path reportState,
    boolean tagOutput,
    @Nullable Boolean slurmEnv,
    boolean toolSupport,
    @Nullable String dataserver,
    boolean help,
    List<String> command) {

  static final String USAGE =
      """
      usage: pmixrun -n N [options] [--] command [args...]

      Runs N copies of a command on this node under an embedded PMIx server (pmix-java,
      byte-compatible with OpenPMIx 4.2.2), like mpirun on one node: each copy is a PMIx
      client of one job (ranks 0..N-1) and gets the server's environment; the job's data
      (sizes, local peers and ranks, node and process maps, app number, job id) is
      registered before any copy starts.

      options:
        -n, -np N               number of processes, 1 to 65535 (required)
        --timeout S             kill the job after S seconds (exit status 124)
        --report-state FILE     write the server's state as JSON: after every process
                                has ended but before the job is deregistered
                                ("beforeDeregister") and after ("afterDeregister");
                                bin/pmix-state FILE prints it as tables
        --tag-output            prefix each output line with [jobid,rank]<stdout>: or
                                [jobid,rank]<stderr>:
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
                                pmixrun's pid or by its namespace pmixrun-<pid>
        --dataserver HOST:PORT  publish/lookup through a shared pmix-dataserver
                                (bin/pmix-dataserver) instead of the embedded store
        -h, --help              this text

      Publish/lookup/unpublish are served by an embedded pmix-dataserver store (or the
      --dataserver); fences, connects and disconnects are completed by the server (every
      process is local). PMIx_Spawn from a process starts one job of all its apps on
      this node (ranks numbered across the apps, app 0's first, as PRRTE does; namespace
      pmixrun-<pid>@2, @3, ...; --timeout applies to it from its start, its output is
      forwarded too); pmixrun ends once the spawned jobs have ended too.
      PMIX_MCA_<name> variables set the embedded store's parameters (e.g.
      PMIX_MCA_prte_data_server_timeout) and pass on to the processes; other inherited
      PMIX_* variables are removed from their environment.

      Output of the processes is forwarded to pmixrun's stdout and stderr; rank 0 reads
      pmixrun's stdin, the others an empty input. PMIx_Abort from any process kills the
      processes it names, by default the whole job (SIGTERM, then SIGKILL 2 s later);
      SIGINT, SIGTERM, SIGHUP and --timeout kill them all. pmixrun's own messages go to
      stderr, prefixed "pmixrun:".

      exit status: 0 if every process exited 0; else the first non-zero exit status
      (128+signal for a process killed by a signal) in the order the processes ended;
      the PMIx_Abort status (1 if it is 0 modulo 256) after an abort; 124 after
      --timeout; 128+signal when pmixrun was stopped by a signal; 127 if the command
      cannot be started; 2 for a bad command line; 1 if the server cannot start.
      """;

  /** A command-line mistake. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  static PmixRunOptions parse(String... args) throws UsageException {
    int n = -1;
    Duration timeout = null;
    Path report = null;
    boolean tag = false;
    Boolean slurm = null;
    boolean tools = false;
    String dataserver = null;
    boolean help = false;
    int i = 0;
    for (; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--")) {
        i++;
        break;
      }
      if (!a.startsWith("-") || a.equals("-")) {
        break;
      }
      switch (a) {
        case "-n", "-np", "--np" -> n = positive(a, value(args, ++i, a), 65535);
        case "--timeout" -> timeout = Duration.ofSeconds(positive(a, value(args, ++i, a), 1 << 30));
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
        case "-h", "--help" -> help = true;
        default -> {
          if (a.startsWith("-n") && a.length() > 2 && Character.isDigit(a.charAt(2))) {
            n = positive("-n", a.substring(2), 65535);
          } else {
            throw new UsageException("unknown option " + a);
          }
        }
      }
    }
    List<String> command = new ArrayList<>();
    for (; i < args.length; i++) {
      command.add(args[i]);
    }
    if (!help) {
      if (n < 0) {
        throw new UsageException("-n N is required");
      }
      if (command.isEmpty()) {
        throw new UsageException("no command given");
      }
    }
    return new PmixRunOptions(
        Math.max(n, 0), timeout, report, tag, slurm, tools, dataserver, help, List.copyOf(command));
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
