package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * CONNECTNB (10): SIZE nprocs, PROC[nprocs] as one unit, SIZE ninfo, [INFO[ninfo]], the layout of
 * a fence (docs/commands.md §4; {@code pmix_client_connect.c} at v4.2.2). Answered by a {@link ConnectNbReply}.
 *
 * @param procs the participants; at least one
 * @param directives e.g. {@code pmix.timeout}
 */
public record ConnectNbRequest(List<Proc> procs, List<Info> directives) implements Request {
  /**
   * Copies the lists.
   *
   * @throws IllegalArgumentException if there is no proc (C: PMIX_ERR_BAD_PARAM)
   */
  public ConnectNbRequest {
    procs = List.copyOf(procs);
    directives = List.copyOf(directives);
    if (procs.isEmpty()) {
      throw new IllegalArgumentException("CONNECTNB needs at least one proc");
    }
  }

  @Override
  public Command command() {
    return Command.CONNECTNB;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeParticipants(w, procs);
    Units.writeInfos(w, directives);
  }

  /**
   * Reads the fields after the COMMAND unit, the procs sorted in {@link
   * FenceNbRequest#PARTICIPANT_ORDER}.
   *
   * @throws io.pmix.common.PmixException {@code BAD_PARAM} without a proc or with a count beyond
   *     the reader's limits
   */
  public static ConnectNbRequest decode(PmixReader r) {
    return Units.decoding(
        "CONNECTNB",
        () -> new ConnectNbRequest(Units.readParticipants(r, "CONNECTNB"), Units.readInfos(r)));
  }
}
