package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.List;

/**
 * The QUERY reply, and JOB_CONTROL's, which has the same layout: STATUS, then SIZE n and [INFO[n]]
 * unless the status is a failure without answers (docs/commands.md §3.9 and §4).
 *
 * @param status the outcome (a query may also answer {@code QUERY_PARTIAL_SUCCESS})
 * @param info the answers
 */
public record QueryReply(Status status, List<Info> info) implements Message {
  /** Checks the status and copies the answers. */
  public QueryReply {
    requireNonNull(status, "status");
    info = List.copyOf(info);
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    if (status.isSuccess() || !info.isEmpty()) {
      Units.writeInfos(w, info);
    }
  }

  /**
   * Reads the status and the answers that follow it, if any.
   *
   * @throws io.pmix.common.PmixException {@code ERR_LOST_CONNECTION} for an empty reply
   */
  public static QueryReply decode(PmixReader r) {
    return decode(Units.readStatus(r), r);
  }

  /** Reads the answers after a status already read (there may be none). */
  public static QueryReply decode(Status status, PmixReader r) {
    try { // not through Units.decoding's lambda: a tool's first query reads this
      return new QueryReply(status, r.hasRemaining() ? Units.readInfos(r) : List.of());
    } catch (RuntimeException e) {
      throw Units.malformed("QUERY reply", e);
    }
  }
}
