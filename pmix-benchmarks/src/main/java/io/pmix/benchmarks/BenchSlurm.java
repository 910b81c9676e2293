package io.pmix.benchmarks;

import io.pmix.testkit.slurm.SingleNodeSlurm;
import io.pmix.testkit.slurm.SlurmUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A single-node Slurm held up for the length of a benchmark sitting, for {@code bin/bench-client
 * --server srun}: the jobs then run under {@code srun --mpi=pmix}, whose PMIx server is Slurm's own
 * (libpmix 4.2.2 inside slurmstepd), the server most HPC users meet.
 *
 * <p>Usage: {@code BenchSlurm DIR}. Starts the cluster with every file under {@code DIR} ({@link
 * SingleNodeSlurm}: nothing under /etc, /run, /var or /tmp, ports picked at start), prints the line
 * {@code SLURM_CONF=PATH} on stdout once the node is idle, then waits until its standard input
 * ends (the script closes it, or dies) and stops the daemons before it exits. Exit status 0 after a
 * clean stop; 1 when the cluster does not start (the reason on stderr, e.g. not root), 2 on a usage
 * error.
 */
public final class BenchSlurm {
  private BenchSlurm() {}

  /** Holds the cluster up; see the class comment. */
  public static void main(String[] args) {
    System.exit(run(args, System.in, System.out, System.err));
  }

  private static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
    if (args.length != 1) {
      err.println("usage: BenchSlurm DIR");
      return 2;
    }
    SingleNodeSlurm slurm;
    try {
      slurm = SingleNodeSlurm.start(Path.of(args[0]), Duration.ofSeconds(60));
    } catch (SlurmUnavailableException | IllegalStateException | UncheckedIOException e) {
      err.println("BenchSlurm: no cluster: " + e.getMessage());
      return 1;
    }
    try (slurm) {
      out.println("SLURM_CONF=" + slurm.conf());
      out.flush();
      // The script's end, however it comes, ends this input: the daemons never outlive it.
      while (in.read() >= 0) {
        // nothing is expected on it
      }
    } catch (IOException e) {
      err.println("BenchSlurm: reading standard input: " + e.getMessage() + "; stopping");
    }
    return 0;
  }
}
