package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The SPAWNNB reply: STATUS, then on success STRING nspace and the new job's job data as KVAL
 * units until the end (docs/commands.md §4).
 *
 * @param status the outcome
 * @param nspace the new job's namespace; null after a failure (or when a broken peer sent none)
 * @param jobData the KVAL units as packed, in the reply's format (copied in and out)
 */
// Arrays as components: the record copies them in and out and compares contents.
@SuppressWarnings("ArrayRecordComponent")
public record SpawnNbReply(Status status, @Nullable String nspace, byte[] jobData)
    implements Message {
  /** Checks the status and copies the job data. */
  public SpawnNbReply {
    requireNonNull(status, "status");
    jobData = jobData.clone();
  }

  /** A copy of the packed job data. */
  @Override
  public byte[] jobData() {
    return jobData.clone();
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    if (status.isSuccess()) {
      w.packString(nspace);
      w.packRaw(jobData);
    }
  }

  /**
   * Reads the status and, on success, the namespace (if present) and the job data.
   *
   * @throws io.pmix.common.PmixException {@code ERR_LOST_CONNECTION} for an empty reply
   */
  public static SpawnNbReply decode(PmixReader r) {
    Status s = Units.readStatus(r);
    if (!s.isSuccess()) {
      return new SpawnNbReply(s, null, new byte[0]);
    }
    return Units.decoding(
        "SPAWNNB reply",
        () -> {
          String nspace = r.hasRemaining() ? r.unpackString() : null;
          return new SpawnNbReply(s, nspace, Units.rest(r));
        });
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SpawnNbReply q
        && q.status.equals(status)
        && Objects.equals(q.nspace, nspace)
        && Arrays.equals(q.jobData, jobData);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, nspace) * 31 + Arrays.hashCode(jobData);
  }

  @Override
  public String toString() {
    return "SpawnNbReply[status=" + status + ", nspace=" + nspace + ", jobData="
        + jobData.length + " bytes]";
  }
}
