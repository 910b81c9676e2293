package io.pmix.common.codec;

import io.pmix.common.PmixException;
import io.pmix.common.Status;

/**
 * The two kinds of OpenPMIx buffer. The kind is never written into an ordinary buffer: both ends
 * must agree (a client states its kind in the connect handshake; a nested PMIX_BUFFER carries it
 * in its first byte).
 */
public enum BufferType {
  /** "Non-described": no type tags except those inside values and arrays. The 4.2.2 default. */
  NON_DESC(1),
  /** "Fully described": each pack call adds a tag before its count and before its items. */
  FULLY_DESC(2);

  private final int code;

  BufferType(int code) {
    this.code = code;
  }

  /** The byte that names this kind in the handshake and in nested buffers. */
  public int code() {
    return code;
  }

  /**
   * The kind named by a handshake or nested-buffer byte.
   *
   * @throws PmixException with {@code PMIX_ERR_BAD_PARAM} for any other byte
   */
  public static BufferType fromCode(int code) {
    switch (code) {
      case 1:
        return NON_DESC;
      case 2:
        return FULLY_DESC;
      default:
        throw new PmixException(Status.ERR_BAD_PARAM, "unknown buffer type " + code);
    }
  }

  /**
   * The kind a C process picks from its environment: {@code PMIX_BFROP_BUFFER_TYPE} equal to
   * {@code PMIX_BFROP_BUFFER_FULLY_DESC} selects FULLY_DESC, any other value NON_DESC; unset, the
   * MCA variable {@code PMIX_MCA_bfrops_base_default_type} (1 or 2) decides; else NON_DESC.
   */
  public static BufferType fromEnvironment(java.util.Map<String, String> env) {
    String t = env.get("PMIX_BFROP_BUFFER_TYPE");
    if (t != null) {
      return t.equals("PMIX_BFROP_BUFFER_FULLY_DESC") ? FULLY_DESC : NON_DESC;
    }
    String mca = env.get("PMIX_MCA_bfrops_base_default_type");
    return "2".equals(mca == null ? null : mca.trim()) ? FULLY_DESC : NON_DESC;
  }

  /** The value a server exports as {@code PMIX_BFROP_BUFFER_TYPE} for this kind. */
  public String environmentValue() {
    return this == FULLY_DESC ? "PMIX_BFROP_BUFFER_FULLY_DESC" : "PMIX_BFROP_BUFFER_NON_DESC";
  }
}
