package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A reader's use of the process-shared pthread mutexes and rwlocks libpmix keeps in its lock
 * segments, by address, through {@link Pthreads} (loaded on first use: processes that never read
 * a dstore never load it). Only timed forms are used, so a lock a dead process left held fails
 * with {@code PMIX_ERR_TIMEOUT} instead of hanging. Stateless and thread-safe.
 */
final class PosixLocks {
  /** {@code ETIMEDOUT} on Linux. */
  static final int ETIMEDOUT = 110;

  /** glibc's {@code sizeof(pthread_mutex_t)} on 64-bit Linux. */
  static final int MUTEX_SIZE = 40;

  /** glibc's {@code sizeof(pthread_rwlock_t)} on 64-bit Linux. */
  static final int RWLOCK_SIZE = 56;

  private PosixLocks() {}

  /** The address of byte {@code offset} of a direct (mapped) buffer. */
  static long address(ByteBuffer direct, long offset) {
    return Pthreads.get().address(direct) + offset;
  }

  /**
   * Locks the mutex at {@code mutex}, waiting until {@code deadline} at most. A robust mutex
   * (our server makes them so) whose owner died holding it is taken over: made consistent and
   * held, since the writer or reader that held it left nothing half done that a reader depends on
   * (the writer's records are published by their final header store).
   */
  static void lockMutex(long mutex, long deadline, String what) {
    Pthreads c = Pthreads.get();
    int rc = c.mutexTimedLock(mutex, seconds(deadline), nanos(deadline));
    if (rc == WriterNatives.EOWNERDEAD) {
      rc = c.mutexConsistent(mutex);
    }
    check(rc, what);
  }

  /** Unlocks the mutex at {@code mutex}. */
  static void unlockMutex(long mutex, String what) {
    check(Pthreads.get().mutexUnlock(mutex), what);
  }

  /** Takes a read lock of the rwlock at {@code rwlock}, waiting until {@code deadline} at most. */
  static void readLock(long rwlock, long deadline, String what) {
    check(Pthreads.get().rwlockTimedReadLock(rwlock, seconds(deadline), nanos(deadline)), what);
  }

  /** Releases a lock of the rwlock at {@code rwlock}. */
  static void unlockRwlock(long rwlock, String what) {
    check(Pthreads.get().rwlockUnlock(rwlock), what);
  }

  /**
   * The deadline {@code timeout} from now, in milliseconds since the epoch on the clock the timed
   * pthread calls take ({@code CLOCK_REALTIME}), saturated for timeouts beyond any date. A long,
   * not an {@code Instant}: a get of a fresh key on a dstore computes one, in a fresh JVM
   * interpreted, and {@code java.time}'s arithmetic was ~1 µs of it.
   */
  static long deadline(Duration timeout) {
    long millis;
    try {
      millis = timeout.toMillis();
    } catch (ArithmeticException e) {
      millis = Long.MAX_VALUE;
    }
    long now = System.currentTimeMillis();
    return millis > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + Math.max(millis, 0);
  }

  /** The whole seconds of a {@link #deadline}. */
  static long seconds(long deadline) {
    return deadline / 1000;
  }

  /** The nanoseconds beyond {@link #seconds} of a {@link #deadline}. */
  static int nanos(long deadline) {
    return (int) (deadline % 1000) * 1_000_000;
  }

  /**
   * Maps a pthread call's result: nothing for 0, {@code PMIX_ERR_TIMEOUT} for {@code ETIMEDOUT},
   * else {@code PMIX_ERR_INIT} naming the error number.
   */
  static void check(int rc, String what) {
    if (rc == 0) {
      return;
    }
    if (rc == ETIMEDOUT) {
      throw new PmixException(Status.ERR_TIMEOUT, what + ": not granted in time");
    }
    throw new PmixException(Status.ERR_INIT, what + ": pthread error " + rc);
  }
}
