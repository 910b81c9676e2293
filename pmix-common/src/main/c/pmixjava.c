/*
 * libpmixjava: the few C calls pmix-java makes, through JNI (io.pmix.common.internal.gds.JniPthreads).
 *
 * Why not JNA alone: a fresh JVM's first call through JNA costs 55-70 ms on the 2-core test
 * machine (its classes, its native part, its proxies), ~0.7 ms through this library; a Java
 * client under a ds21 server (mpirun, srun, prterun, pmixrun) pays it at every PMIx_Init.
 * JNA stays as the fallback where this library cannot be loaded (docs/architecture.md).
 *
 * Three groups of calls: the pthread locks of the gds stores (JniPthreads), mapping and unmapping
 * their segment files (NativeMaps), and one netlink sock_diag exchange (SockDiagCall: the server
 * asks the kernel who owns a connecting socket).
 *
 * Every lock lives in a mapped lock segment shared with libpmix: Java hands us its address
 * (taken once from the direct buffer). Only timed forms take a lock, so a lock a dead process
 * left held fails after the deadline instead of hanging. Return values are the pthread calls'
 * error numbers (0 = success), as the Java side maps them to PMIx statuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/*
 * Built against glibc 2.34 or later, the pthread functions would bind to the GLIBC_2.34 symbol
 * versions glibc gave them when it moved libpthread into libc, and the library would not load on
 * an older glibc (RHEL 8's 2.28, Ubuntu 20.04's 2.31). Their earlier versions are pinned instead:
 * glibc 2.34 and later still export them from libc.so.6 (the same code: objdump -T shows one
 * address for both versions), older ones from libpthread.so.0, which the build links (DT_NEEDED)
 * for that. x86-64 only (its base version is GLIBC_2.2.5); other builds take the defaults.
 * PmixNativeLibraryTest checks what the built file requires.
 */
#if defined(__x86_64__) && defined(__GLIBC__) \
    && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#    define PIN(sym, ver) __asm__(".symver " #sym "," #sym "@" #ver)
PIN(pthread_mutexattr_init, GLIBC_2.2.5);
PIN(pthread_mutexattr_destroy, GLIBC_2.2.5);
PIN(pthread_mutexattr_setpshared, GLIBC_2.2.5);
PIN(pthread_mutexattr_setrobust, GLIBC_2.12);
PIN(pthread_mutex_timedlock, GLIBC_2.2.5);
PIN(pthread_mutex_consistent, GLIBC_2.12);
PIN(pthread_rwlockattr_init, GLIBC_2.2.5);
PIN(pthread_rwlockattr_destroy, GLIBC_2.2.5);
PIN(pthread_rwlockattr_setpshared, GLIBC_2.2.5);
PIN(pthread_rwlock_init, GLIBC_2.2.5);
PIN(pthread_rwlock_timedrdlock, GLIBC_2.2.5);
PIN(pthread_rwlock_timedwrlock, GLIBC_2.2.5);
PIN(pthread_rwlock_unlock, GLIBC_2.2.5);
#endif

#define JNI_NAME(name) Java_io_pmix_common_internal_gds_JniPthreads_##name

/* The lock calls are instance methods (JniPthreads implements Pthreads): self is unused. */
static void *addr(jlong a)
{
    return (void *) (intptr_t) a;
}

JNIEXPORT jint JNICALL JNI_NAME(abiVersion)(JNIEnv *env, jclass cls)
{
    (void) env;
    (void) cls;
    return 2;
}

JNIEXPORT jlong JNICALL JNI_NAME(address0)(JNIEnv *env, jclass cls, jobject direct)
{
    (void) cls;
    return (jlong) (intptr_t) (*env)->GetDirectBufferAddress(env, direct);
}

JNIEXPORT jint JNICALL JNI_NAME(mutexSize)(JNIEnv *env, jclass cls)
{
    (void) env;
    (void) cls;
    return (jint) sizeof(pthread_mutex_t);
}

