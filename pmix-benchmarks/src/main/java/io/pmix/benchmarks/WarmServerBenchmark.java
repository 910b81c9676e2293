package io.pmix.benchmarks;

import io.pmix.testkit.JobResult;
import io.pmix.testkit.TestingPmixServer;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One {@code PMIxServer} hosting the same job several times in a row, for {@code bin/bench-server
 * BENCH_WARM=K}: what a host that embeds the server in a long-running process (a resource
 * manager's node daemon) gives its jobs once its JVM has run a few, against {@code bin/pmixrun},
 * whose JVM starts with every job and runs most of a short job's server code in the interpreter.
 *
 * <p>The server is the one {@code pmixrun} builds ({@link TestingPmixServer}: the single-node host
 * module and the local data service, one namespace per job). Usage: {@code WarmServerBenchmark
 * --jobs K -n N [--timeout SECONDS] -- command [args...]}. Runs the command as a job of N processes
 * K times, one job after the other; prints a line per job on stderr ({@code WARM job k of K: status
 * S, W s}); then prints on stdout what every rank of the last job printed (stdout, then stderr),
 * and the line {@code WARM wall SECONDS}: that job's wall time from its launch to its end. Exit
 * status 0 when every job succeeded; else the failed job's description on stderr and 1, and no
 * later job runs. Usage errors exit 2.
 */
public final class WarmServerBenchmark {
  private WarmServerBenchmark() {}

  /** Runs the jobs; see the class comment for the arguments. */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  private static int run(String[] args, PrintStream out, PrintStream err) {
    int jobs = 0;
    int n = 0;
    Duration timeout = Duration.ofSeconds(120);
    List<String> command = new ArrayList<>();
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--jobs" -> jobs = Integer.parseInt(args[++i]);
          case "-n" -> n = Integer.parseInt(args[++i]);
          case "--timeout" -> timeout = Duration.ofSeconds(Long.parseLong(args[++i]));
          case "--" -> {
            command.addAll(List.of(args).subList(i + 1, args.length));
            i = args.length;
          }
          default -> throw new IllegalArgumentException("unknown argument " + args[i]);
        }
      }
    } catch (ArrayIndexOutOfBoundsException | IllegalArgumentException e) {
      err.println("WarmServerBenchmark: " + e.getMessage());
      return usage(err);
    }
    if (jobs < 1 || n < 1 || command.isEmpty()) {
      return usage(err);
    }
    try (TestingPmixServer pmix = TestingPmixServer.builder().echoOutput(false).build()) {
      for (int k = 1; k <= jobs; k++) {
        long t0 = System.nanoTime();
        JobResult r = pmix.job(n).command(command).run(timeout);
        double wall = (System.nanoTime() - t0) / 1e9;
        err.printf(Locale.ROOT, "WARM job %d of %d: status %d, %.3f s%n", k, jobs, r.status(), wall);
        if (!r.succeeded()) {
          err.println(r.describe());
          printOutput(r, out);
          return 1;
        }
        if (k == jobs) {
          printOutput(r, out);
          out.printf(Locale.ROOT, "WARM wall %.6f%n", wall);
        }
      }
    }
    return 0;
  }

  private static void printOutput(JobResult r, PrintStream out) {
    for (int rank = 0; rank < r.nprocs(); rank++) {
      out.print(r.stdout(rank));
      out.print(r.stderr(rank));
    }
    out.flush();
  }

  private static int usage(PrintStream err) {
    err.println("usage: WarmServerBenchmark --jobs K -n N [--timeout SECONDS] -- command [args...]");
    return 2;
  }
}
