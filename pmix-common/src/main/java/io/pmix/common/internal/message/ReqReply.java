package io.pmix.common.internal.message;

import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The REQ reply: STRING nspace, then that namespace's job data as KVAL units until the end; no
 * status unit (docs/commands.md §3.1 and §6.1). The same pair is what each blob of a {@link
 * ConnectNbReply} holds.
 *
 * @param nspace the namespace the job data is of (NULL from a broken peer is kept, for the
 *     receiver to refuse)
 * @param jobData the KVAL units as packed, in the reply's format (copied in and out)
 */
// Arrays as components: the record copies them in and out and compares contents.
@SuppressWarnings("ArrayRecordComponent")
public record ReqReply(@Nullable String nspace, byte[] jobData) implements Message {
  /** Copies the job data. */
  public ReqReply {
    jobData = jobData.clone();
  }

  /** A copy of the packed job data. */
  @Override
  public byte[] jobData() {
    return jobData.clone();
  }

  @Override
  public void encode(PmixWriter w) {
    w.packString(nspace);
    w.packRaw(jobData);
  }

  /** Reads the namespace and takes the rest as the job data. */
  public static ReqReply decode(PmixReader r) {
    // Not through Units.decoding's lambda: a client's first init reads this (docs/architecture.md,
    // "First requests").
    try {
      return new ReqReply(r.unpackString(), Units.rest(r));
    } catch (RuntimeException e) {
      throw Units.malformed("REQ reply", e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ReqReply q
        && Objects.equals(q.nspace, nspace)
        && Arrays.equals(q.jobData, jobData);
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(nspace) * 31 + Arrays.hashCode(jobData);
  }

  @Override
  public String toString() {
    return "ReqReply[nspace=" + nspace + ", jobData=" + jobData.length + " bytes]";
  }
}
