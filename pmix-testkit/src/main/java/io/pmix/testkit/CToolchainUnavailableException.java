package io.pmix.testkit;

/**
 * Thrown when a C program cannot be built because gcc, pkg-config or the OpenPMIx development
 * files are missing: the machine cannot run the test, which is not the test's fault.
 *
 * <p>{@link PmixTestExtension} turns it into a skipped test on a developer machine and into a
 * failure where interop is required (environment {@code CI=true} or system property {@code
 * pmix.interop.required=true}). A C source that does not compile is not this exception but an
 * {@link IllegalStateException}: that is a bug.
 */
public final class CToolchainUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** With a message saying what is missing and how to get it. */
  public CToolchainUnavailableException(String message) {
    super(message);
  }
}
