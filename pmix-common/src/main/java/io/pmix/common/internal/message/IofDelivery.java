package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Forwarded output the server pushes on tag 2: PROC source, IOF_CHANNEL channel, SIZE localId,
 * SIZE ninfo, [INFO[ninfo]], BYTE_OBJECT data; no COMMAND unit (docs/commands.md §4, capture in
 * §9.2). A push without data (the end of a stream) has no byte object; a peer that sends no info
 * count either is accepted.
 *
 * @param source the process that wrote it
 * @param channel the channel bit: 0x02 stdout, 0x04 stderr, 0x08 stddiag (0x01 is stdin)
 * @param localId the requester's id of the {@link IofPullRequest} this output answers
 * @param info what the server attached (e.g. {@code pmix.iof.cmp} at the end of a stream)
 * @param data the bytes, possibly none (handed over: the record neither copies nor compares
 *     them by identity; see {@link #equals})
 */
// Handed over once from the decoder to one sink, so the data is not copied; compared by content.
@SuppressWarnings("ArrayRecordComponent")
public record IofDelivery(Proc source, int channel, long localId, List<Info> info, byte[] data)
    implements Message {
  /** Checks the fields and copies the infos; the data array is taken as it is. */
  public IofDelivery {
    requireNonNull(source, "source");
    info = List.copyOf(info);
    requireNonNull(data, "data");
  }

  @Override
  public void encode(PmixWriter w) {
    w.packProc(source);
    w.pack(Value.unsigned(DataType.IOF_CHANNEL, channel));
    w.packSize(localId);
    Units.writeInfos(w, info);
    if (data.length > 0) {
      w.packByteObject(data);
    }
  }

  /** Reads a push whole. */
  public static IofDelivery decode(PmixReader r) {
    return Units.decoding(
        "forwarded output",
        () -> {
          Proc source = r.unpackProc();
          int channel = (int) ((Value.UInt) r.unpackOne(DataType.IOF_CHANNEL)).value();
          long id = r.unpackSize();
          List<Info> info = r.hasRemaining() ? Units.readInfos(r) : List.of();
          byte[] data = r.hasRemaining() ? r.unpackByteObject() : new byte[0];
          return new IofDelivery(source, channel, id, info, data);
        });
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IofDelivery d
        && d.source.equals(source)
        && d.channel == channel
        && d.localId == localId
        && d.info.equals(info)
        && Arrays.equals(d.data, data);
  }

  @Override
  public int hashCode() {
    return Objects.hash(source, channel, localId, info) * 31 + Arrays.hashCode(data);
  }

  @Override
  public String toString() {
    return "IofDelivery[source=" + source + ", channel=" + channel + ", localId=" + localId
        + ", info=" + info + ", data=" + data.length + " bytes]";
  }
}
