package io.pmix.common.codec;

import static io.pmix.common.internal.Checks.checkArgument;

import com.google.errorprone.annotations.Immutable;

/**
 * Bounds a decoder enforces on untrusted input, beyond "never read past the end". Exceeding one
 * is a {@code PMIX_ERR_OUT_OF_RESOURCE} failure. Immutable.
 *
 * @param maxStringBytes longest string, byte object or nested buffer accepted
 * @param maxItems most items in one pack call, array, list or struct field
 * @param maxDepth deepest nesting of values inside values (arrays of values of arrays ...)
 * @param hwlocDiscoveryBytes size of hwloc's discovery-support struct in a TOPO (the sender's ABI)
 * @param hwlocCpubindBytes size of hwloc's cpubind-support struct in a TOPO
 * @param hwlocMembindBytes size of hwloc's membind-support struct in a TOPO
 */
@Immutable
public record CodecLimits(
    int maxStringBytes,
    int maxItems,
    int maxDepth,
    int hwlocDiscoveryBytes,
    int hwlocCpubindBytes,
    int hwlocMembindBytes) {

  /**
   * 64 MiB strings, 16 Mi items, depth 32, and hwloc 2.9's support struct sizes (6, 11, 15 bytes:
   * the hwloc that Debian 12's libpmix is built on).
   */
  public static final CodecLimits DEFAULT = new CodecLimits(64 << 20, 16 << 20, 32, 6, 11, 15);

  /** Checks the bounds are positive. */
  public CodecLimits {
    checkArgument(maxStringBytes > 0 && maxItems > 0 && maxDepth > 0, "limits must be positive");
    checkArgument(
        hwlocDiscoveryBytes >= 0 && hwlocCpubindBytes >= 0 && hwlocMembindBytes >= 0,
        "negative struct size");
  }

  /** These limits with another maximum string size. */
  public CodecLimits withMaxStringBytes(int n) {
    return new CodecLimits(
        n, maxItems, maxDepth, hwlocDiscoveryBytes, hwlocCpubindBytes, hwlocMembindBytes);
  }

  /** These limits with another maximum item count. */
  public CodecLimits withMaxItems(int n) {
    return new CodecLimits(
        maxStringBytes, n, maxDepth, hwlocDiscoveryBytes, hwlocCpubindBytes, hwlocMembindBytes);
  }

  /** These limits with another maximum depth. */
  public CodecLimits withMaxDepth(int n) {
    return new CodecLimits(
        maxStringBytes, maxItems, n, hwlocDiscoveryBytes, hwlocCpubindBytes, hwlocMembindBytes);
  }
}
