package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import java.util.List;

/**
 * One piece of forwarded output as the server pushes it on tag 2. Immutable apart from the data
 * array, which is handed over (not copied) and must not be changed.
 *
 * @param source the process that wrote it
 * @param channel the channel bit: 0x02 stdout, 0x04 stderr, 0x08 stddiag (0x01 is stdin)
 * @param localId the requester's id of the IOF_PULL registration this output answers
 * @param info what the server attached (e.g. {@code pmix.iof.cmp} at the end of a stream)
 * @param data the bytes, possibly none
 */
@SuppressWarnings("ArrayRecordComponent") // Handed over once from the decoder to one sink.
public record IofChunk(Proc source, int channel, long localId, List<Info> info, byte[] data) {
  /** Checks for nulls and copies the list. */
  public IofChunk {
    requireNonNull(source, "source");
    info = ImmutableList.copyOf(info);
    requireNonNull(data, "data");
  }
}
