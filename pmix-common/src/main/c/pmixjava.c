/*
 * libpmixjava: the few C calls pmix-java makes, through JNI (io.pmix.common.internal.gds.JniPthreads).
 *
 * Why not JNA alone: a fresh JVM's first call through JNA costs 55-70 ms on the 2-core test
 * machine (its classes, its native part, its proxies), ~0.7 ms through this library; a Java
 * client under a ds21 server (mpirun, srun, prterun, pmixrun) pays it at every PMIx_Init.
 * JNA stays as the fallback where this library cannot be loaded (docs/architecture.md).
 *
 * The calls: the pthread locks of the gds stores (JniPthreads); mapping and unmapping their
 * segment files, naming a segment file and claiming a lock slot in one (NativeMaps); a memcmp
 * (NativeBytes); the effective ids (LocalProcess); one netlink sock_diag exchange (SockDiagCall:
 * the server asks the kernel who owns a connecting socket); and the connector's socket and
 * poll(2) loop (NativePoller: a fresh JVM's first Selector and SocketChannel cost a first init
 * 20-30 ms); the calling thread's signal mask (ChildSignals: what a started process inherits);
 * and the server's own transport (pmix-server's Epoll: epoll, a listener on 127.0.0.1, accept4,
 * reads and sends), which spares a server Netty's transport.
 *
 * Every lock lives in a mapped lock segment shared with libpmix: Java hands us its address
 * (taken once from the direct buffer). Only timed forms take a lock, so a lock a dead process
 * left held fails after the deadline instead of hanging. Return values are the pthread calls'
 * error numbers (0 = success), as the Java side maps them to PMIx statuses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
    return 5;
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
 * NETLINK_SOCK_DIAG socket and receives one answer into reply, waiting waitMicros at most; with
 * waitMicros 0 not at all (MSG_DONTWAIT: the kernel queues its answer to a request for one socket
 * while handling the send, so it is there or the call fails with -EAGAIN).
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
    if (waitMicros > 0) {
        tv.tv_sec = (time_t) (waitMicros / 1000000);
        tv.tv_usec = (suseconds_t) (waitMicros % 1000000);
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    n = send(fd, req, (size_t) reqLen, 0);
    if (n != (ssize_t) reqLen) {
        err = n < 0 ? errno : EMSGSIZE;
        close(fd);
        return -err;
    }
    n = recv(fd, ans, (size_t) ansLen, waitMicros > 0 ? 0 : MSG_DONTWAIT);
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

/*
 * NativeMaps.fileId0: the device and inode numbers of the file at path (NUL-terminated bytes),
 * following symbolic links, into id[0] and id[1]; 0 or errno. Through the statx system call,
 * not a libc wrapper: stat and fstat are GLIBC_2.33 symbols (inline wrappers before), statx's
 * wrapper is 2.28. A kernel before 4.11 answers ENOSYS; the caller then asks the JDK.
 */
JNIEXPORT jint JNICALL Java_io_pmix_common_internal_gds_NativeMaps_fileId0(JNIEnv *env, jclass cls,
                                                                          jbyteArray path,
                                                                          jlongArray id)
{
#if defined(SYS_statx) && defined(STATX_INO)
    jsize n = (*env)->GetArrayLength(env, path);
    char *p = malloc((size_t) n + 1);
    struct statx sx;
    jlong out[2];
    long rc;
    (void) cls;
    if (NULL == p) {
        return ENOMEM;
    }
    (*env)->GetByteArrayRegion(env, path, 0, n, (jbyte *) p);
    p[n] = '\0';
    memset(&sx, 0, sizeof(sx));
    rc = syscall(SYS_statx, AT_FDCWD, p, 0, STATX_INO, &sx);
    free(p);
    if (rc != 0) {
        return errno;
    }
    if (0 == (sx.stx_mask & STATX_INO)) {
        return ENOSYS;
    }
    out[0] = (jlong) (((uint64_t) sx.stx_dev_major << 32) | (uint64_t) sx.stx_dev_minor);
    out[1] = (jlong) sx.stx_ino;
    (*env)->SetLongArrayRegion(env, id, 0, 2, out);
    return 0;
#else
    (void) env;
    (void) cls;
    (void) path;
    (void) id;
    return ENOSYS;
#endif
}

/*
 * NativeMaps.compareAndSetInt0: an atomic compare-and-swap of the aligned int at offset off of a
 * direct buffer (a mapped segment other processes update the same way); 1 if it held expect and
 * now holds update, 0 if it held another value, -1 for a buffer without an address. The offset
 * is checked in Java.
 */
