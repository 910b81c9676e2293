package io.pmix.common.internal.wire;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import org.jspecify.annotations.Nullable;

/**
 * What every reader of frames (docs/transport.md §5.1) says and does at the same points, whatever
 * carries the bytes: Netty's decoders ({@link FrameDecoder}, {@link FrameReader}), the
 * connector's {@code Connection}, the server's own transport. Not Netty: a reader without Netty
 * loads no Netty class through it.
 */
public final class FrameLimits {
  private static final byte[] EMPTY = new byte[0];

  /** The first array of a frame not all here yet, unless the frame is smaller. */
  static final int PARTIAL_START = 4096;

  private FrameLimits() {}

  /** The failure of a frame whose header announces more than {@code limit} bytes. */
  public static PmixException tooLong(long nbytes, int tag, int limit) {
    return new PmixException(
        Status.ERR_OUT_OF_RESOURCE,
        "frame payload of "
            + nbytes
            + " bytes (tag "
            + Integer.toUnsignedString(tag)
            + ") exceeds the limit of "
            + limit);
  }

  /** The failure of a partial frame of {@code nbytes} that {@code budget} cannot hold. */
  public static PmixException overBudget(long nbytes, FrameBudget budget) {
    return new PmixException(
        Status.ERR_OUT_OF_RESOURCE,
        "frame payload of "
            + nbytes
            + " bytes does not fit in the budget of "
            + budget.limit()
            + " bytes for frames being received");
  }

  /**
   * Admits a frame whose header announces {@code nbytes} when {@code available} of them have
   * come: null when it may be received, with its length reserved from {@code budget} when it is
   * not all here (the reader gives that back when it completes or the stream ends: {@link
   * #held}); else the failure that ends the stream, nothing reserved: longer than {@code limit},
   * or a partial frame the budget cannot hold.
   */
  public static @Nullable PmixException admit(
      long nbytes, int tag, int limit, int available, FrameBudget budget) {
    if (nbytes > limit) {
      return tooLong(nbytes, tag, limit);
    }
    if (available < nbytes && !budget.tryReserve(nbytes)) {
      return overBudget(nbytes, budget);
    }
    return null;
  }

  /** What {@link #admit} reserved of the budget for a frame it let in. */
  public static long held(long nbytes, int available) {
    return available < nbytes ? nbytes : 0;
  }

  /**
   * The array a payload of {@code length} bytes starts in when {@code available} of them have
   * come: all of it when all are here, else room for what came (at least 4 KiB, at most the
   * length), grown as the rest arrives: a peer that announces a large frame and stalls holds its
   * budget, not that much memory.
   */
  public static byte[] payloadArray(int length, int available) {
    if (length == 0) {
      return EMPTY;
    }
    if (available >= length) {
      return new byte[length];
    }
    return new byte[Math.min(length, Math.max(available, PARTIAL_START))];
  }
}
