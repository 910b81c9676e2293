package io.pmix.server.internal;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import java.util.ArrayList;
import java.util.List;

/**
 * The pieces every request handler reads the same way: a counted array's length checked against
 * the codec limits, a counted info array, a counted proc array, a flag info's truth. A bad count
 * is {@code ERR_BAD_PARAM}, which the dispatcher answers.
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

  /** A {@code size_t} count, then that many infos (none when the count is 0). */
  public static List<Info> infos(PmixReader r, CodecLimits limits) {
    long n = r.unpackSize();
    return n > 0 ? r.unpackInfos(count(n, limits)) : List.of();
  }

  /** {@code n} PROC values (none when {@code n} is 0). */
  public static List<Proc> procs(PmixReader r, long n, CodecLimits limits) {
    List<Proc> procs = new ArrayList<>();
    if (n > 0) {
      for (Value v : r.unpack(DataType.PROC, count(n, limits))) {
        procs.add((Proc) v);
      }
    }
    return procs;
  }

  /** A flag info's value: true unless it is a boolean false (PMIx's "present means true"). */
  public static boolean isTrue(Value v) {
    return !(v instanceof Value.Bool b) || b.value();
  }
}
