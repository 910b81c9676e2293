package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The CONNECTNB (and DISCONNECTNB) reply: STATUS, then BYTE_OBJECT units until the end, each
 * holding what a {@link ReqReply} holds, a STRING namespace and that namespace's job data as KVAL
 * units (docs/commands.md §4). C reads the blobs whatever the status; a reply with none (a
 * DISCONNECTNB, a failure) is fine.
 *
 * @param status the outcome
 * @param jobs the job data of the other namespaces among the server's local participants
 */
public record ConnectNbReply(Status status, List<ReqReply> jobs) implements Message {
  /** Checks the status and copies the list. */
  public ConnectNbReply {
    requireNonNull(status, "status");
    jobs = List.copyOf(jobs);
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    for (ReqReply j : jobs) {
      WireBuffer blob = WireBuffer.allocate();
      j.encode(new PmixWriter(blob, w.format()));
      w.packByteObject(blob.toByteArray());
    }
  }

  /**
   * Reads the status and every blob.
   *
   * @throws PmixException {@code ERR_LOST_CONNECTION} for an empty reply, {@code ERR_BAD_PARAM}
   *     for a blob without a namespace
   */
  public static ConnectNbReply decode(PmixReader r) {
    return decode(Units.readStatus(r), r);
  }

  /** Reads the blobs after a status already read (there may be none). */
  public static ConnectNbReply decode(Status status, PmixReader r) {
    return Units.decoding(
        "CONNECTNB reply",
        () -> {
          List<ReqReply> jobs = new ArrayList<>();
          while (r.hasRemaining()) {
            byte[] blob = r.unpackByteObject();
            ReqReply j =
                ReqReply.decode(new PmixReader(WireBuffer.wrap(blob), r.format(), r.limits()));
            if (j.nspace() == null || j.nspace().isEmpty()) {
              throw new PmixException(
                  Status.ERR_BAD_PARAM, "connect reply blob without a namespace");
            }
            jobs.add(j);
          }
          return new ConnectNbReply(status, jobs);
        });
  }
}
