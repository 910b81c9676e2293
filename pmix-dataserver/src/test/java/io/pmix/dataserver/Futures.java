package io.pmix.dataserver;

import io.pmix.common.testing.TestTiming;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/** Waiting for stages in tests, with one scale factor for slow machines. */
final class Futures {
  /** Multiplies every test timeout: -Dpmix.test.timeScale=3 on a slow CI ({@link TestTiming}). */
  static final double SCALE = TestTiming.factor();

  private Futures() {}

  static <T> T get(CompletionStage<T> s) {
    try {
      return s.toCompletableFuture().get((long) (20_000 * SCALE), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    } catch (ExecutionException | TimeoutException e) {
      throw new AssertionError(e);
    }
  }

  static void eventually(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + (long) (20e9 * SCALE);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("never: " + what);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
