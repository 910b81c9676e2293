package io.pmix.common.internal.gds;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.JnaStartup;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;

/**
 * The process-shared pthread mutexes and rwlocks libpmix keeps in its lock segments, reached
 * through JNA (its native part ships in its jar: no JNI of our own). Only timed forms are used, so
 * a lock a dead process left held fails with {@code PMIX_ERR_TIMEOUT} instead of hanging.
 *
 * <p>The C library is loaded on first use: processes that never read a dstore never load it.
 * Stateless and thread-safe.
 */
final class PosixLocks {
  /** {@code ETIMEDOUT} on Linux. */
  static final int ETIMEDOUT = 110;

  /** glibc's {@code sizeof(pthread_mutex_t)} on 64-bit Linux. */
  static final int MUTEX_SIZE = 40;

  /** glibc's {@code sizeof(pthread_rwlock_t)} on 64-bit Linux. */
  static final int RWLOCK_SIZE = 56;

  /** The functions of libc used here; the pointers point into a mapped lock segment. */
  interface LibC extends Library {
    int pthread_mutex_timedlock(Pointer mutex, Pointer abstime);

    int pthread_mutex_unlock(Pointer mutex);

    int pthread_mutex_consistent(Pointer mutex);

    int pthread_rwlock_timedrdlock(Pointer rwlock, Pointer abstime);

    int pthread_rwlock_unlock(Pointer rwlock);
  }

  /** Loads libc once, when first needed. */
  private static final class Holder {
    static final LibC C = Native.load("c", LibC.class);
  }

  static {
    // Before any JNA class initializes: see there.
    JnaStartup.prepare();
  }

  private PosixLocks() {}

  private static LibC libc() {
    try {
      return Holder.C;
    } catch (LinkageError e) {
      throw new PmixException(
          Status.ERR_NOT_SUPPORTED, "pthread locks are not reachable through JNA: " + e, e);
    }
  }

  /** The address of byte {@code offset} of a direct (mapped) buffer. */
  static Pointer address(ByteBuffer direct, long offset) {
    Pointer base = Native.getDirectBufferPointer(direct);
    if (base == null) {
      throw new IllegalArgumentException("not a direct buffer");
    }
    return base.share(offset);
  }

  /**
   * Locks the mutex at {@code mutex}, waiting until {@code deadline} at most. A robust mutex
   * (our server makes them so) whose owner died holding it is taken over: made consistent and
   * held, since the writer or reader that held it left nothing half done that a reader depends on
   * (the writer's records are published by their final header store).
   */
  static void lockMutex(Pointer mutex, Instant deadline, String what) {
    LibC c = libc();
    int rc = c.pthread_mutex_timedlock(mutex, timespec(deadline));
    if (rc == WriterNatives.EOWNERDEAD) {
      rc = c.pthread_mutex_consistent(mutex);
    }
    check(rc, what);
  }

  /** Unlocks the mutex at {@code mutex}. */
  static void unlockMutex(Pointer mutex, String what) {
    check(libc().pthread_mutex_unlock(mutex), what);
  }

  /** Takes a read lock of the rwlock at {@code rwlock}, waiting until {@code deadline} at most. */
  static void readLock(Pointer rwlock, Instant deadline, String what) {
    check(libc().pthread_rwlock_timedrdlock(rwlock, timespec(deadline)), what);
  }

  /** Releases a lock of the rwlock at {@code rwlock}. */
  static void unlockRwlock(Pointer rwlock, String what) {
    check(libc().pthread_rwlock_unlock(rwlock), what);
  }

  /** The deadline {@code timeout} from now. */
  static Instant deadline(Duration timeout) {
    return Instant.now().plus(timeout);
  }

  /** A {@code struct timespec} of CLOCK_REALTIME, which the timed pthread calls expect. */
  private static Pointer timespec(Instant deadline) {
    Memory ts = new Memory(16);
    ts.setLong(0, deadline.getEpochSecond());
    ts.setLong(8, deadline.getNano());
    return ts;
  }

  private static void check(int rc, String what) {
    if (rc == 0) {
      return;
    }
    if (rc == ETIMEDOUT) {
      throw new PmixException(Status.ERR_TIMEOUT, what + ": not granted in time");
    }
    throw new PmixException(Status.ERR_INIT, what + ": pthread error " + rc);
  }
}
