package io.pmix.common.codec;

/**
 * How integers travel (OpenPMIx's "psquash" component). It is process-wide in C and never
 * negotiated: every deployed peer uses {@link #FLEX128} unless someone set
 * {@code PMIX_MCA_psquash=native}.
 */
public enum IntEncoding {
  /** Base-128 varints, zigzag for signed types, at most 9 bytes. The default. */
  FLEX128,
  /** Fixed-width big-endian integers and 2-byte type tags. */
  NATIVE
}
