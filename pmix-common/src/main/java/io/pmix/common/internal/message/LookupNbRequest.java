package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;

/**
 * LOOKUPNB (7): UINT32 uid, SIZE nkeys, one STRING unit per key, SIZE ninfo, [INFO[ninfo]]
 * (docs/commands.md §3.7; the layout LOOKUPNB and UNPUBLISHNB share). Answered by a {@link LookupNbReply}.
 *
 * @param uid the uid the client claims (a server authenticates its own)
 * @param keys the keys to look up
 * @param directives e.g. {@code pmix.range}, {@code pmix.wait}
 */
public record LookupNbRequest(int uid, List<String> keys, List<Info> directives)
    implements Request {
  /** Copies the lists. */
  public LookupNbRequest {
    keys = List.copyOf(keys);
    directives = List.copyOf(directives);
  }

  @Override
  public Command command() {
    return Command.LOOKUPNB;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeKeys(w, uid, keys, directives);
  }

  /** Reads the fields after the COMMAND unit. */
  public static LookupNbRequest decode(PmixReader r) {
    return Units.decoding(
        "LOOKUPNB",
        () -> {
          int uid = r.unpackUInt32();
          List<String> keys = new ArrayList<>();
          int n = Units.readCount(r);
          for (int i = 0; i < n; i++) {
            keys.add(r.unpackString());
          }
          return new LookupNbRequest(uid, keys, Units.readInfos(r));
        });
  }
}
