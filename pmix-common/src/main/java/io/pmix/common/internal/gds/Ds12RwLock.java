package io.pmix.common.internal.gds;

import java.time.Duration;

/**
 * ds12's reader lock in libpmix's default (pthread) build: a process-shared {@code
 * pthread_rwlock_t} at offset 0 of {@code dstore_sm.lock}, one for the whole store directory
 * (docs/gds.md section 4). Thread-safe (read locks are shared).
 */
final class Ds12RwLock implements ReaderLock {
  private final Segment seg;
  private final long rwlock;
  private final String what; // made once: a reader locks at every get

  Ds12RwLock(Segment seg) {
    if (seg.size() < PosixLocks.RWLOCK_SIZE) {
      seg.close();
      throw Segment.corrupt(seg.name(), "too small for a rwlock");
    }
    this.seg = seg;
    this.rwlock = PosixLocks.address(seg.buffer(), 0);
    this.what = "ds12 rwlock " + seg.name();
  }

  @Override
  public void lock(Duration timeout) {
    PosixLocks.readLock(rwlock, PosixLocks.deadline(timeout), what);
  }

  @Override
  public void unlock() {
    PosixLocks.unlockRwlock(rwlock, what);
  }

  @Override
  public void close() {
    seg.close();
  }
}
