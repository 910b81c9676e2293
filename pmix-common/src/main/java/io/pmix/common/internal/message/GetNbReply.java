package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The GETNB reply: STATUS, then on success BYTE_OBJECT units until the end, each a PROC and that
 * proc's values as KVAL units (docs/commands.md §3.5 and §9.5 to §9.7).
 *
 * <p>The blobs are not copied in or out: a data blob may be large (all a peer has committed, in
 * every answer to a get of its data) and three copies of each were most of a client's work on an
 * answer (docs/architecture.md, "Data blobs without copies"). A decoded reply's arrays are fresh;
 * whoever makes a reply hands over arrays that nothing changes afterwards, and whoever reads one
 * only reads them.
 *
 * @param status the outcome
 * @param blobs the data blobs, owned by the reply; none unless the status is success
 */
public record GetNbReply(Status status, List<byte[]> blobs) implements Message {
  /** Checks the arguments; the list is copied (unmodifiable), its arrays are not. */
  public GetNbReply {
    requireNonNull(status, "status");
    blobs = List.copyOf(blobs);
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    for (byte[] b : blobs) {
      w.packByteObject(b);
    }
  }

  /**
   * Reads the status and, on success, the blobs (what follows a failure is not read, as C does
   * not read it).
   *
   * @throws io.pmix.common.PmixException {@code ERR_LOST_CONNECTION} for an empty reply
   */
  public static GetNbReply decode(PmixReader r) {
    Status s = Units.readStatus(r);
    // Not through Units.decoding's lambda: a first remote get reads this (docs/architecture.md,
    // "First requests").
    try {
      List<byte[]> blobs = new ArrayList<>();
      if (s.isSuccess()) {
        while (r.hasRemaining()) {
          blobs.add(r.unpackByteObject());
        }
      }
      return new GetNbReply(s, blobs);
    } catch (RuntimeException e) {
      throw Units.malformed("GETNB reply", e);
    }
  }

  /**
   * Reads what {@link #decode} reads, with the same failures, but adds the blobs to {@code blobs}
   * as views of the reader's bytes instead of copies: a client compares each with the last blob of
   * the same rank and decodes only what is new, so a copy of the whole blob, a fresh array every
   * answer, was most of its work on an answer after the decoding (docs/architecture.md, "Data
   * blobs without copies"). The views are to be read before the reader's bytes change.
   *
   * @return the status
   * @throws io.pmix.common.PmixException as {@link #decode} does
   */
  public static Status decodeInPlace(PmixReader r, List<WireBuffer> blobs) {
    Status s = Units.readStatus(r);
    try {
      if (s.isSuccess()) {
        while (r.hasRemaining()) {
          blobs.add(r.unpackByteObjectSlice());
        }
      }
      return s;
    } catch (RuntimeException e) {
      throw Units.malformed("GETNB reply", e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GetNbReply g
        && g.status.equals(status)
        && Units.blobsEqual(g.blobs, blobs);
  }

  @Override
  public int hashCode() {
    return status.hashCode() * 31 + Units.blobsHash(blobs);
  }

  @Override
  public String toString() {
    return "GetNbReply[status=" + status + ", blobs=" + blobs.size() + "]";
  }
}