JNIEXPORT jint JNICALL JNI_NAME(rwlockSize)(JNIEnv *env, jclass cls)
{
    (void) env;
    (void) cls;
    return (jint) sizeof(pthread_rwlock_t);
}

/* A process-shared mutex; robust when asked (the writer's, see WriterNatives). */
JNIEXPORT jint JNICALL JNI_NAME(mutexInit)(JNIEnv *env, jobject self, jlong mutex, jboolean robust)
{
    pthread_mutexattr_t attr;
    int rc;
    (void) env;
    (void) self;
    if (0 != (rc = pthread_mutexattr_init(&attr))) {
        return rc;
    }
    rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (0 == rc && robust) {
        rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    }
    if (0 == rc) {
        rc = pthread_mutex_init(addr(mutex), &attr);
    }
    pthread_mutexattr_destroy(&attr);
    return rc;
}

JNIEXPORT jint JNICALL JNI_NAME(mutexTimedLock)(JNIEnv *env, jobject self, jlong mutex, jlong sec,
                                                jint nsec)
{
    struct timespec deadline = {(time_t) sec, (long) nsec};
    (void) env;
    (void) self;
    return pthread_mutex_timedlock(addr(mutex), &deadline);
}

JNIEXPORT jint JNICALL JNI_NAME(mutexConsistent)(JNIEnv *env, jobject self, jlong mutex)
{
    (void) env;
    (void) self;
    return pthread_mutex_consistent(addr(mutex));
}

JNIEXPORT jint JNICALL JNI_NAME(mutexUnlock)(JNIEnv *env, jobject self, jlong mutex)
{
    (void) env;
    (void) self;
    return pthread_mutex_unlock(addr(mutex));
}

JNIEXPORT jint JNICALL JNI_NAME(rwlockInit)(JNIEnv *env, jobject self, jlong rwlock)
{
    pthread_rwlockattr_t attr;
    int rc;
    (void) env;
    (void) self;
    if (0 != (rc = pthread_rwlockattr_init(&attr))) {
        return rc;
    }
    rc = pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (0 == rc) {
        rc = pthread_rwlock_init(addr(rwlock), &attr);
    }
    pthread_rwlockattr_destroy(&attr);
    return rc;
}

JNIEXPORT jint JNICALL JNI_NAME(rwlockTimedReadLock)(JNIEnv *env, jobject self, jlong rwlock,
                                                     jlong sec, jint nsec)
{
    struct timespec deadline = {(time_t) sec, (long) nsec};
    (void) env;
    (void) self;
    return pthread_rwlock_timedrdlock(addr(rwlock), &deadline);
}

JNIEXPORT jint JNICALL JNI_NAME(rwlockTimedWriteLock)(JNIEnv *env, jobject self, jlong rwlock,
                                                      jlong sec, jint nsec)
{
    struct timespec deadline = {(time_t) sec, (long) nsec};
    (void) env;
    (void) self;
    return pthread_rwlock_timedwrlock(addr(rwlock), &deadline);
}

JNIEXPORT jint JNICALL JNI_NAME(rwlockUnlock)(JNIEnv *env, jobject self, jlong rwlock)
{
    (void) env;
    (void) self;
    return pthread_rwlock_unlock(addr(rwlock));
}

/*
 * SockDiagCall.exchange0: sends one netlink sock_diag request (built by the Java side) on a new
 * NETLINK_SOCK_DIAG socket and receives one answer into reply, waiting waitMicros at most.
 * Returns the answer's length, or -errno of the call that failed.
 */
#define REQUEST_MAX 256
#define REPLY_MAX 65536

