package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;

/** The unit patterns the messages share, written and read in one place. */
final class Units {
  private Units() {}

  /** Sorted as 4.2.2 sorts fence participants: nspace, then rank read unsigned. */
  static final Comparator<Proc> PARTICIPANT_ORDER = new ParticipantOrder();

  /**
   * A class, not composed lambdas: its class initializer runs in a client's first init, where each
   * lambda's first call costs ~0.1-0.3 ms (docs/architecture.md, "First requests").
   */
  private static final class ParticipantOrder implements Comparator<Proc> {
    @Override
    public int compare(Proc a, Proc b) {
      int c = a.nspace().compareTo(b.nspace());
      return c != 0 ? c : Integer.compareUnsigned(a.rank(), b.rank());
    }
  }

  /**
   * A SIZE count, checked against the reader's limits. The SIZE is a {@code size_t}: compared
   * unsigned, so 2^64-1 is a count far beyond the limits, not -1, which a signed reading would take
   * for "none" (an ABORT would then abort the caller's whole job).
   *
   * @throws PmixException {@code ERR_BAD_PARAM} beyond {@link
   *     io.pmix.common.codec.CodecLimits#maxItems}
   */
  static int readCount(PmixReader r) {
    long n = r.unpackSize();
    if (Long.compareUnsigned(n, r.limits().maxItems()) > 0) {
      throw new PmixException(Status.ERR_BAD_PARAM, "count " + Long.toUnsignedString(n));
    }
    return (int) n;
  }

  /** A group command's STRING group id: NULL or empty is BAD_PARAM. */
  static String readGroupId(PmixReader r, String command) {
    String id = r.unpackString();
    if (id == null || id.isEmpty()) {
      throw new PmixException(Status.ERR_BAD_PARAM, command + " needs a group id");
    }
    return id;
  }

  /** SIZE n, then INFO[n] as one unit when n is not 0. */
  static void writeInfos(PmixWriter w, List<Info> infos) {
    w.packSize(infos.size());
    if (!infos.isEmpty()) {
      w.packInfos(infos);
    }
  }

  /** What {@link #writeInfos} wrote. */
  static List<Info> readInfos(PmixReader r) {
    int n = readCount(r);
    return n == 0 ? List.of() : r.unpackInfos(n);
  }

  /** LOOKUPNB's and UNPUBLISHNB's fields: uid, key count, one unit per key, directives. */
  static void writeKeys(PmixWriter w, int uid, List<String> keys, List<Info> directives) {
    w.packUInt32(uid);
    w.packSize(keys.size());
    for (String k : keys) {
      w.packString(k);
    }
    writeInfos(w, directives);
  }

  /** SIZE n, then PROC[n] as one unit when n is not 0. */
  static void writeProcs(PmixWriter w, List<Proc> procs) {
    w.packSize(procs.size());
    if (!procs.isEmpty()) {
      w.pack(DataType.PROC, procs);
    }
  }

  /** What {@link #writeProcs} wrote. */
  static List<Proc> readProcs(PmixReader r) {
    int n = readCount(r);
    return n == 0 ? List.of() : procs(r.unpack(DataType.PROC, n));
  }

  /** A collective's participants: SIZE n and PROC[n] as one unit, even when empty. */
  static void writeParticipants(PmixWriter w, List<Proc> procs) {
    w.packSize(procs.size());
    w.pack(DataType.PROC, procs);
  }

  /**
   * What {@link #writeParticipants} wrote, sorted as the server sorts them (so two callers naming
   * the same procs in another order meet in one collective); at least one (C: BAD_PARAM).
   */
  static List<Proc> readParticipants(PmixReader r, String command) {
    int n = readCount(r);
    if (n == 0) {
      throw new PmixException(Status.ERR_BAD_PARAM, command + " needs at least one proc");
    }
    List<Proc> procs = new ArrayList<>(procs(r.unpack(DataType.PROC, n)));
    procs.sort(PARTICIPANT_ORDER);
    return procs;
  }

  static List<Proc> procs(List<Value> values) {
    List<Proc> b = new ArrayList<>(values.size());
    for (Value v : values) {
      b.add((Proc) v);
    }
    return Collections.unmodifiableList(b);
  }

  /**
   * The status a reply opens with; an empty reply counts as a lost connection (C completes the
   * requests outstanding when the server goes away with an empty buffer).
   */
  static Status readStatus(PmixReader r) {
    if (!r.hasRemaining()) {
      throw new PmixException(Status.ERR_LOST_CONNECTION, "empty reply");
    }
    return r.unpackStatus();
  }

  /** The unread rest of a reader, as bytes. */
  static byte[] rest(PmixReader r) {
    return r.unpackRemaining();
  }

  /**
   * Runs a decoder: a PmixException passes as it is, any other failure (a value of the wrong type
   * where a field needs another, a record refusing a field) is the peer's malformed bytes.
   */
  static <T> T decoding(String what, Supplier<T> body) {
    try {
      return body.get();
    } catch (RuntimeException e) {
      throw malformed(what, e);
    }
  }

  /** What a failure decoding {@code what} is thrown as: a PmixException as it is, else malformed. */
  static PmixException malformed(String what, RuntimeException e) {
    return e instanceof PmixException pe
        ? pe
        : new PmixException(Status.ERR_UNPACK_FAILURE, "malformed " + what + ": " + e, e);
  }

  static boolean blobsEqual(List<byte[]> a, List<byte[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  static int blobsHash(List<byte[]> blobs) {
    int h = 1;
    for (byte[] x : blobs) {
      h = 31 * h + Arrays.hashCode(x);
    }
    return h;
  }
}
