package io.pmix.common.internal.gds;

import java.time.Duration;

/** A reader lock for stores nobody else writes (tests over {@link MemorySegments}). */
final class UncontendedLock implements ReaderLock {
  int held;

  @Override
  public void lock(Duration timeout) {
    held++;
  }

  @Override
  public void unlock() {
    held--;
  }

  @Override
  public void close() {}
}
