package io.pmix.common.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * One steady-state message: the header's pindex and tag, and the payload its {@code nbytes} counted
 * (docs/transport.md §5.1). The payload is bfrops-encoded; this class does not look at it.
 *
 * <p>Reference counted like any Netty {@link io.netty.buffer.ByteBufHolder}: whoever holds a frame
 * releases it once. Not thread-safe beyond what {@link ByteBuf} offers.
 */
public final class Frame extends DefaultByteBufHolder {
  private final int pindex;
  private final int tag;

  /**
   * A frame owning {@code payload}.
   *
   * @param pindex the sender's slot at the server: a client writes its handshake index, a
   *     server-launched tool or a singleton 0xFFFFFFFF (-1), any other tool and every server 0; no
   *     receiver reads it
   * @param tag the routing tag, an unsigned 32-bit value (see {@link Tags})
   * @param payload the payload; its readable bytes are sent
   */
  public Frame(int pindex, int tag, ByteBuf payload) {
    super(payload);
    this.pindex = pindex;
    this.tag = tag;
  }

  /** The sender's pindex. */
  public int pindex() {
    return pindex;
  }

  /** The tag, an unsigned 32-bit value held in an {@code int}. */
  public int tag() {
    return tag;
  }

  /** The payload, the same buffer as {@link #content()}; not retained for the caller. */
  public ByteBuf payload() {
    return content();
  }

  @Override
  public Frame replace(ByteBuf content) {
    return new Frame(pindex, tag, content);
  }

  @Override
  public Frame copy() {
    return replace(content().copy());
  }

  @Override
  public Frame duplicate() {
    return replace(content().duplicate());
  }

  @Override
  public Frame retainedDuplicate() {
    return replace(content().retainedDuplicate());
  }

  @Override
  public Frame retain() {
    super.retain();
    return this;
  }

  @Override
  public Frame retain(int increment) {
    super.retain(increment);
    return this;
  }

  @Override
  public Frame touch() {
    super.touch();
    return this;
  }

  @Override
  public Frame touch(Object hint) {
    super.touch(hint);
    return this;
  }

  /** Equal when pindex, tag and the payload's readable bytes are. */
  @Override
  public boolean equals(Object o) {
    return o instanceof Frame f && f.pindex == pindex && f.tag == tag && super.equals(o);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * super.hashCode() + pindex) + tag;
  }

  @Override
  public String toString() {
    return "Frame{pindex="
        + pindex
        + ", tag="
        + Integer.toUnsignedString(tag)
        + ", nbytes="
        + content().readableBytes()
        + '}';
  }
}
