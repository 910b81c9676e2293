package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * NOTIFY (12) from a client or tool: STATUS code, DATA_RANGE range, SIZE ninfo, [INFO[ninfo]]
 * (docs/commands.md §3.8). The reply is a status. The server's push of an event is a {@link
 * NotifyPush}.
 *
 * @param code the event
 * @param range the {@code pmix_data_range_t} code, kept raw (a peer may send one we do not name)
 * @param info what the event carries
 */
public record NotifyRequest(Status code, int range, List<Info> info) implements Request {
  /** Checks the code and copies the infos. */
  public NotifyRequest {
    requireNonNull(code, "code");
    info = List.copyOf(info);
  }

  /** A notification over a named range. */
  public NotifyRequest(Status code, DataRange range, List<Info> info) {
    this(code, range.code(), info);
  }

  @Override
  public Command command() {
    return Command.NOTIFY;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packStatus(code);
    w.packByteEnum(DataType.DATA_RANGE, range);
    Units.writeInfos(w, info);
  }

  /** Reads the fields after the COMMAND unit. */
  public static NotifyRequest decode(PmixReader r) {
    return Units.decoding(
        "NOTIFY",
        () -> {
          Status code = r.unpackStatus();
          int range = r.unpackByteEnum(DataType.DATA_RANGE);
          return new NotifyRequest(code, range, Units.readInfos(r));
        });
  }
}
