package io.pmix.common.internal.gds;

import java.time.Duration;

/**
 * The reader's side of a store's lock: held while segments are read, so the server never writes
 * meanwhile. {@link #lock} and {@link #unlock} must be called by the same thread.
 */
interface ReaderLock extends AutoCloseable {
  /**
   * Takes the read lock, waiting at most {@code timeout}.
   *
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_TIMEOUT} if it is not granted in time,
   *     another status if locking fails
   */
  void lock(Duration timeout);

  /** Releases the read lock taken by {@link #lock} on this thread. */
  void unlock();

  /** Releases the lock's resources; the lock must not be held. Idempotent. */
  @Override
  void close();
}
