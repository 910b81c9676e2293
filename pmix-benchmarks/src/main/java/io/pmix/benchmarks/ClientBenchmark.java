package io.pmix.benchmarks;

import static io.pmix.benchmarks.BenchOutput.epochNanos;
import static io.pmix.benchmarks.BenchOutput.line;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The Java side of {@code bin/bench-client}: client-side latencies of pmix-java's {@link PMIx},
 * measured by a client of a real server (the test kit's C host server on libpmix), with exactly
 * the sequence of calls of {@code src/main/c/client_bench.c}, printing the same {@code BENCH
 * <metric> <nanoseconds>} lines (see that file for the list of metrics).
 *
 * <p>Why a hand-written harness and not JMH: what is measured only exists inside a job. The
 * process must be a rank launched by the server (its identity and the server's address come from
 * the environment the server gives its children), the peer-key and fence measures need the other
 * rank doing its half in lockstep, and init time is about a fresh process. JMH forks its own JVMs
 * and runs iterations on its own schedule, so it could do none of that. The harness does what JMH
 * would do for the steady-state measures: a warm-up of a tenth of the operations (the JIT has
 * compiled the hot path by then; the C side warms up the same way), then ten timed batches, each
 * reported, so the script sees the spread and takes the median; results are consumed (a checked
 * value) so no call can be optimised away.
 *
 * <p>Usage (every rank of a 2-proc job): {@code ClientBenchmark [--gets G] [--fences F] [--dmodex
 * R] [--cycles C] [--tool CMD]}; with {@code --tool}, rank 0 starts a tool ({@link
 * ToolBenchmark} or {@code tool_bench.c}) attached to the job's server after the fences (see
 * runTool). Exits 0 on success, 1 after printing the failure.
 */
public final class ClientBenchmark {
  private static final int BATCHES = 10;

  private ClientBenchmark() {}

