package io.pmix.common.codec;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;

/**
 * What both ends of a buffer must agree on: the buffer kind and the integer encoding. Immutable.
 *
 * @param bufferType described or not
 * @param intEncoding flex128 or native
 */
@Immutable
public record WireFormat(BufferType bufferType, IntEncoding intEncoding) {
  /** What every 4.2.2 peer uses unless configured otherwise. */
  public static final WireFormat DEFAULT = new WireFormat(BufferType.NON_DESC, IntEncoding.FLEX128);

  /** Fully described buffers with flex128 integers. */
  public static final WireFormat FULLY_DESCRIBED =
      new WireFormat(BufferType.FULLY_DESC, IntEncoding.FLEX128);

  /** Checks for nulls. */
  public WireFormat {
    requireNonNull(bufferType, "bufferType");
    requireNonNull(intEncoding, "intEncoding");
  }

  // Written out: a record's generated equals and hashCode bootstrap java.lang.invoke's
  // ObjectMethods on first use, 20-30 ms of a fresh JVM (docs/architecture.md, "Start-up").
  @Override
  public boolean equals(Object o) {
    return o instanceof WireFormat f && f.bufferType == bufferType && f.intEncoding == intEncoding;
  }

  @Override
  public int hashCode() {
    return bufferType.hashCode() * 31 + intEncoding.hashCode();
  }

  /** The flex128 format of this buffer kind. */
  public static WireFormat of(BufferType bufferType) {
    return bufferType == BufferType.NON_DESC ? DEFAULT : FULLY_DESCRIBED;
  }
}
