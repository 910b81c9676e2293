package io.pmix.common;

/**
 * The one exception of this library for what a peer, a host or the wire decided: it carries the
 * {@link Status}. Caller mistakes are the JDK's exceptions instead (null, illegal argument, illegal
 * state).
 */
public final class PmixException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  @SuppressWarnings("serial") // Status is immutable and never serialized in practice.
  private final Status status;

  /** A failure with this status and a message saying what happened. */
  public PmixException(Status status, String message) {
    super(status.name() + ": " + message);
    this.status = status;
  }

  /** A failure with this status, a message and its cause. */
  public PmixException(Status status, String message, Throwable cause) {
    super(status.name() + ": " + message, cause);
    this.status = status;
  }

  /** The status a C peer would have returned. */
  public Status status() {
    return status;
  }
}
