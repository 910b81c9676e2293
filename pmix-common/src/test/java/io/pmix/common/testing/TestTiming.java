package io.pmix.common.testing;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Test timeouts stretched by one system property, for the modules whose tests cannot depend on
 * pmix-testkit (pmix-common, pmix-server, pmix-client, pmix-tool, pmix-dataserver): the same
 * factor, read from the same property, as pmix-testkit's {@code Timing}, so {@code mvn verify
 * -Dpmix.test.timeScale=3} lengthens every wait of every test at once.
 *
 * <p>The factor is a positive decimal, default 1, read at each call. Thread-safe.
 */
public final class TestTiming {
  /** The system property holding the factor (pmix-testkit's {@code Timing.PROPERTY} too). */
  public static final String PROPERTY = "pmix.test.timeScale";

  private TestTiming() {}

  /**
   * The factor every timeout is multiplied by.
   *
   * @throws IllegalArgumentException if the property is not a positive number
   */
  public static double factor() {
    String s = System.getProperty(PROPERTY, "1");
    double f;
    try {
      f = Double.parseDouble(s.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(PROPERTY + " is not a number: " + s, e);
    }
    checkArgument(f > 0 && !Double.isInfinite(f), "%s must be positive: %s", PROPERTY, s);
    return f;
  }

  /** {@code timeout} multiplied by the {@link #factor()}. */
  public static Duration scaled(Duration timeout) {
    requireNonNull(timeout, "timeout");
    checkArgument(!timeout.isNegative(), "negative timeout: %s", timeout);
    double nanos = timeout.toNanos() * factor();
    return nanos >= Long.MAX_VALUE ? Duration.ofNanos(Long.MAX_VALUE) : Duration.ofNanos((long) nanos);
  }

  /** {@code seconds} seconds, scaled. */
  public static Duration seconds(long seconds) {
    return scaled(Duration.ofSeconds(seconds));
  }
}
