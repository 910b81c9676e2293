package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.PmixNativeLibrary;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The pthread calls on the process-shared mutexes and rwlocks of libpmix's lock segments, by
 * address: what {@link PosixLocks} (the readers) and {@link WriterNatives} (the writer) call. Two
 * ways to C: {@link JniPthreads}, pmix-java's own {@code libpmixjava} ({@link PmixNativeLibrary}),
 * whose first call in a fresh JVM costs ~1 ms; and {@link JnaPthreads}, JNA's direct mapping of
 * libc, ~60 ms for the first call (its classes and native part), taken only where the library of
 * our own does not load (an architecture the build did not make it for). {@link #get} chooses once
 * per process, in that order, and loads nothing of JNA when the first works.
 *
 * <p>Every method returns the pthread call's error number (0 on success). The timed forms take a
 * CLOCK_REALTIME deadline as seconds and nanoseconds. Implementations are stateless and
 * thread-safe.
 */
abstract class Pthreads {
  /** The process's choice, made on first use. */
  private static final class Chosen {
    static final @Nullable Pthreads IMPL;
    static final String WHY_NOT;

    static {
      Pthreads impl = null;
      String why = "";
      try {
        impl = jni();
      } catch (PmixException e) {
        why = e.getMessage();
        try {
          impl = jna();
        } catch (PmixException f) {
          why = why + "; " + f.getMessage();
        }
      }
      IMPL = impl;
      WHY_NOT = why;
    }
  }

  /**
   * The process's way to the pthread calls: {@link #jni} when it works, else {@link #jna}.
   *
   * @throws PmixException {@code PMIX_ERR_NOT_SUPPORTED} when neither can be loaded
   */
  static Pthreads get() {
    Pthreads impl = Chosen.IMPL;
    if (impl == null) {
      throw new PmixException(
          Status.ERR_NOT_SUPPORTED, "pthread locks are not reachable: " + Chosen.WHY_NOT);
    }
    return impl;
  }

  /**
   * The calls through {@code libpmixjava}.
   *
   * @throws PmixException {@code PMIX_ERR_NOT_SUPPORTED} when the library does not load or is
   *     not the one these classes were built with
   */
  static Pthreads jni() {
    return JniPthreads.instance();
  }

  /**
   * The calls through JNA.
   *
   * @throws PmixException {@code PMIX_ERR_NOT_SUPPORTED} when JNA cannot reach libc
   */
  static Pthreads jna() {
    return JnaPthreads.instance();
  }

  /** A short name for messages: "jni" or "jna". */
  abstract String name();

  /** The address of a direct (mapped) buffer's first byte. */
  abstract long address(ByteBuffer direct);

  /** Initialises a process-shared mutex at {@code mutex}, robust when asked. */
  abstract int mutexInit(long mutex, boolean robust);

  /** {@code pthread_mutex_timedlock}. */
  abstract int mutexTimedLock(long mutex, long sec, int nsec);

  /** {@code pthread_mutex_consistent}. */
  abstract int mutexConsistent(long mutex);

  /** {@code pthread_mutex_unlock}. */
  abstract int mutexUnlock(long mutex);

  /** Initialises a process-shared rwlock at {@code rwlock}. */
  abstract int rwlockInit(long rwlock);

  /** {@code pthread_rwlock_timedrdlock}. */
  abstract int rwlockTimedReadLock(long rwlock, long sec, int nsec);

  /** {@code pthread_rwlock_timedwrlock}. */
  abstract int rwlockTimedWriteLock(long rwlock, long sec, int nsec);

  /** {@code pthread_rwlock_unlock}. */
  abstract int rwlockUnlock(long rwlock);
}