JNIEXPORT jint JNICALL Java_io_pmix_common_internal_gds_NativeMaps_compareAndSetInt0(
    JNIEnv *env, jclass cls, jobject buf, jint off, jint expect, jint update)
{
    char *a = (*env)->GetDirectBufferAddress(env, buf);
    int32_t e = (int32_t) expect;
    (void) cls;
    if (NULL == a) {
        return -1;
    }
    return __atomic_compare_exchange_n((int32_t *) (a + off), &e, (int32_t) update, 0,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
               ? 1
               : 0;
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

/*
 * Whether a[aOff..aOff+len) and b[bOff..bOff+len) hold the same bytes (NativeBytes.equal0): a
 * memcmp with both arrays pinned for that call only. The ranges are checked in Java; -1 when an
 * array cannot be pinned (the caller then compares in Java).
 */
JNIEXPORT jint JNICALL Java_io_pmix_common_internal_NativeBytes_equal0(JNIEnv *env, jclass cls,
                                                                       jbyteArray a, jint aOff,
                                                                       jbyteArray b, jint bOff,
                                                                       jint len)
{
    jbyte *pa;
    jbyte *pb;
    int same;
    (void) cls;
    pa = (*env)->GetPrimitiveArrayCritical(env, a, NULL);
    if (NULL == pa) {
        (*env)->ExceptionClear(env);
        return -1;
    }
    pb = (*env)->GetPrimitiveArrayCritical(env, b, NULL);
    if (NULL == pb) {
        (*env)->ReleasePrimitiveArrayCritical(env, a, pa, JNI_ABORT);
        (*env)->ExceptionClear(env);
        return -1;
    }
    same = 0 == memcmp(pa + aOff, pb + bOff, (size_t) len);
    (*env)->ReleasePrimitiveArrayCritical(env, b, pb, JNI_ABORT);
    (*env)->ReleasePrimitiveArrayCritical(env, a, pa, JNI_ABORT);
    return same ? 1 : 0;
}

/* The effective uid and gid (LocalProcess.effectiveIds0): what a connector's credential and
 * identity carry, asked at every init. */
JNIEXPORT jlong JNICALL Java_io_pmix_common_internal_connector_LocalProcess_effectiveIds0(JNIEnv *env,
                                                                                        jclass cls)
{
    (void) env;
    (void) cls;
    return (jlong) (((uint64_t) (uint32_t) geteuid() << 32) | (uint64_t) (uint32_t) getegid());
}

/*
 * ChildSignals: sets the calling thread's blocked signals to `mask` (signal s as bit s-1, 1-64)
 * and returns the ones it had. sigprocmask acts on the calling thread only on Linux, as
 * pthread_sigmask does (whose GLIBC_2.32 symbol an old glibc lacks); glibc keeps its own two
 * signals out of both. A call that fails changes nothing and returns `mask`.
 */
JNIEXPORT jlong JNICALL Java_io_pmix_common_internal_ChildSignals_swapMask0(JNIEnv *env, jclass cls,
                                                                           jlong mask)
{
    sigset_t set;
    sigset_t old;
    uint64_t bits = (uint64_t) mask;
    uint64_t had = 0;
    (void) env;
    (void) cls;
    sigemptyset(&set);
    for (int s = 1; s <= 64; s++) {
        if ((bits >> (s - 1)) & 1) {
            sigaddset(&set, s); /* refuses glibc's own and out-of-range ones: left out */
        }
    }
    if (sigprocmask(SIG_SETMASK, &set, &old) != 0) {
        return mask;
    }
    for (int s = 1; s <= 64; s++) {
        if (1 == sigismember(&old, s)) {
            had |= (uint64_t) 1 << (s - 1);
        }
    }
    return (jlong) had;
}

/*
 * NativePoller: the connector's one TCP socket and its progress thread's wait, on plain file
 * descriptors. Every descriptor is non-blocking and close-on-exec. Return values: >= 0 as each
 * function says, -errno on failure, or one of the two codes below (outside errno's range).
 */
#define NP(name) Java_io_pmix_common_internal_connector_NativePoller_##name
#define NP_WOULD_BLOCK (-0x10000)
#define NP_NO_ADDRESS (-0x10001)

/* An eventfd the loop polls and other threads write to wake it. */
JNIEXPORT jint JNICALL NP(eventfd0)(JNIEnv *env, jclass cls)
{
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    (void) env;
    (void) cls;
    return fd < 0 ? -errno : fd;
}

/* Wakes the loop; a full counter (EAGAIN) means it is awake already. */
JNIEXPORT jint JNICALL NP(wake0)(JNIEnv *env, jclass cls, jint efd)
{
    uint64_t one = 1;
    (void) env;
    (void) cls;
    if (write(efd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
        return -errno;
    }
    return 0;
}

/*
 * One poll(2) over n descriptors (fds[0] the loop's eventfd, drained here when readable; a
 * negative descriptor is skipped, as poll does), waiting timeoutMillis (-1: until one is ready).
 * Fills revents; returns how many are ready (0 when a signal interrupted the wait).
 */
#define POLL_MAX 64
JNIEXPORT jint JNICALL NP(poll0)(JNIEnv *env, jclass cls, jintArray fds, jshortArray events,
                                 jshortArray revents, jint n, jint timeoutMillis)
{
    struct pollfd p[POLL_MAX];
    jint f[POLL_MAX];
    jshort ev[POLL_MAX];
    jshort rev[POLL_MAX];
    uint64_t drained;
    int r, i;
    (void) cls;
    if (n <= 0 || n > POLL_MAX) {
        return -EINVAL;
    }
    (*env)->GetIntArrayRegion(env, fds, 0, n, f);
    (*env)->GetShortArrayRegion(env, events, 0, n, ev);
    for (i = 0; i < n; i++) {
        p[i].fd = f[i];
        p[i].events = ev[i];
        p[i].revents = 0;
    }
    r = poll(p, (nfds_t) n, timeoutMillis);
    if (r < 0) {
        return EINTR == errno ? 0 : -errno;
    }
    if (p[0].revents & POLLIN) {
        (void) read(p[0].fd, &drained, sizeof(drained));
    }
    for (i = 0; i < n; i++) {
        rev[i] = p[i].revents;
    }
    (*env)->SetShortArrayRegion(env, revents, 0, n, rev);
    return r;
}

/*
 * A non-blocking TCP connect to host (a literal IPv4 or IPv6 address, else a name resolved with
 * getaddrinfo) and port, with TCP_NODELAY (requests are small and answered one by one). Puts the
 * descriptor in out[0] and 1 in out[1] if connected already, 0 if in progress. Returns 0,
 * -errno, or NP_NO_ADDRESS when the host does not resolve.
 */
JNIEXPORT jint JNICALL NP(connect0)(JNIEnv *env, jclass cls, jstring host, jint port,
                                    jintArray out)
{
    struct sockaddr_storage sa;
    socklen_t len = 0;
    struct addrinfo hints, *res = NULL;
    const char *h;
    jint o[2];
    int fd, one = 1;
    (void) cls;
    if (port < 0 || port > 65535) {
        return -EINVAL;
    }
    h = (*env)->GetStringUTFChars(env, host, NULL);
    if (NULL == h) {
        return -ENOMEM;
    }
    memset(&sa, 0, sizeof(sa));
    if (1 == inet_pton(AF_INET, h, &((struct sockaddr_in *) &sa)->sin_addr)) {
        ((struct sockaddr_in *) &sa)->sin_family = AF_INET;
        ((struct sockaddr_in *) &sa)->sin_port = htons((uint16_t) port);
        len = sizeof(struct sockaddr_in);
    } else if (1 == inet_pton(AF_INET6, h, &((struct sockaddr_in6 *) &sa)->sin6_addr)) {
        ((struct sockaddr_in6 *) &sa)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *) &sa)->sin6_port = htons((uint16_t) port);
        len = sizeof(struct sockaddr_in6);
    } else {
        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        if (0 == getaddrinfo(h, NULL, &hints, &res) && NULL != res
            && res->ai_addrlen <= sizeof(sa)) {
            memcpy(&sa, res->ai_addr, res->ai_addrlen);
            len = res->ai_addrlen;
            if (AF_INET == sa.ss_family) {
                ((struct sockaddr_in *) &sa)->sin_port = htons((uint16_t) port);
            } else if (AF_INET6 == sa.ss_family) {
                ((struct sockaddr_in6 *) &sa)->sin6_port = htons((uint16_t) port);
            } else {
                len = 0;
            }
        }
        if (NULL != res) {
            freeaddrinfo(res);
        }
    }
    (*env)->ReleaseStringUTFChars(env, host, h);
    if (0 == len) {
        return NP_NO_ADDRESS;
    }
    fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    o[0] = fd;
    o[1] = 1;
    if (connect(fd, (struct sockaddr *) &sa, len) < 0) {
        if (EINPROGRESS != errno) {
            int e = errno;
            close(fd);
            return -e;
        }
        o[1] = 0;
    }
    (*env)->SetIntArrayRegion(env, out, 0, 2, o);
    return 0;
}

/* The outcome of a connect in progress, once poll says the socket is writable: 0 or -errno. */
JNIEXPORT jint JNICALL NP(finishConnect0)(JNIEnv *env, jclass cls, jint fd)
{
    int err = 0;
    socklen_t len = sizeof(err);
    (void) env;
    (void) cls;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
        return -errno;
    }
    return -err;
}

