package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * MONITOR (19): INFO monitor (one unit), STATUS error, SIZE ndirs, [INFO[ndirs]] (docs/commands.md
 * §4). The reply has the layout of a {@link QueryReply}; a monitor the server runs itself
 * (heartbeats) is answered with the status alone. {@code PMIx_Heartbeat} is no MONITOR request:
 * it is an empty message on tag 1.
 *
 * @param monitor what to monitor, e.g. {@code pmix.monitor.mbeat}
 * @param error the event to raise when the monitor trips (SUCCESS: the monitor's own)
 * @param directives how ({@code pmix.monitor.btime}, {@code pmix.monitor.bdrop}, {@code
 *     pmix.range}, {@code pmix.monitor.id}, ...)
 */
public record MonitorRequest(Info monitor, Status error, List<Info> directives)
    implements Request {
  /** Checks the monitor and status and copies the directives. */
  public MonitorRequest {
    requireNonNull(monitor, "monitor");
    requireNonNull(error, "error");
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.MONITOR;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.pack(DataType.INFO, List.of(monitor));
    w.packStatus(error);
    Units.writeInfos(w, directives);
  }

  /** Reads the fields after the COMMAND unit. */
  public static MonitorRequest decode(PmixReader r) {
    return Units.decoding(
        "MONITOR",
        () -> {
          Info monitor = r.unpackInfos(1).get(0);
          Status error = r.unpackStatus();
          return new MonitorRequest(monitor, error, Units.readInfos(r));
        });
  }
}
