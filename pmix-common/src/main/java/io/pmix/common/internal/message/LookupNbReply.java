package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The LOOKUPNB reply: STATUS, then on success SIZE n and PDATA[n] as one unit (docs/commands.md
 * §3.7 and §9.8).
 *
 * @param status the outcome
 * @param data what was found; none unless the status is success
 */
public record LookupNbReply(Status status, List<Value.PData> data) implements Message {
  /** Checks the status and copies the data. */
  public LookupNbReply {
    requireNonNull(status, "status");
    data = List.copyOf(data);
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    if (status.isSuccess()) {
      w.packSize(data.size());
      w.pack(DataType.PDATA, data);
    }
  }

  /**
   * Reads the status and, on success, the data.
   *
   * @throws io.pmix.common.PmixException {@code ERR_LOST_CONNECTION} for an empty reply
   */
  public static LookupNbReply decode(PmixReader r) {
    Status s = Units.readStatus(r);
    return s.isSuccess() ? decode(s, r) : new LookupNbReply(s, List.of());
  }

  /** Reads the data after a status already read (there may be none). */
  public static LookupNbReply decode(Status status, PmixReader r) {
    return Units.decoding(
        "LOOKUPNB reply",
        () -> {
          List<Value.PData> out = new ArrayList<>();
          if (r.hasRemaining()) {
            int n = Units.readCount(r);
            if (n != 0) {
              for (Value v : r.unpack(DataType.PDATA, n)) {
                out.add((Value.PData) v);
              }
            }
          }
          return new LookupNbReply(status, out);
        });
  }
}
