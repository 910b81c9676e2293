package io.pmix.dataserver;

import java.time.Duration;
import java.util.function.LongSupplier;

/** A clock tests move by hand: monotonic nanoseconds starting at an arbitrary large value. */
final class FakeClock implements LongSupplier {
  // Start far from zero (and near overflow) so code that compares raw clock values breaks here.
  private long nanos = Long.MAX_VALUE - Duration.ofDays(1).toNanos();

  @Override
  public long getAsLong() {
    return nanos;
  }

  void advance(Duration d) {
    nanos += d.toNanos();
  }
}
