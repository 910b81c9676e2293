package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * PUBLISHNB (6): UINT32 uid, SIZE ninfo, [INFO[ninfo]] (docs/commands.md §3.7). The reply is a
 * status.
 *
 * @param uid the uid the client claims (a server authenticates its own)
 * @param info the data to publish with the directives among them
 */
public record PublishNbRequest(int uid, List<Info> info) implements Request {
  /** Copies the infos. */
  public PublishNbRequest {
    info = List.copyOf(info);
  }

  @Override
  public Command command() {
    return Command.PUBLISHNB;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packUInt32(uid);
    Units.writeInfos(w, info);
  }

  /** Reads the fields after the COMMAND unit. */
  public static PublishNbRequest decode(PmixReader r) {
    return Units.decoding(
        "PUBLISHNB", () -> new PublishNbRequest(r.unpackUInt32(), Units.readInfos(r)));
  }
}