  /** Runs the measures as one rank of a 2-proc job. */
  public static void main(String[] args) {
    long mainEntered = epochNanos();
    int gets = 100_000;
    int fences = 1000;
    int dmodex = 100;
    int cycles = 20;
    String tool = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--gets" -> gets = Integer.parseInt(v);
        case "--fences" -> fences = Integer.parseInt(v);
        case "--dmodex" -> dmodex = Integer.parseInt(v);
        case "--cycles" -> cycles = Integer.parseInt(v);
        case "--tool" -> tool = v;
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    try {
      run(mainEntered, gets, fences, dmodex, cycles, tool);
    } catch (RuntimeException | Error e) {
      System.err.println("FAIL " + e);
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run(
      long mainEntered, int gets, int fences, int dmodex, int cycles, @Nullable String tool) {
    long t = System.nanoTime();
    Proc me = PMIx.init();
    long initNs = System.nanoTime() - t;
    String t0 = System.getenv("BENCH_T0");
    if (t0 != null) {
      line("exec-to-init", epochNanos() - Long.parseLong(t0.strip()));
      // What the JVM alone costs before our code runs, for reading the figure above.
      line("exec-to-main", mainEntered - Long.parseLong(t0.strip()));
    }
    line("init", initNs);

    Proc job = Proc.wildcard(me.nspace());
    Proc peer = Proc.of(me.nspace(), 1 - me.rank());
    Info collect = Info.of("pmix.collect", true);
    int size = PMIx.get(job, "pmix.job.size").asInt();
    if (size != 2) {
      throw new IllegalStateException("run me as a job of 2 procs, not " + size);
    }

    // Job key: in the job data every client holds after init.
    batches("get-job", gets, () -> check(PMIx.get(job, "pmix.job.size").asInt() == 2));

    // Peer key, local after a collecting fence.
    String text = "a value of a peer, 32 bytes long";
    PMIx.put(Scope.GLOBAL, "bench.peer", Value.of(text));
    PMIx.commit();
    PMIx.fence(collect);
    batches("get-peer", gets, () -> check(PMIx.get(peer, "bench.peer").asString().equals(text)));

    // First get of a fresh peer key: a direct modex through the server.
    for (int r = 0; r < dmodex; r++) {
      String key = "bench.dm." + r;
      PMIx.put(Scope.GLOBAL, key, Value.of(text));
      PMIx.commit();
      PMIx.fence();
      t = System.nanoTime();
      Value v = PMIx.get(peer, key);
      line("get-dmodex", System.nanoTime() - t);
      check(v.asString().equals(text));
    }

    // First get of a fresh peer key after a collecting fence: local for a client reading a
    // shared-memory store (ds21/ds12), a round trip to the server for one on hash.
    for (int r = 0; r < dmodex; r++) {
      String key = "bench.ff." + r;
      PMIx.put(Scope.GLOBAL, key, Value.of(text));
      PMIx.commit();
      PMIx.fence(collect);
      t = System.nanoTime();
      Value v = PMIx.get(peer, key);
      line("get-first", System.nanoTime() - t);
      check(v.asString().equals(text));
    }

    // Fences: without data, then collecting 1 KiB per rank.
    PMIx.fence();
    batches("fence", fences, PMIx::fence, true);
    byte[] blob = new byte[1024];
    Arrays.fill(blob, (byte) 'x');
    PMIx.put(Scope.GLOBAL, "bench.blob", Value.of(blob));
    PMIx.commit();
    batches("fence-collect", fences, () -> PMIx.fence(collect), true);

    // The tool's init: rank 0 starts a tool that attaches to this job's server; the other rank
    // waits in the fence that follows.
    if (tool != null && me.rank() == 0) {
      runTool(tool, me.nspace());
    }

    // Re-init after finalize; no fence in a cycle, so no rank waits on one finalizing.
    PMIx.fence();
    for (int c = 0; c < cycles; c++) {
      PMIx.finalize();
      t = System.nanoTime();
      var unused = PMIx.init();
      line("init-warm", System.nanoTime() - t);
    }
    t = System.nanoTime();
    PMIx.finalize();
    line("finalize", System.nanoTime() - t);
  }

  /**
   * Runs {@code sh -c TOOL sh SERVER-PID NSPACE} and waits for it: the tool command (given by
   * {@code bin/bench-client}) stamps the clock and execs the tool. The server is this rank's
   * parent under every launcher the script uses (each forks its ranks itself). The job's PMIx
   * identity and the server's URIs are removed from the tool's environment, so the tool attaches
   * by pid as a tool and not as this rank; the temporary-directory and MCA variables stay, so it
   * looks where the server wrote its rendezvous files and uses the job's data-store choice.
   */
  private static void runTool(String tool, String nspace) {
    long server =
        ProcessHandle.current()
            .parent()
            .orElseThrow(() -> new IllegalStateException("no parent process"))
            .pid();
    ProcessBuilder pb =
        new ProcessBuilder("/bin/sh", "-c", tool, "sh", Long.toString(server), nspace).inheritIO();
    pb.environment()
        .keySet()
        .removeIf(
            k ->
                k.startsWith("PMIX_")
                    && !k.startsWith("PMIX_MCA_")
                    && !k.equals("PMIX_SERVER_TMPDIR")
                    && !k.equals("PMIX_SYSTEM_TMPDIR"));
    int status;
    try {
      status = pb.start().waitFor();
    } catch (IOException e) {
      throw new UncheckedIOException("starting the tool", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for the tool", e);
    }
    if (status != 0) {
      throw new IllegalStateException("the tool exited with status " + status);
    }
  }

  /** {@code ops} operations: a warm-up of a tenth, then {@link #BATCHES} timed batches. */
  private static void batches(String metric, int ops, Runnable op) {
    batches(metric, ops, op, false);
  }

  /**
   * As {@link #batches(String, int, Runnable)}; with {@code each}, every timed operation is also
   * printed on its own as {@code <metric>-each}, after the batches (as {@code client_bench.c}
   * does for the fences): a batch's mean carries its slowest few operations, their median not.
   */
  private static void batches(String metric, int ops, Runnable op, boolean each) {
    int per = Math.max(1, ops / BATCHES);
    long[] opsNs = each ? new long[per * BATCHES] : null;
    for (int b = -1; b < BATCHES; b++) {
      long t = System.nanoTime();
      for (int i = 0; i < per; i++) {
        long o = opsNs != null && b >= 0 ? System.nanoTime() : 0;
        op.run();
        if (opsNs != null && b >= 0) {
          opsNs[b * per + i] = System.nanoTime() - o;
        }
      }
      if (b >= 0) { // b == -1 is the warm-up
        line(metric, (System.nanoTime() - t) / per);
      }
    }
    if (opsNs != null) {
      for (long ns : opsNs) {
        BenchOutput.lineChecked(metric + "-each", ns);
      }
    }
  }

  private static void check(boolean ok) {
    if (!ok) {
      throw new IllegalStateException("a get returned a wrong value");
    }
  }
}
