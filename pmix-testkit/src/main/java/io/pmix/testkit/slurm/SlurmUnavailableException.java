package io.pmix.testkit.slurm;

/**
 * Thrown when this machine cannot run a {@link SingleNodeSlurm}: Slurm or munge is not installed,
 * or the test does not run as root. Like a missing C toolchain, {@link
 * io.pmix.testkit.PmixTestExtension} and {@link SlurmExtension} turn it into a skipped test on a
 * developer machine and into a failure where interop is required ({@code CI=true}).
 */
public final class SlurmUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** With a message saying what is missing and how to get it. */
  public SlurmUnavailableException(String message) {
    super(message);
  }
}
