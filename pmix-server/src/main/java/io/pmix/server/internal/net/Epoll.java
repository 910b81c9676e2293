package io.pmix.server.internal.net;

import io.pmix.common.internal.PmixNativeLibrary;

/**
 * The system calls of the server's own transport, in pmix-java's native library (pmix-common's
 * {@code src/main/c/pmixjava.c}, whose {@code Epoll} functions are this class's natives): epoll,
 * an eventfd to wake the loop, a listening socket on 127.0.0.1, accept4, reads and sends on
 * non-blocking descriptors (sends never raise SIGPIPE). Return values are {@code -errno} on
 * failure, or {@link #WOULD_BLOCK}.
 */
public final class Epoll {
  /** The "would block" answer of {@link #transfer0} and {@link #accept0}: outside errno's range. */
  public static final int WOULD_BLOCK = -0x10000;

  /** epoll_ctl's operations. */
  static final int CTL_ADD = 1;

  static final int CTL_DEL = 2;
  static final int CTL_MOD = 3;

  /** Event bits (epoll's). */
  public static final int EPOLLIN = 0x001;

  /** Writable. */
  public static final int EPOLLOUT = 0x004;

  /** An error on the descriptor. */
  public static final int EPOLLERR = 0x008;

  /** The peer hung up. */
  public static final int EPOLLHUP = 0x010;

  /** The peer shut its writing half down. */
  public static final int EPOLLRDHUP = 0x2000;

  /** EMFILE and ENFILE: out of descriptors (the listener pauses). */
  public static final int EMFILE = 24;

  /** The system-wide descriptor table is full. */
  public static final int ENFILE = 23;

  /** The most events one {@link #wait0} returns. */
  static final int WAIT_MAX = 256;

  private Epoll() {}

  /** Whether the native library, with these functions, is loaded. */
  public static boolean available() {
    if (!PmixNativeLibrary.load()) {
      return false;
    }
    try {
      int unused = strerror0(0).length();
      return true;
    } catch (LinkageError e) {
      return false; // a library of other classes than these
    }
  }

  static native int create0();

  static native int ctl0(int epfd, int op, int fd, int events);

  static native int wait0(int epfd, int[] out, int max, int timeoutMillis);

  static native int eventfd0();

  static native int wake0(int efd);

  static native void drain0(int efd);

  /** A listener on 127.0.0.1:0; out[0] gets the port. The descriptor, or -errno. */
  public static native int listen0(int backlog, int[] out);

  /**
   * One accept; out[0..3] get the remote address and port and the local address and port (IPv4,
   * host order). The descriptor, {@link #WOULD_BLOCK} or -errno.
   */
  public static native int accept0(int lfd, int[] out);

  /** One read (out false) or send (out true): bytes, 0 at a read's end, WOULD_BLOCK or -errno. */
  public static native int transfer0(int fd, byte[] b, int off, int len, boolean out);

  /** Closes a descriptor: 0 or -errno. */
  public static native int close0(int fd);

  /** The text of an error number. */
  public static native String strerror0(int errno);
}
