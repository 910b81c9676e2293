package io.pmix.testkit;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Timeouts for tests, stretched by one system property so that a slow machine can lengthen them
 * all at once (Curator's {@code Timing}): every wait in this kit passes through {@link #scaled}.
 *
 * <p>The factor is the system property {@value #PROPERTY} (a positive decimal, default 1), the
 * same property pmix-common's test helpers read. {@code mvn verify -Dpmix.test.timeScale=3} makes
 * every timeout of the kit three times longer. Thread-safe; the property is read at each call.
 */
public final class Timing {
  /** The system property holding the factor. */
  public static final String PROPERTY = "pmix.test.timeScale";

  private Timing() {}

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
