package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;
import java.util.OptionalInt;

/**
 * An event the server pushes on tag 0: COMMAND NOTIFY, STATUS code, PROC source, SIZE ninfo,
 * [INFO[ninfo]], then (4.2.2 and later) DATA_RANGE range (docs/commands.md §3.8 and §5). Like a
 * request, it opens with its COMMAND unit, which {@link #decode} expects to have been read.
 *
 * @param code the event
 * @param source who raised it
 * @param info what it carries
 * @param range the {@code pmix_data_range_t} code, absent from servers before 4.2.2
 */
public record NotifyPush(Status code, Proc source, List<Info> info, OptionalInt range)
    implements Message {
  /** Checks the fields and copies the infos. */
  public NotifyPush {
    requireNonNull(code, "code");
    requireNonNull(source, "source");
    requireNonNull(range, "range");
    info = List.copyOf(info);
  }

  @Override
  public void encode(PmixWriter w) {
    w.packByteEnum(DataType.COMMAND, Command.NOTIFY.code());
    w.packStatus(code);
    w.packProc(source);
    Units.writeInfos(w, info);
    if (range.isPresent()) {
      w.packByteEnum(DataType.DATA_RANGE, range.getAsInt());
    }
  }

  /** Reads the fields after the COMMAND unit; the range is optional at the end. */
  public static NotifyPush decode(PmixReader r) {
    return Units.decoding(
        "event notification",
        () -> {
          Status code = r.unpackStatus();
          Proc source = r.unpackProc();
          List<Info> info = Units.readInfos(r);
          OptionalInt range =
              r.hasRemaining()
                  ? OptionalInt.of(r.unpackByteEnum(DataType.DATA_RANGE))
                  : OptionalInt.empty();
          return new NotifyPush(code, source, info, range);
        });
  }
}
