package io.pmix.server.internal;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;

/**
 * What the handlers check the same way once the message records have decoded a request: a count
 * the server reads itself (in the host's fence data) against the codec limits, and a flag info's
 * truth. Requests themselves are read by their records ({@code io.pmix.common.internal.message}).
 */
public final class Requests {
  private Requests() {}

  /** A wire count as an array length: refused when negative or beyond the item limit. */
  public static int count(long n, CodecLimits limits) {
    if (n < 0 || n > limits.maxItems()) {
      throw new PmixException(Status.ERR_BAD_PARAM, "count " + Long.toUnsignedString(n));
    }
    return (int) n;
  }

  /** A flag info's value: true unless it is a boolean false (PMIx's "present means true"). */
  public static boolean isTrue(Value v) {
    return !(v instanceof Value.Bool b) || b.value();
  }
}
