package io.pmix.common.internal.gds;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.JnaStartup;
import java.nio.ByteBuffer;

/**
 * {@link Pthreads} through JNA's direct mapping of libc: the fallback where {@code libpmixjava}
 * does not load. Stateless and thread-safe.
 */
final class JnaPthreads extends Pthreads {
  /** {@code PTHREAD_PROCESS_SHARED}. */
  private static final int PROCESS_SHARED = 1;

  /** {@code PTHREAD_MUTEX_ROBUST}. */
  private static final int ROBUST = 1;

  /** Room for glibc's {@code pthread_mutexattr_t} and {@code pthread_rwlockattr_t} (4 and 8). */
  private static final int ATTR_SIZE = 64;

  /** libc's functions, registered once when first needed. */
  private static final class C {
    static final boolean REGISTERED;

    static {
      Native.register(C.class, "c");
      REGISTERED = true;
    }

    static native int pthread_mutexattr_init(Pointer attr);

    static native int pthread_mutexattr_setpshared(Pointer attr, int pshared);

    static native int pthread_mutexattr_setrobust(Pointer attr, int robust);

    static native int pthread_mutexattr_destroy(Pointer attr);

    static native int pthread_mutex_init(Pointer mutex, Pointer attr);

    static native int pthread_mutex_consistent(Pointer mutex);

    static native int pthread_mutex_timedlock(Pointer mutex, Pointer abstime);

    static native int pthread_mutex_unlock(Pointer mutex);

    static native int pthread_rwlockattr_init(Pointer attr);

    static native int pthread_rwlockattr_setpshared(Pointer attr, int pshared);

    static native int pthread_rwlockattr_destroy(Pointer attr);

    static native int pthread_rwlock_init(Pointer rwlock, Pointer attr);

    static native int pthread_rwlock_timedrdlock(Pointer rwlock, Pointer abstime);

    static native int pthread_rwlock_timedwrlock(Pointer rwlock, Pointer abstime);

    static native int pthread_rwlock_unlock(Pointer rwlock);
  }

  private static final class Holder {
    static final JnaPthreads INSTANCE;
    static final String WHY_NOT;

    static {
      // Before any JNA class initializes: see there.
      JnaStartup.prepare();
      JnaPthreads impl = null;
      String why = "";
      try {
        if (C.REGISTERED) {
          impl = new JnaPthreads();
        }
      } catch (LinkageError | RuntimeException e) {
        why = "JNA cannot reach libc: " + e;
      }
      INSTANCE = impl;
      WHY_NOT = why;
    }
  }

  private JnaPthreads() {}

  static JnaPthreads instance() {
    JnaPthreads impl = Holder.INSTANCE;
    if (impl == null) {
      throw new PmixException(Status.ERR_NOT_SUPPORTED, "JNA: " + Holder.WHY_NOT);
    }
    return impl;
  }

  private static Pointer at(long address) {
    return new Pointer(address);
  }

  /** A {@code struct timespec} of CLOCK_REALTIME. */
  private static Pointer timespec(long sec, int nsec) {
    Memory ts = new Memory(16);
    ts.setLong(0, sec);
    ts.setLong(8, nsec);
    return ts;
  }

  @Override
  String name() {
    return "jna";
  }

  @Override
  long address(ByteBuffer direct) {
    Pointer base = Native.getDirectBufferPointer(direct);
    if (base == null) {
      throw new IllegalArgumentException("not a direct buffer");
    }
    return Pointer.nativeValue(base);
  }

  @Override
  int mutexInit(long mutex, boolean robust) {
    Memory attr = new Memory(ATTR_SIZE);
    attr.clear();
    int rc = C.pthread_mutexattr_init(attr);
    if (rc != 0) {
      return rc;
    }
    rc = C.pthread_mutexattr_setpshared(attr, PROCESS_SHARED);
    if (rc == 0 && robust) {
      rc = C.pthread_mutexattr_setrobust(attr, ROBUST);
    }
    if (rc == 0) {
      rc = C.pthread_mutex_init(at(mutex), attr);
    }
    var unused = C.pthread_mutexattr_destroy(attr); // a no-op in glibc
    return rc;
  }

  @Override
  int mutexTimedLock(long mutex, long sec, int nsec) {
    return C.pthread_mutex_timedlock(at(mutex), timespec(sec, nsec));
  }

  @Override
  int mutexConsistent(long mutex) {
    return C.pthread_mutex_consistent(at(mutex));
  }

  @Override
  int mutexUnlock(long mutex) {
    return C.pthread_mutex_unlock(at(mutex));
  }

  @Override
  int rwlockInit(long rwlock) {
    Memory attr = new Memory(ATTR_SIZE);
    attr.clear();
    int rc = C.pthread_rwlockattr_init(attr);
    if (rc != 0) {
      return rc;
    }
    rc = C.pthread_rwlockattr_setpshared(attr, PROCESS_SHARED);
    if (rc == 0) {
      rc = C.pthread_rwlock_init(at(rwlock), attr);
    }
    var unused = C.pthread_rwlockattr_destroy(attr); // a no-op in glibc
    return rc;
  }

  @Override
  int rwlockTimedReadLock(long rwlock, long sec, int nsec) {
    return C.pthread_rwlock_timedrdlock(at(rwlock), timespec(sec, nsec));
  }

  @Override
  int rwlockTimedWriteLock(long rwlock, long sec, int nsec) {
    return C.pthread_rwlock_timedwrlock(at(rwlock), timespec(sec, nsec));
  }

  @Override
  int rwlockUnlock(long rwlock) {
    return C.pthread_rwlock_unlock(at(rwlock));
  }
}
