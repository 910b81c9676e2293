package io.pmix.common.internal.gds;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.JnaStartup;
import java.time.Instant;

/**
 * The pthread calls of a store's writer (the server): creating process-shared mutexes and
 * rwlocks in a lock segment and taking them for writing. JNA's direct mapping (the writer takes
 * every reader's mutex pair for each write, so the per-call cost matters); loaded on first use.
 * Only timed forms take a lock: a reader that died holding one fails the write with {@code
 * PMIX_ERR_TIMEOUT} instead of hanging the server. The mutexes are made robust, so that a reader
 * SIGKILLed inside its read (libpmix takes its mutex pair with plain {@code pthread_mutex_lock})
 * hands its mutex to the writer at once instead of blocking every later write until the timeout:
 * readers only read, so what the dead one was doing needs no repair. Stateless and thread-safe.
 */
final class WriterNatives {
  /** {@code PTHREAD_PROCESS_SHARED}. */
  private static final int PROCESS_SHARED = 1;

  /** {@code PTHREAD_MUTEX_ROBUST}. */
  private static final int ROBUST = 1;

  /** {@code EOWNERDEAD} on Linux: granted, but its previous owner died holding it. */
  static final int EOWNERDEAD = 130;

  /** Registers the natives once, when first needed. */
  private static final class Holder {
    static final boolean LOADED;

    static {
      Native.register(Holder.class, "c");
      LOADED = true;
    }

    static native int pthread_mutexattr_init(Pointer attr);

    static native int pthread_mutexattr_setpshared(Pointer attr, int pshared);

    static native int pthread_mutexattr_setrobust(Pointer attr, int robust);

    static native int pthread_mutex_init(Pointer mutex, Pointer attr);

    static native int pthread_mutex_consistent(Pointer mutex);

    static native int pthread_mutex_timedlock(Pointer mutex, Pointer abstime);

    static native int pthread_mutex_unlock(Pointer mutex);

    static native int pthread_rwlockattr_init(Pointer attr);

    static native int pthread_rwlockattr_setpshared(Pointer attr, int pshared);

    static native int pthread_rwlock_init(Pointer rwlock, Pointer attr);

    static native int pthread_rwlock_timedwrlock(Pointer rwlock, Pointer abstime);

    static native int pthread_rwlock_unlock(Pointer rwlock);
  }

  static {
    // Before any JNA class initializes: see there.
    JnaStartup.prepare();
  }

  private WriterNatives() {}

  private static void loaded() {
    try {
      if (!Holder.LOADED) {
        throw new IllegalStateException();
      }
    } catch (LinkageError | IllegalStateException e) {
      throw new PmixException(
          Status.ERR_NOT_SUPPORTED, "pthread locks are not reachable through JNA: " + e, e);
    }
  }

  /**
   * Initialises a process-shared, robust mutex at {@code mutex} (zeroed memory of a mapped
   * segment).
   */
  static void initMutex(Pointer mutex) {
    loaded();
    Memory attr = new Memory(64);
    attr.clear();
    check(Holder.pthread_mutexattr_init(attr), "pthread_mutexattr_init");
    check(Holder.pthread_mutexattr_setpshared(attr, PROCESS_SHARED), "pthread_mutexattr_setpshared");
    check(Holder.pthread_mutexattr_setrobust(attr, ROBUST), "pthread_mutexattr_setrobust");
    check(Holder.pthread_mutex_init(mutex, attr), "pthread_mutex_init");
  }

  /** Initialises a process-shared rwlock at {@code rwlock}. */
  static void initRwlock(Pointer rwlock) {
    loaded();
    Memory attr = new Memory(64);
    attr.clear();
    check(Holder.pthread_rwlockattr_init(attr), "pthread_rwlockattr_init");
    check(
        Holder.pthread_rwlockattr_setpshared(attr, PROCESS_SHARED), "pthread_rwlockattr_setpshared");
    check(Holder.pthread_rwlock_init(rwlock, attr), "pthread_rwlock_init");
  }

  /**
   * Locks the mutex at {@code mutex}, waiting until {@code deadline} at most.
   *
   * @return whether its previous owner had died holding it (it is made consistent and held now)
   */
  static boolean lockMutex(Pointer mutex, Pointer deadline, String what) {
    int rc = Holder.pthread_mutex_timedlock(mutex, deadline);
    if (rc == EOWNERDEAD) {
      check(Holder.pthread_mutex_consistent(mutex), what + " (consistent)");
      return true;
    }
    check(rc, what);
    return false;
  }

  /** Unlocks the mutex at {@code mutex}. */
  static void unlockMutex(Pointer mutex, String what) {
    check(Holder.pthread_mutex_unlock(mutex), what);
  }

  /** Takes the write lock of the rwlock at {@code rwlock}, waiting until {@code deadline}. */
  static void writeLock(Pointer rwlock, Pointer deadline, String what) {
    check(Holder.pthread_rwlock_timedwrlock(rwlock, deadline), what);
  }

  /** Releases the rwlock at {@code rwlock}. */
  static void unlockRwlock(Pointer rwlock, String what) {
    check(Holder.pthread_rwlock_unlock(rwlock), what);
  }

  /** A {@code struct timespec} of CLOCK_REALTIME for {@code deadline}. */
  static Pointer timespec(Instant deadline) {
    Memory ts = new Memory(16);
    ts.setLong(0, deadline.getEpochSecond());
    ts.setLong(8, deadline.getNano());
    return ts;
  }

  private static void check(int rc, String what) {
    if (rc == 0) {
      return;
    }
    if (rc == PosixLocks.ETIMEDOUT) {
      throw new PmixException(Status.ERR_TIMEOUT, what + ": not granted in time");
    }
    throw new PmixException(Status.ERR_INIT, what + ": pthread error " + rc);
  }
}
