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
  static final int ABI_VERSION = 5;

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

  /** Whether libpmixjava is loaded and of these classes' ABI (what {@link NativeMaps} needs). */
  static boolean loaded() {
    return Holder.INSTANCE != null;
  }

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
  native int mutexInit(long mutex, boolean robust);

  @Override
  native int mutexTimedLock(long mutex, long sec, int nsec);

  @Override
  native int mutexConsistent(long mutex);

  @Override
  native int mutexUnlock(long mutex);

  @Override
  native int rwlockInit(long rwlock);

  @Override
  native int rwlockTimedReadLock(long rwlock, long sec, int nsec);

  @Override
  native int rwlockTimedWriteLock(long rwlock, long sec, int nsec);

  @Override
  native int rwlockUnlock(long rwlock);
}
