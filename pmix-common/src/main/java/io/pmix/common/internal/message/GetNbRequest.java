package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * GETNB (4): STRING nspace, PROC_RANK rank, SIZE ninfo, [INFO[ninfo]], STRING key
 * (docs/commands.md §3.5). Answered by a {@link GetNbReply}.
 *
 * @param proc whose data
 * @param directives e.g. {@code pmix.immediate}, {@code pmix.timeout}
 * @param key the key; null (or absent on the wire) asks for all of the proc's data
 */
public record GetNbRequest(Proc proc, List<Info> directives, @Nullable String key)
    implements Request {
  /** Copies the directives. */
  public GetNbRequest {
    requireNonNull(proc, "proc");
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.GETNB;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packString(proc.nspace());
    w.packRank(proc.rank());
    Units.writeInfos(w, directives);
    w.packString(key);
  }

  /**
   * Reads the fields after the COMMAND unit; the key is optional at the end.
   *
   * @throws PmixException {@code BAD_PARAM} for a NULL namespace or a count beyond the limits
   */
  public static GetNbRequest decode(PmixReader r) {
    return Units.decoding(
        "GETNB",
        () -> {
          String nspace = r.unpackString();
          int rank = r.unpackRank();
          List<Info> info = Units.readInfos(r);
          String key = r.hasRemaining() ? r.unpackString() : null;
          if (nspace == null) {
            throw new PmixException(Status.ERR_BAD_PARAM, "GETNB without a namespace");
          }
          return new GetNbRequest(Proc.of(nspace, rank), info, key);
        });
  }
}
