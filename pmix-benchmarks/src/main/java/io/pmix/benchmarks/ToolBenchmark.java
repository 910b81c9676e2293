package io.pmix.benchmarks;

import static io.pmix.benchmarks.BenchOutput.epochNanos;
import static io.pmix.benchmarks.BenchOutput.line;

import io.pmix.common.Info;
import io.pmix.common.Value;
import io.pmix.tool.PMIxTool;
import java.util.List;

/**
 * The Java side of {@code bin/bench-client}'s tool measures: the first {@link PMIxTool#init} in a
 * fresh JVM, attaching to the running job's server by its pid ({@code pmix.srvr.pidinfo}), with
 * exactly the calls of {@code src/main/c/tool_bench.c}, printing the same {@code BENCH <metric>
 * <nanoseconds>} lines: {@code tool-exec-to-init} (from {@code $BENCH_T0}, stamped just before
 * exec, to init's return), {@code tool-exec-to-main} (the JVM's share of it) and {@code tool-init}
 * (the init call alone).
 *
 * <p>Started by rank 0 of a {@link ClientBenchmark} job (its {@code --tool} option) with the job's
 * PMIx identity removed from its environment, so it attaches as a tool, not as that rank. After
 * init it checks that it reached the job's server (a namespace query must name the job), then
 * finalizes.
 *
 * <p>Usage: {@code ToolBenchmark --pid SERVER-PID --nspace JOB-NSPACE}. Exits 0 on success, 1
 * after printing the failure, 2 on a bad command line.
 */
public final class ToolBenchmark {
  private ToolBenchmark() {}

  /** Attaches once, prints the measures, checks the server and detaches. */
  public static void main(String[] args) {
    long mainEntered = epochNanos();
    int pid = 0;
    String nspace = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--pid" -> pid = Integer.parseInt(args[i + 1]);
        case "--nspace" -> nspace = args[i + 1];
        default -> {
          System.err.println("unknown option " + args[i]);
          System.exit(2);
        }
      }
    }
    if (pid <= 0 || nspace == null) {
      System.err.println("usage: ToolBenchmark --pid SERVER-PID --nspace JOB-NSPACE");
      System.exit(2);
    }
    try {
      run(mainEntered, pid, nspace);
    } catch (RuntimeException | Error e) {
      System.err.println("FAIL tool " + e);
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run(long mainEntered, int pid, String nspace) {
    long t = System.nanoTime();
    var unused = PMIxTool.init(Info.of("pmix.srvr.pidinfo", Value.pid(pid)));
    long initNs = System.nanoTime() - t;
    String t0 = System.getenv("BENCH_T0");
    if (t0 != null) {
      line("tool-exec-to-init", epochNanos() - Long.parseLong(t0.strip()));
      line("tool-exec-to-main", mainEntered - Long.parseLong(t0.strip()));
    }
    line("tool-init", initNs);

    // Attached to the job's server, not to some other one: it knows the job.
    List<String> namespaces = PMIxTool.queryNamespaces();
    if (!namespaces.contains(nspace)) {
      throw new IllegalStateException(
          "the server's namespaces " + namespaces + " do not include " + nspace);
    }
    PMIxTool.finalize();
  }
}
