package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;

/**
 * The reply of most requests: one STATUS unit (docs/commands.md §1.4). An empty reply reads as
 * {@code ERR_LOST_CONNECTION}: C completes the requests outstanding when the server goes away
 * with an empty buffer.
 *
 * @param status the outcome
 */
public record StatusReply(Status status) implements Message {
  /** Checks the status. */
  public StatusReply {
    requireNonNull(status, "status");
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
  }

  /**
   * Reads the status.
   *
   * @throws PmixException {@code ERR_LOST_CONNECTION} for an empty reply
   */
  public static StatusReply decode(PmixReader r) {
    return new StatusReply(Units.readStatus(r));
  }

  /**
   * Reads the status a reply opens with (any reply but REQ's), leaving the rest.
   *
   * @throws PmixException {@code ERR_LOST_CONNECTION} for an empty reply
   */
  public static Status readStatus(PmixReader r) {
    return Units.readStatus(r);
  }

  /**
   * Throws the status unless it is success.
   *
   * @throws PmixException with the status, and {@code what} as its message
   */
  public void check(String what) {
    if (!status.isSuccess()) {
      throw new PmixException(status, what);
    }
  }
}