JNIEXPORT jint JNICALL Java_io_pmix_common_internal_SockDiagCall_exchange0(JNIEnv *env, jclass cls,
                                                                         jbyteArray request,
                                                                         jbyteArray reply,
                                                                         jlong waitMicros)
{
    jbyte req[REQUEST_MAX];
    jbyte ans[REPLY_MAX];
    jsize reqLen = (*env)->GetArrayLength(env, request);
    jsize ansLen = (*env)->GetArrayLength(env, reply);
    struct timeval tv;
    ssize_t n;
    int fd, err;
    (void) cls;
    if (reqLen <= 0 || reqLen > REQUEST_MAX) {
        return -EINVAL;
    }
    if (ansLen > REPLY_MAX) {
        ansLen = REPLY_MAX;
    }
    (*env)->GetByteArrayRegion(env, request, 0, reqLen, req);
    fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) {
        return -errno;
    }
    tv.tv_sec = (time_t) (waitMicros / 1000000);
    tv.tv_usec = (suseconds_t) (waitMicros % 1000000);
    (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    n = send(fd, req, (size_t) reqLen, 0);
    if (n != (ssize_t) reqLen) {
        err = n < 0 ? errno : EMSGSIZE;
        close(fd);
        return -err;
    }
    n = recv(fd, ans, (size_t) ansLen, 0);
    err = errno;
    close(fd);
    if (n < 0) {
        return -err;
    }
    (*env)->SetByteArrayRegion(env, reply, 0, (jsize) n, ans);
    return (jint) n;
}

/*
 * NativeMaps.map0: maps the whole file at path (NUL-terminated bytes) shared, read-only or
 * read-write, as a direct buffer without a cleaner (NativeMaps.unmap0 unmaps it). Returns NULL
 * with err[0] = errno on failure, or with err[0] = 0 for an empty file (nothing to map).
 */
JNIEXPORT jobject JNICALL Java_io_pmix_common_internal_gds_NativeMaps_map0(JNIEnv *env, jclass cls,
                                                                          jbyteArray path,
                                                                          jboolean writable,
                                                                          jintArray err)
{
    jsize n = (*env)->GetArrayLength(env, path);
    char *p = malloc((size_t) n + 1);
    off_t size;
    jint e = 0;
    jobject buf = NULL;
    void *a;
    int fd;
    (void) cls;
    if (NULL == p) {
        e = ENOMEM;
        (*env)->SetIntArrayRegion(env, err, 0, 1, &e);
        return NULL;
    }
    (*env)->GetByteArrayRegion(env, path, 0, n, (jbyte *) p);
    p[n] = '\0';
    fd = open(p, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    free(p);
    if (fd < 0) {
        e = errno;
        (*env)->SetIntArrayRegion(env, err, 0, 1, &e);
        return NULL;
    }
    /* The size by lseek, not fstat: fstat is a GLIBC_2.33 symbol (before, an inline wrapper). */
    size = lseek(fd, 0, SEEK_END);
    if (size < 0) {
        e = errno;
    } else if (size > INT32_MAX) {
        e = EFBIG;
    } else if (size > 0) {
        a = mmap(NULL, (size_t) size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
        if (MAP_FAILED == a) {
            e = errno;
        } else {
            buf = (*env)->NewDirectByteBuffer(env, a, (jlong) size);
            if (NULL == buf) {
                (*env)->ExceptionClear(env);
                munmap(a, (size_t) size);
                e = ENOMEM;
            }
        }
    }
    /* The mapping outlives the descriptor. */
    close(fd);
    (*env)->SetIntArrayRegion(env, err, 0, 1, &e);
    return buf;
}

/* NativeMaps.unmap0: unmaps a buffer map0 made; 0 or errno. */
JNIEXPORT jint JNICALL Java_io_pmix_common_internal_gds_NativeMaps_unmap0(JNIEnv *env, jclass cls,
                                                                         jobject buf)
{
    void *a = (*env)->GetDirectBufferAddress(env, buf);
    jlong n = (*env)->GetDirectBufferCapacity(env, buf);
    (void) cls;
    if (NULL == a || n <= 0) {
        return EINVAL;
    }
    return 0 == munmap(a, (size_t) n) ? 0 : errno;
}
