package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;

/**
 * The IOF_PULL reply: STATUS, then on success SIZE serverId, the server's index of the
 * registration, to be quoted in IOF_DEREG (docs/commands.md §4).
 *
 * @param status the outcome
 * @param serverId the server's id of the registration; -1 after a failure
 */
public record IofPullReply(Status status, long serverId) implements Message {
  /** Checks the status. */
  public IofPullReply {
    requireNonNull(status, "status");
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    if (status.isSuccess()) {
      w.packSize(serverId);
    }
  }

  /**
   * Reads the status and, on success, the server's id.
   *
   * @throws PmixException {@code ERR_LOST_CONNECTION} for an empty reply, {@code
   *     ERR_UNPACK_FAILURE} for a success without an id
   */
  public static IofPullReply decode(PmixReader r) {
    Status s = Units.readStatus(r);
    return s.isSuccess() ? decode(s, r) : new IofPullReply(s, -1);
  }

  /** Reads the id after a successful status already read. */
  public static IofPullReply decode(Status status, PmixReader r) {
    if (!r.hasRemaining()) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "IOF_PULL reply without a reference id");
    }
    return new IofPullReply(status, r.unpackSize());
  }
}
