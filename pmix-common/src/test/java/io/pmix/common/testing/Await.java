package io.pmix.common.testing;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waiting in tests for something to become true, bounded by a {@linkplain TestTiming#scaled
 * scaled} timeout: the one place the integration tests poll state they cannot be told about (a
 * server's snapshot, a host's record of its upcalls). A wait that runs out is an {@link
 * AssertionError} naming what was awaited and the last value seen, never a silent return.
 *
 * <p>Polls every 10 ms on the calling thread. Thread-safe (no state).
 */
public final class Await {
  private static final long POLL_MILLIS = 10;

  private Await() {}

  /**
   * Polls {@code probe} until its value satisfies {@code ok}; returns that value.
   *
   * @param probe reads the current state (e.g. {@code server::snapshot}); called at least once
   * @param ok what the state must satisfy
   * @param timeout the limit, before {@linkplain TestTiming#scaled scaling}
   * @param describe turns the last value into the failure message
   * @throws AssertionError if {@code timeout} passes first, or the thread is interrupted
   */
  @CanIgnoreReturnValue
  public static <T> T until(
      Supplier<? extends T> probe,
      Predicate<? super T> ok,
      Duration timeout,
      Function<? super T, String> describe) {
    requireNonNull(probe, "probe");
    requireNonNull(ok, "ok");
    requireNonNull(describe, "describe");
    Duration limit = TestTiming.scaled(timeout);
    long end = System.nanoTime() + limit.toNanos();
    T value = probe.get();
    while (!ok.test(value)) {
      if (System.nanoTime() - end > 0) {
        throw new AssertionError("not reached within " + limit + ": " + describe.apply(value));
      }
      pause();
      value = probe.get();
    }
    return value;
  }

  /** {@link #until} with the last value's {@code toString()} as the message. */
  @CanIgnoreReturnValue
  public static <T> T until(Supplier<? extends T> probe, Predicate<? super T> ok, Duration timeout) {
    return until(probe, ok, timeout, String::valueOf);
  }

  /**
   * Polls {@code condition} until it holds.
   *
   * @param what names the condition in the failure message
   * @throws AssertionError if {@code timeout} (scaled) passes first
   */
  public static void condition(String what, BooleanSupplier condition, Duration timeout) {
    requireNonNull(condition, "condition");
    until(condition::getAsBoolean, b -> b, timeout, b -> what);
  }

  /**
   * The value of {@code stage}, waiting at most {@code timeout} (scaled).
   *
   * @throws ExecutionException if the stage failed (its cause is the failure)
   * @throws AssertionError if it has not completed in time, or the thread is interrupted
   */
  @CanIgnoreReturnValue
  public static <T> T get(CompletionStage<T> stage, Duration timeout) throws ExecutionException {
    Duration limit = TestTiming.scaled(timeout);
    try {
      return stage.toCompletableFuture().get(limit.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("not completed within " + limit + ": " + stage, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  private static void pause() {
    try {
      Thread.sleep(POLL_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting", e);
    }
  }
}
