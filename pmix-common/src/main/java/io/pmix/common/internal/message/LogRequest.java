package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * LOG (16): TIME timestamp, SIZE ndata, [INFO[ndata]], SIZE ndirs, [INFO[ndirs]]
 * (docs/commands.md §3.10). Peers of version 3 and later send the timestamp; earlier ones start with
 * the data. The reply is a status.
 *
 * @param time the {@code time_t} timestamp (0 from a 4.2.2 client; 0 when the peer sent none)
 * @param data what to log
 * @param directives how to log it
 */
public record LogRequest(long time, List<Info> data, List<Info> directives) implements Request {
  /** Copies the lists. */
  public LogRequest {
    data = List.copyOf(data);
    directives = List.copyOf(directives);
  }

  /** A log request as a 4.2.2 client sends it: timestamp 0. */
  public LogRequest(List<Info> data, List<Info> directives) {
    this(0, data, directives);
  }

  /** Whether a peer of this major version sends the TIME field (3 and later). */
  public static boolean carriesTime(int peerMajorVersion) {
    return peerMajorVersion >= 3;
  }

  @Override
  public Command command() {
    return Command.LOG;
  }

  /** Writes the fields of a version 3 or later peer, timestamp first. */
  @Override
  public void encodeFields(PmixWriter w) {
    w.pack(Value.signed(DataType.TIME, time));
    Units.writeInfos(w, data);
    Units.writeInfos(w, directives);
  }

  /** Reads the fields after the COMMAND unit as a version 3 or later peer writes them. */
  public static LogRequest decode(PmixReader r) {
    return decode(r, true);
  }

  /**
   * Reads the fields after the COMMAND unit; {@code withTime} as {@link #carriesTime} says for the
   * peer's version.
   */
  public static LogRequest decode(PmixReader r, boolean withTime) {
    return Units.decoding(
        "LOG",
        () -> {
          long time = withTime ? ((Value.Int) r.unpackOne(DataType.TIME)).value() : 0;
          List<Info> data = Units.readInfos(r);
          return new LogRequest(time, data, Units.readInfos(r));
        });
  }
}
