package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;

/**
 * REGEVENTS (13): SIZE ncodes, [STATUS[ncodes]] as one unit, SIZE ninfo, [INFO[ninfo]]
 * (docs/commands.md §3.8). No code means every event (the default handler). The reply is a
 * status, after which the server may push cached events.
 *
 * @param codes the events asked for
 * @param directives the registration's directives
 */
public record RegEventsRequest(List<Status> codes, List<Info> directives) implements Request {
  /** Copies the lists. */
  public RegEventsRequest {
    codes = List.copyOf(codes);
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.REGEVENTS;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packSize(codes.size());
    if (!codes.isEmpty()) {
      List<Value> v = new ArrayList<>(codes.size());
      for (Status s : codes) {
        v.add(Value.status(s));
      }
      w.pack(DataType.STATUS, v);
    }
    Units.writeInfos(w, directives);
  }

  /** Reads the fields after the COMMAND unit. */
  public static RegEventsRequest decode(PmixReader r) {
    return Units.decoding(
        "REGEVENTS",
        () -> {
          int n = Units.readCount(r);
          List<Status> codes = new ArrayList<>();
          if (n != 0) {
            for (Value v : r.unpack(DataType.STATUS, n)) {
              codes.add(((Value.StatusValue) v).status());
            }
          }
          return new RegEventsRequest(codes, Units.readInfos(r));
        });
  }
}
