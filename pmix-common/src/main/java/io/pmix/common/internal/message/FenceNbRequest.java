package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.Comparator;
import java.util.List;

/**
 * FENCENB (3): SIZE nprocs, PROC[nprocs] as one unit, SIZE ninfo, [INFO[ninfo]] (docs/commands.md
 * §3.4). The reply is a status.
 *
 * @param procs the participants (a namespace's wildcard rank for all of it); at least one
 * @param directives e.g. {@code pmix.collect}, {@code pmix.timeout}
 */
public record FenceNbRequest(List<Proc> procs, List<Info> directives) implements Request {
  /**
   * The order the server keeps a collective's participants in, as 4.2.2 sorts them (namespace,
   * then rank read unsigned): every decoded FENCENB, CONNECTNB and DISCONNECTNB has its procs in
   * this order, so callers naming the same set differently meet in one collective.
   */
  public static final Comparator<Proc> PARTICIPANT_ORDER = Units.PARTICIPANT_ORDER;

  /**
   * Copies the lists.
   *
   * @throws IllegalArgumentException if there is no proc
   */
  public FenceNbRequest {
    procs = List.copyOf(procs);
    directives = List.copyOf(directives);
    if (procs.isEmpty()) {
      throw new IllegalArgumentException("a fence needs at least one proc");
    }
  }

  @Override
  public Command command() {
    return Command.FENCENB;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeParticipants(w, procs);
    Units.writeInfos(w, directives);
  }

  /**
   * Reads the fields after the COMMAND unit, the procs sorted in {@link #PARTICIPANT_ORDER}.
   *
   * @throws io.pmix.common.PmixException {@code BAD_PARAM} without a proc or with a count beyond
   *     the reader's limits
   */
  public static FenceNbRequest decode(PmixReader r) {
    return Units.decoding(
        "FENCENB",
        () -> new FenceNbRequest(Units.readParticipants(r, "FENCENB"), Units.readInfos(r)));
  }
}