/*
 * One read into buf[off..off+len) (out false) or one send of it (out true) on a non-blocking
 * descriptor, the array pinned (GetPrimitiveArrayCritical) for that call only. Returns how many
 * bytes (a read's 0: the end of the stream), NP_WOULD_BLOCK when the descriptor has none or takes
 * none now, or -errno. A send is MSG_NOSIGNAL: a peer gone is EPIPE here, not SIGPIPE for the
 * whole process.
 */
static jint transfer(JNIEnv *env, jint fd, jbyteArray buf, jint off, jint len, jboolean out)
{
    jbyte *a;
    ssize_t n;
    int e;
    if (off < 0 || len < 0 || off > (*env)->GetArrayLength(env, buf) - len) {
        return -EINVAL;
    }
    a = (*env)->GetPrimitiveArrayCritical(env, buf, NULL);
    if (NULL == a) {
        return -ENOMEM;
    }
    n = out ? send(fd, a + off, (size_t) len, MSG_NOSIGNAL) : read(fd, a + off, (size_t) len);
    e = errno;
    (*env)->ReleasePrimitiveArrayCritical(env, buf, a, (!out && n > 0) ? 0 : JNI_ABORT);
    if (n < 0) {
        return (EAGAIN == e || EWOULDBLOCK == e || EINTR == e) ? NP_WOULD_BLOCK : -e;
    }
    return (jint) n;
}

