package io.pmix.common.internal.connector;

import io.pmix.common.internal.PmixNativeLibrary;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Poller} on poll(2), an eventfd and plain TCP descriptors, through pmix-java's own
 * native library (pmix-common's {@code src/main/c/pmixjava.c}, whose {@code NativePoller}
 * functions are this class's natives). Costs a fresh JVM a few small classes where a {@link
 * java.nio.channels.Selector} and a {@link java.nio.channels.SocketChannel} cost ~100 of the
 * JDK's (see {@link Poller}).
 *
 * <p>Descriptors are non-blocking and close-on-exec; writes never raise SIGPIPE (a server gone is
 * an {@link IOException}). The eventfd is written by {@link #wakeup} from any thread, under a lock
 * that {@link #close} takes too, so that a wake-up never writes to a descriptor number reused
 * after the close.
 */
final class NativePoller extends Poller {
  /** libpmixjava's "would block" answer of {@code transfer0}: outside errno's range. */
  private static final int WOULD_BLOCK = -0x10000;

  /** libpmixjava's answer of {@code connect0} when the host does not resolve. */
  private static final int NO_ADDRESS = -0x10001;

  /** poll0's limit on descriptors, the eventfd included. */
  private static final int POLL_MAX = 64;

  private static final short POLLIN = 0x1;
  private static final short POLLOUT = 0x4;
  private static final short POLLERR = 0x8;
  private static final short POLLHUP = 0x10;
  private static final short POLLNVAL = 0x20;

  private final Object wakeLock = new Object();
  /** The eventfd; -1 once closed. Written under {@link #wakeLock}, on the loop's thread. */
  private int efd;

  // ---- the loop's thread only ----
  private final List<Socket> sockets = new ArrayList<>();
  private int[] fds = new int[4];
  private short[] events = new short[4];
  private short[] revents = new short[4];
  private Socket[] polled = new Socket[4];

  private NativePoller(int efd) {
    this.efd = efd;
  }

  /** A poller, or null when libpmixjava is not loaded or lacks these functions. */
  static @Nullable NativePoller tryOpen() throws IOException {
    if (!PmixNativeLibrary.load()) {
      return null;
    }
    int fd;
    try {
      fd = eventfd0();
    } catch (LinkageError e) {
      return null; // a library of other classes than these
    }
    return new NativePoller(check(fd, "eventfd"));
  }

  /** A poller; libpmixjava must be loaded. */
  static NativePoller open() throws IOException {
    NativePoller p = tryOpen();
    if (p == null) {
      throw new IOException(
          "libpmixjava is not usable: " + String.valueOf(PmixNativeLibrary.failure()));
    }
    return p;
  }

  @Override
  StreamSocket socket(ProgressLoop.Registrant registrant) {
    return new Socket(registrant);
  }

  @Override
  void poll(long timeoutMillis) throws IOException {
    int n = sockets.size() + 1;
    if (n > POLL_MAX) {
      throw new IOException("more than " + (POLL_MAX - 1) + " sockets on one progress loop");
    }
    if (fds.length < n) {
      fds = new int[n * 2];
      events = new short[n * 2];
      revents = new short[n * 2];
      polled = new Socket[n * 2];
    }
    fds[0] = efd;
    events[0] = POLLIN;
    for (int i = 1; i < n; i++) {
      Socket s = sockets.get(i - 1);
      polled[i] = s;
      int ops = s.ops;
      short ev = 0;
      if ((ops & OP_READ) != 0) {
        ev |= POLLIN;
      }
      if ((ops & (OP_WRITE | OP_CONNECT)) != 0) {
        ev |= POLLOUT;
      }
      // No interest: left out, or its hang-up would end every poll at once.
      fds[i] = ev == 0 ? -1 : s.fd;
      events[i] = ev;
    }
    int timeout = timeoutMillis < 0 ? -1 : (int) Math.min(timeoutMillis, Integer.MAX_VALUE);
    int r = poll0(fds, events, revents, n, timeout);
    if (r < 0) {
      throw new IOException("poll: " + strerror0(-r));
    }
    for (int i = 1; i < n; i++) {
      Socket s = polled[i];
      polled[i] = null; // not kept past the round
      int rev = fds[i] < 0 ? 0 : revents[i];
      if (rev == 0) {
        continue;
      }
      int ops = s.ops;
      boolean failed = (rev & (POLLERR | POLLHUP | POLLNVAL)) != 0;
      int ready = 0;
      if ((ops & OP_CONNECT) != 0 && ((rev & POLLOUT) != 0 || failed)) {
        ready |= OP_CONNECT;
      }
      if ((ops & OP_READ) != 0 && ((rev & POLLIN) != 0 || failed)) {
        ready |= OP_READ;
      }
      if ((ops & OP_WRITE) != 0 && ((rev & POLLOUT) != 0 || failed)) {
        ready |= OP_WRITE;
      }
      // Closed by an earlier registrant of this round: nothing to tell.
      if (ready != 0 && s.fd >= 0) {
        tell(s.registrant, ready);
      }
    }
  }

  @Override
  void wakeup() {
    synchronized (wakeLock) {
      if (efd >= 0) {
        int r = wake0(efd);
        if (r < 0) {
          throw new IllegalStateException("cannot wake the PMIx progress thread: " + strerror0(-r));
        }
      }
    }
  }

  @Override
  List<ProgressLoop.Registrant> registrants() {
    List<ProgressLoop.Registrant> out = new ArrayList<>(sockets.size());
    for (Socket s : sockets) {
      out.add(s.registrant);
    }
    return out;
  }

  @Override
  void close() {
    synchronized (wakeLock) {
      if (efd >= 0) {
        int unused = close0(efd);
        efd = -1;
      }
    }
  }

  private static int check(int r, String call) throws IOException {
    if (r < 0) {
      throw new IOException(call + ": " + strerror0(-r));
    }
    return r;
  }

  /** A TCP descriptor of this poller; -1 until connected and after the close. */
  private final class Socket extends StreamSocket {
    final ProgressLoop.Registrant registrant;
    int fd = -1;
    int ops;
    private boolean closed;

    Socket(ProgressLoop.Registrant registrant) {
      this.registrant = registrant;
    }

    @Override
    boolean connect(String host, int port) throws IOException {
      if (closed || fd >= 0) {
        throw new IOException(closed ? "socket closed" : "already connecting");
      }
      int[] out = new int[2];
      int r = connect0(host, port, out);
      if (r == NO_ADDRESS) {
        throw new IOException("cannot resolve " + host);
      }
      if (r < 0) {
        throw new IOException("connect to " + host + ":" + port + ": " + strerror0(-r));
      }
      fd = out[0];
      sockets.add(this);
      return out[1] != 0;
    }

    @Override
    boolean finishConnect() throws IOException {
      int r = finishConnect0(openFd());
      if (r < 0) {
        throw new IOException("connect: " + strerror0(-r));
      }
      return true;
    }

    @Override
    int read(byte[] b, int off, int len) throws IOException {
      int r = transfer0(openFd(), b, off, len, false);
      if (r > 0) {
        return r;
      }
      if (r == 0) {
        return -1;
      }
      if (r == WOULD_BLOCK) {
        return 0;
      }
      throw new IOException("read: " + strerror0(-r));
    }

    @Override
    int write(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      int r = transfer0(openFd(), b, off, len, true);
      if (r == WOULD_BLOCK) {
        return 0;
      }
      if (r < 0) {
        throw new IOException("write: " + strerror0(-r));
      }
      return r;
    }

    private int openFd() throws IOException {
      if (fd < 0) {
        throw new IOException(closed ? "socket closed" : "socket not connected");
      }
      return fd;
    }

    @Override
    void interest(int ops) {
      this.ops = ops;
    }

    @Override
    int interest() {
      return ops;
    }

    @Override
    boolean isOpen() {
      return !closed;
    }

    @Override
    void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      ops = 0;
      int f = fd;
      fd = -1;
      if (f >= 0) {
        sockets.remove(this);
        int r = close0(f);
        if (r < 0) {
          throw new IOException("close: " + strerror0(-r));
        }
      }
    }

    @Override
    public String toString() {
      return "NativePoller.Socket[fd=" + fd + (closed ? ", closed" : "") + "]";
    }
  }

  private static native int eventfd0();

  private static native int wake0(int efd);

  private static native int poll0(
      int[] fds, short[] events, short[] revents, int n, int timeoutMillis);

  private static native int connect0(String host, int port, int[] out);

  private static native int finishConnect0(int fd);

  private static native int transfer0(int fd, byte[] b, int off, int len, boolean out);

  private static native int close0(int fd);

  private static native String strerror0(int errno);
}
