package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * IOF_PULL (22): SIZE nprocs, [PROC[nprocs]] sources, SIZE ndirs, [INFO[ndirs]], IOF_CHANNEL
 * channels, SIZE localId (docs/commands.md §4). Answered by an {@link IofPullReply}; the output then
 * arrives as {@link IofDelivery} pushes quoting {@code localId}.
 *
 * @param sources whose output
 * @param directives the registration's directives
 * @param channels the {@code pmix_iof_channel_t} bit mask (0x02 stdout, 0x04 stderr, 0x08 stddiag)
 * @param localId the requester's id of the registration
 */
public record IofPullRequest(List<Proc> sources, List<Info> directives, int channels, long localId)
    implements Request {
  /** Copies the lists. */
  public IofPullRequest {
    sources = List.copyOf(sources);
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.IOF_PULL;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeProcs(w, sources);
    Units.writeInfos(w, directives);
    w.pack(Value.unsigned(DataType.IOF_CHANNEL, channels));
    w.packSize(localId);
  }

  /** Reads the fields after the COMMAND unit. */
  public static IofPullRequest decode(PmixReader r) {
    return Units.decoding(
        "IOF_PULL",
        () -> {
          List<Proc> sources = Units.readProcs(r);
          List<Info> directives = Units.readInfos(r);
          int channels = (int) ((Value.UInt) r.unpackOne(DataType.IOF_CHANNEL)).value();
          return new IofPullRequest(sources, directives, channels, r.unpackSize());
        });
  }
}