JNIEXPORT jint JNICALL NP(transfer0)(JNIEnv *env, jclass cls, jint fd, jbyteArray buf, jint off,
                                     jint len, jboolean out)
{
    (void) cls;
    return transfer(env, fd, buf, off, len, out);
}

/* Closes a descriptor: 0 or -errno (the descriptor is gone either way). */
JNIEXPORT jint JNICALL NP(close0)(JNIEnv *env, jclass cls, jint fd)
{
    (void) env;
    (void) cls;
    return close(fd) < 0 ? -errno : 0;
}

/* The text of an error number, for exception messages. */
JNIEXPORT jstring JNICALL NP(strerror0)(JNIEnv *env, jclass cls, jint err)
{
    char b[256];
    (void) cls;
    return (*env)->NewStringUTF(env, strerror_r(err, b, sizeof(b)));
}

/*
 * Epoll (pmix-server's io.pmix.server.internal.net.Epoll): the server's progress thread on
 * epoll(7), its listener and its accepted TCP sockets, so that a wake-up costs what is ready,
 * not a scan of every connection (a job's 1,024), and a fresh server loads none of Netty's
 * transport. Descriptors are non-blocking and close-on-exec; return values as NativePoller's.
 */
#define EP(name) Java_io_pmix_server_internal_net_Epoll_##name

JNIEXPORT jint JNICALL EP(create0)(JNIEnv *env, jclass cls)
{
    int fd = epoll_create1(EPOLL_CLOEXEC);
    (void) env;
    (void) cls;
    return fd < 0 ? -errno : fd;
}

/* epoll_ctl with the descriptor itself as the event's data; op 1 add, 2 delete, 3 modify. */
JNIEXPORT jint JNICALL EP(ctl0)(JNIEnv *env, jclass cls, jint epfd, jint op, jint fd, jint events)
{
    struct epoll_event ev;
    (void) env;
    (void) cls;
    memset(&ev, 0, sizeof(ev));
    ev.events = (uint32_t) events;
    ev.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &ev) < 0 ? -errno : 0;
}

/*
 * One epoll_wait of up to max events (at most 256), waiting timeoutMillis (-1: until one is
 * ready); out gets each ready descriptor and its events, in pairs. Returns how many (0 when a
 * signal interrupted the wait) or -errno.
 */
