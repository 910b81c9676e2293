package io.pmix.common.internal.gds;


/**
 * The pthread calls of a store's writer (the server), through {@link Pthreads}: creating
 * process-shared mutexes and rwlocks in a lock segment and taking them for writing. Only timed
 * forms take a lock: a reader that died holding one fails the write with {@code PMIX_ERR_TIMEOUT}
 * instead of hanging the server. The mutexes are made robust, so that a reader SIGKILLed inside
 * its read (libpmix takes its mutex pair with plain {@code pthread_mutex_lock}) hands its mutex to
 * the writer at once instead of blocking every later write until the timeout: readers only read,
 * so what the dead one was doing needs no repair. Stateless and thread-safe.
 */
final class WriterNatives {
  /** {@code EOWNERDEAD} on Linux: granted, but its previous owner died holding it. */
  static final int EOWNERDEAD = 130;

  private WriterNatives() {}

  /**
   * Initialises a process-shared, robust mutex at {@code mutex} (zeroed memory of a mapped
   * segment).
   */
  static void initMutex(long mutex) {
    PosixLocks.check(Pthreads.get().mutexInit(mutex, true), "pthread_mutex_init");
  }

  /** Initialises a process-shared rwlock at {@code rwlock}. */
  static void initRwlock(long rwlock) {
    PosixLocks.check(Pthreads.get().rwlockInit(rwlock), "pthread_rwlock_init");
  }

  /**
   * Locks the mutex at {@code mutex}, waiting until {@code deadline} ({@link PosixLocks#deadline})
   * at most.
   *
   * @return whether its previous owner had died holding it (it is made consistent and held now)
   */
  static boolean lockMutex(long mutex, long deadline, String what) {
    Pthreads c = Pthreads.get();
    int rc = c.mutexTimedLock(mutex, PosixLocks.seconds(deadline), PosixLocks.nanos(deadline));
    if (rc == EOWNERDEAD) {
      PosixLocks.check(c.mutexConsistent(mutex), what + " (consistent)");
      return true;
    }
    PosixLocks.check(rc, what);
    return false;
  }

  /** Unlocks the mutex at {@code mutex}. */
  static void unlockMutex(long mutex, String what) {
    PosixLocks.unlockMutex(mutex, what);
  }

  /** Takes the write lock of the rwlock at {@code rwlock}, waiting until {@code deadline}. */
  static void writeLock(long rwlock, long deadline, String what) {
    PosixLocks.check(
        Pthreads.get()
            .rwlockTimedWriteLock(rwlock, PosixLocks.seconds(deadline), PosixLocks.nanos(deadline)),
        what);
  }

  /** Releases the rwlock at {@code rwlock}. */
  static void unlockRwlock(long rwlock, String what) {
    PosixLocks.unlockRwlock(rwlock, what);
  }
}
