package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * IOF_DEREG (29): SIZE ndirs, [INFO[ndirs]], SIZE serverId (docs/commands.md §4). The reply is a
 * status.
 *
 * @param directives the deregistration's directives
 * @param serverId the server's id of the registration, from its {@link IofPullReply}
 */
public record IofDeregRequest(List<Info> directives, long serverId) implements Request {
  /** Copies the directives. */
  public IofDeregRequest {
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.IOF_DEREG;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeInfos(w, directives);
    w.packSize(serverId);
  }

  /** Reads the fields after the COMMAND unit. */
  public static IofDeregRequest decode(PmixReader r) {
    return Units.decoding(
        "IOF_DEREG", () -> new IofDeregRequest(Units.readInfos(r), r.unpackSize()));
  }
}