#define EP_MAX 256
JNIEXPORT jint JNICALL EP(wait0)(JNIEnv *env, jclass cls, jint epfd, jintArray out, jint max,
                                 jint timeoutMillis)
{
    struct epoll_event ev[EP_MAX];
    jint o[2 * EP_MAX];
    int n, i;
    (void) cls;
    if (max <= 0 || max > EP_MAX || (*env)->GetArrayLength(env, out) < 2 * max) {
        return -EINVAL;
    }
    n = epoll_wait(epfd, ev, max, timeoutMillis);
    if (n < 0) {
        return EINTR == errno ? 0 : -errno;
    }
    for (i = 0; i < n; i++) {
        o[2 * i] = ev[i].data.fd;
        o[2 * i + 1] = (jint) ev[i].events;
    }
    if (n > 0) {
        (*env)->SetIntArrayRegion(env, out, 0, 2 * n, o);
    }
    return n;
}

JNIEXPORT jint JNICALL EP(eventfd0)(JNIEnv *env, jclass cls)
{
    return NP(eventfd0)(env, cls);
}

JNIEXPORT jint JNICALL EP(wake0)(JNIEnv *env, jclass cls, jint efd)
{
    return NP(wake0)(env, cls, efd);
}

/* Empties an eventfd the loop was woken through. */
JNIEXPORT void JNICALL EP(drain0)(JNIEnv *env, jclass cls, jint efd)
{
    uint64_t v;
    (void) env;
    (void) cls;
    (void) read(efd, &v, sizeof(v));
}

/*
 * A listening TCP socket on 127.0.0.1, port chosen by the kernel, with SO_REUSEADDR as Netty's
 * server channels set it. Puts the port in out[0]; returns the descriptor or -errno.
 */
JNIEXPORT jint JNICALL EP(listen0)(JNIEnv *env, jclass cls, jint backlog, jintArray out)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd, one = 1, e;
    jint port;
    (void) cls;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, backlog) < 0
        || getsockname(fd, (struct sockaddr *) &sa, &len) < 0) {
        e = errno;
        close(fd);
        return -e;
    }
    port = ntohs(sa.sin_port);
    (*env)->SetIntArrayRegion(env, out, 0, 1, &port);
    return fd;
}

/*
 * One accept4 on a listening descriptor: the new socket non-blocking, close-on-exec, with
 * TCP_NODELAY (replies are small and awaited one by one). Puts the IPv4 addresses and ports of
 * both ends in out[0..3] (remote address, remote port, local address, local port; addresses in
 * host order, 0 for other families). Returns the descriptor, NP_WOULD_BLOCK when none waits, or
 * -errno (EMFILE and ENFILE among them: the caller pauses).
 */
JNIEXPORT jint JNICALL EP(accept0)(JNIEnv *env, jclass cls, jint lfd, jintArray out)
{
    struct sockaddr_storage ra, la;
    socklen_t rl = sizeof(ra), ll = sizeof(la);
    jint o[4] = {0, 0, 0, 0};
    int fd, one = 1;
    (void) cls;
    fd = accept4(lfd, (struct sockaddr *) &ra, &rl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return (EAGAIN == e || EWOULDBLOCK == e || EINTR == e || ECONNABORTED == e)
                   ? NP_WOULD_BLOCK
                   : -e;
    }
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (AF_INET == ra.ss_family) {
        o[0] = (jint) ntohl(((struct sockaddr_in *) &ra)->sin_addr.s_addr);
        o[1] = ntohs(((struct sockaddr_in *) &ra)->sin_port);
    }
    if (0 == getsockname(fd, (struct sockaddr *) &la, &ll) && AF_INET == la.ss_family) {
        o[2] = (jint) ntohl(((struct sockaddr_in *) &la)->sin_addr.s_addr);
        o[3] = ntohs(((struct sockaddr_in *) &la)->sin_port);
    }
    (*env)->SetIntArrayRegion(env, out, 0, 4, o);
    return fd;
}

JNIEXPORT jint JNICALL EP(transfer0)(JNIEnv *env, jclass cls, jint fd, jbyteArray buf, jint off,
                                     jint len, jboolean out)
{
    (void) cls;
    return transfer(env, fd, buf, off, len, out);
}

JNIEXPORT jint JNICALL EP(close0)(JNIEnv *env, jclass cls, jint fd)
{
    return NP(close0)(env, cls, fd);
}

JNIEXPORT jstring JNICALL EP(strerror0)(JNIEnv *env, jclass cls, jint err)
{
    return NP(strerror0)(env, cls, err);
}
