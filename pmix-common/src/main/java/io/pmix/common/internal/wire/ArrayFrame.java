package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

/**
 * One frame of the steady-state stream (docs/transport.md §5.1) whose payload is an array of its
 * own, as {@link FrameReader} delivers it: nothing to release, nothing shared with the buffers
 * the bytes arrived in.
 */
public final class ArrayFrame {
  private final int pindex;
  private final int tag;
  private final byte[] payload;

  /** A frame of {@code payload}, which the frame now owns. */
  public ArrayFrame(int pindex, int tag, byte[] payload) {
    this.pindex = pindex;
    this.tag = tag;
    this.payload = requireNonNull(payload, "payload");
  }

  /** The sender's pindex (ignored by receivers, as C ignores it). */
  public int pindex() {
    return pindex;
  }

  /** The tag: the request's, echoed in its reply. */
  public int tag() {
    return tag;
  }

  /** The payload, not copied: the frame's owner may read it and keep it. */
  public byte[] payload() {
    return payload;
  }

  @Override
  public String toString() {
    return "ArrayFrame[pindex=" + pindex + ", tag=" + Integer.toUnsignedString(tag)
        + ", " + payload.length + " bytes]";
  }
}
