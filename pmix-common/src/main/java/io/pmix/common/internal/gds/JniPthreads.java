package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.PmixNativeLibrary;
import java.nio.ByteBuffer;

/**
 * {@link Pthreads} through {@code libpmixjava} (pmix-common's {@code src/main/c/pmixjava.c}, whose
 * functions are this class's natives). Stateless and thread-safe.
 */
final class JniPthreads extends Pthreads {
  /** The C side's {@code abiVersion()}: both change together. */
  static final int ABI_VERSION = 1;

  private static final class Holder {
    static final JniPthreads INSTANCE;
    static final String WHY_NOT;

    static {
      JniPthreads impl = null;
      String why = "";
      if (!PmixNativeLibrary.load()) {
        why = String.valueOf(PmixNativeLibrary.failure());
      } else {
        try {
          int abi = abiVersion();
          if (abi != ABI_VERSION) {
            why = "libpmixjava is of ABI " + abi + ", these classes of " + ABI_VERSION;
          } else if (mutexSize() > DstoreWriter.MUTEX_ALIGN
              || rwlockSize() > DstoreWriter.PAGE) {
            // Our writer lays its mutexes out that far apart and ds12's rwlock in one page.
            why = "pthread sizes " + mutexSize() + "/" + rwlockSize() + " do not fit the layout";
          } else {
            impl = new JniPthreads();
          }
        } catch (LinkageError e) {
          why = "libpmixjava lacks a function: " + e;
        }
      }
      INSTANCE = impl;
      WHY_NOT = why;
    }
  }

  private JniPthreads() {}

  static JniPthreads instance() {
    JniPthreads impl = Holder.INSTANCE;
    if (impl == null) {
      throw new PmixException(Status.ERR_NOT_SUPPORTED, "JNI: " + Holder.WHY_NOT);
    }
    return impl;
  }

  private static native int abiVersion();

  private static native int mutexSize();

  private static native int rwlockSize();

  private static native long address0(ByteBuffer direct);

  private static native int mutexInit0(long mutex, boolean robust);

  private static native int mutexTimedLock0(long mutex, long sec, int nsec);

  private static native int mutexConsistent0(long mutex);

  private static native int mutexUnlock0(long mutex);

  private static native int rwlockInit0(long rwlock);

  private static native int rwlockTimedReadLock0(long rwlock, long sec, int nsec);

  private static native int rwlockTimedWriteLock0(long rwlock, long sec, int nsec);

  private static native int rwlockUnlock0(long rwlock);

  @Override
  String name() {
    return "jni";
  }

  @Override
  long address(ByteBuffer direct) {
    long a = address0(direct);
    if (a == 0) {
      throw new IllegalArgumentException("not a direct buffer");
    }
    return a;
  }

  @Override
  int mutexInit(long mutex, boolean robust) {
    return mutexInit0(mutex, robust);
  }

  @Override
  int mutexTimedLock(long mutex, long sec, int nsec) {
    return mutexTimedLock0(mutex, sec, nsec);
  }

  @Override
  int mutexConsistent(long mutex) {
    return mutexConsistent0(mutex);
  }

  @Override
  int mutexUnlock(long mutex) {
    return mutexUnlock0(mutex);
  }

  @Override
  int rwlockInit(long rwlock) {
    return rwlockInit0(rwlock);
  }

  @Override
  int rwlockTimedReadLock(long rwlock, long sec, int nsec) {
    return rwlockTimedReadLock0(rwlock, sec, nsec);
  }

  @Override
  int rwlockTimedWriteLock(long rwlock, long sec, int nsec) {
    return rwlockTimedWriteLock0(rwlock, sec, nsec);
  }

  @Override
  int rwlockUnlock(long rwlock) {
    return rwlockUnlock0(rwlock);
  }
}
