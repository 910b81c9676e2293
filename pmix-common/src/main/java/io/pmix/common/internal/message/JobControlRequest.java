package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * JOB_CONTROL (18): SIZE ntargets, [PROC[ntargets]], SIZE ndirs, [INFO[ndirs]] (docs/commands.md
 * §4; capture in §9.2). The reply has the layout of a {@link QueryReply}: status, SIZE n, INFO[n].
 *
 * @param targets the processes acted on
 * @param directives the {@code pmix.jctrl.*} directives
 */
public record JobControlRequest(List<Proc> targets, List<Info> directives) implements Request {
  /** Copies the lists. */
  public JobControlRequest {
    targets = List.copyOf(targets);
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.JOB_CONTROL;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeProcs(w, targets);
    Units.writeInfos(w, directives);
  }

  /** Reads the fields after the COMMAND unit. */
  public static JobControlRequest decode(PmixReader r) {
    return Units.decoding(
        "JOB_CONTROL", () -> new JobControlRequest(Units.readProcs(r), Units.readInfos(r)));
  }
}
