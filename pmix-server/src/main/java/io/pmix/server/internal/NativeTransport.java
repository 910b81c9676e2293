package io.pmix.server.internal;

import io.pmix.common.PmixException;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.server.internal.net.Epoll;
import io.pmix.server.internal.net.ServerLoop;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The server's own transport (docs/architecture.md, "A server transport without Netty"): the
 * listener on 127.0.0.1 and the connections it accepts, on a {@link ServerLoop}, each connection
 * read into the loop's one buffer and parsed by an {@link InboundStream}, each told to a {@link
 * PeerSession}. Replies leave with one send where the socket takes them, else wait in the
 * connection's queue for the socket to be writable, in order.
 *
 * <p>The rules of the Netty transport it replaces ({@code Acceptor}, the pipeline): accepted
 * sockets get {@code TCP_NODELAY}; an accept failure (out of descriptors) pauses accepting for a
 * second; a connection that cannot be set up is closed at once; a failed read or send closes the
 * connection, and a close (either side's) reaches the session after the task that caused it, as
 * Netty's did. Loop thread only, except {@link ServerConnection#toString}.
 */
public final class NativeTransport {
  private static final System.Logger LOG = LazyLogger.of(NativeTransport.class);
  /** How long accepting pauses after an accept failure, as Netty's bootstrap pauses. */
  static final long PAUSE_AFTER_FAILURE_MS = 1_000;
  /** The largest frame sent from the shared array; larger ones get an array of their own. */
  private static final int SCRATCH = 16 * 1024;

  private final ServerLoop loop;
  private final ServerCore core;
  private final Duration handshakeTimeout;
  private final @Nullable Executor ownerLookupExecutor;
  private final PendingHandshakes pending;
  private final int maxMessageSize;
  private final FrameBudget budget;
  private final SocketOwner socketOwner = new SocketOwner();
  private final byte[] receive = new byte[64 * 1024];
  private final byte[] scratch = new byte[SCRATCH];
  private final int[] addresses = new int[4];
  /** Every connection open, peers or not, for the shutdown. */
  private final Set<Connection> open = new LinkedHashSet<>();
  private int listenFd = -1;
  private int port;
  private final Listener listener = new Listener();

  /**
   * A transport on {@code loop} for {@code core}.
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials and skip the lookup
   */
  public NativeTransport(
      ServerLoop loop,
      ServerCore core,
      Duration handshakeTimeout,
      @Nullable Executor ownerLookupExecutor,
      PendingHandshakes pending,
      int maxMessageSize,
      FrameBudget budget) {
    this.loop = loop;
    this.core = core;
    this.handshakeTimeout = handshakeTimeout;
    this.ownerLookupExecutor = ownerLookupExecutor;
    this.pending = pending;
    this.maxMessageSize = maxMessageSize;
    this.budget = budget;
  }

  /** Opens the listener on 127.0.0.1, a port the kernel chooses; its address. Loop thread. */
  public InetSocketAddress listen(int backlog) throws IOException {
    int[] out = new int[1];
    int fd = Epoll.listen0(backlog, out);
    if (fd < 0) {
      throw new IOException("listen on 127.0.0.1: " + Epoll.strerror0(-fd));
    }
    try {
      loop.register(fd, Epoll.EPOLLIN, listener);
    } catch (IOException e) {
      int unused = Epoll.close0(fd);
      throw e;
    }
    listenFd = fd;
    port = out[0];
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
  }

  /** Closes the listener. Loop thread; idempotent. */
  public void closeListener() {
    int fd = listenFd;
    if (fd >= 0) {
      listenFd = -1;
      loop.deregister(fd);
      int unused = Epoll.close0(fd);
    }
  }

  /** Closes every connection (the shutdown's last step); their closes' futures. Loop thread. */
  public List<CompletableFuture<Void>> closeAll() {
    List<CompletableFuture<Void>> closes = new ArrayList<>();
    for (Connection c : new ArrayList<>(open)) {
      c.close();
      closes.add(c.closed());
    }
    return closes;
  }

  /** The connections open now (for tests and the snapshot's checks). */
  int openConnections() {
    return open.size();
  }

  /** The listener: accepts every waiting connection when it is readable. */
  private final class Listener implements ServerLoop.Handler {
    @Override
    public void ready(int events) {
      // At most 16 a turn, as Netty's acceptor: the connections accepted before them are read in
      // between, so that a storm of idle connections beyond the pending cap does not push out a
      // client whose request waits unread (the cap evicts the oldest connection not yet heard).
      for (int accepts = 0; accepts < 16 && listenFd >= 0; accepts++) {
        int fd = Epoll.accept0(listenFd, addresses);
        if (fd == Epoll.WOULD_BLOCK) {
          return;
        }
        if (fd < 0) {
          pause(fd);
          return;
        }
        accepted(fd);
      }
    }

    private void pause(int err) {
      LOG.log(
          Level.WARNING,
          "accepting a connection failed ({0}); pausing for a second",
          Epoll.strerror0(-err));
      int fd = listenFd;
      try {
        loop.modify(fd, 0);
      } catch (IOException e) {
        LOG.log(Level.WARNING, "could not pause the listener", e);
        return;
      }
      var unused =
          loop.schedule(new ResumeAccepting(fd), PAUSE_AFTER_FAILURE_MS, TimeUnit.MILLISECONDS);
    }
  }

  /** Accepts again after a pause, unless the listener closed meanwhile. */
  private final class ResumeAccepting implements Runnable {
    private final int fd;

    ResumeAccepting(int fd) {
      this.fd = fd;
    }

    @Override
    public void run() {
      if (listenFd == fd) {
        try {
          loop.modify(fd, Epoll.EPOLLIN);
        } catch (IOException e) {
          LOG.log(Level.WARNING, "could not resume the listener", e);
        }
      }
    }
  }

  private void accepted(int fd) {
    InetSocketAddress remote;
    InetSocketAddress local;
    try {
      remote = address(addresses[0], addresses[1]);
      local = address(addresses[2], addresses[3]);
    } catch (UnknownHostException e) {
      throw new AssertionError(e); // four bytes always make an address
    }
    Connection c = new Connection(fd, remote);
    try {
      loop.register(fd, Epoll.EPOLLIN | Epoll.EPOLLRDHUP, c);
    } catch (IOException e) {
      LOG.log(Level.WARNING, "could not set up an accepted connection: " + c, e);
      int unused = Epoll.close0(fd);
      return;
    }
    open.add(c);
    if (c.session.opened(remote, local)) {
      // A connector sends its request as soon as it connects: often here already, and once read
      // the connection counts as heard (PendingHandshakes).
      c.read();
    }
  }

  private static InetSocketAddress address(int ipv4, int port) throws UnknownHostException {
    byte[] a = {(byte) (ipv4 >>> 24), (byte) (ipv4 >>> 16), (byte) (ipv4 >>> 8), (byte) ipv4};
    return new InetSocketAddress(InetAddress.getByAddress(a), port);
  }

  /** One accepted connection. */
  private final class Connection extends ServerConnection
      implements ServerLoop.Handler, InboundStream.Sink {
    private final String name;
    private final PeerSession session;
    private final InboundStream in;
    private final CompletableFuture<Void> closedFuture = new CompletableFuture<>();
    /** Bytes the socket has not taken yet, oldest first; the first from {@link #headSent}. */
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>(0);
    private int headSent;
    private int fd;

    Connection(int fd, InetSocketAddress remote) {
      this.fd = fd;
      this.name = "[fd " + fd + " " + remote + " -> :" + port + "]";
      this.session =
          new PeerSession(
              core,
              this,
              loop,
              handshakeTimeout,
              ownerLookupExecutor,
              socketOwner,
              pending);
      this.in =
          new InboundStream(ConnectRequestCodec.DEFAULT_MAX_PAYLOAD, maxMessageSize, budget, this);
    }

    // ---- reading ----

    @Override
    public void ready(int events) {
      if ((events & Epoll.EPOLLOUT) != 0 && fd >= 0) {
        flush();
      }
      if ((events & (Epoll.EPOLLIN | Epoll.EPOLLRDHUP | Epoll.EPOLLHUP | Epoll.EPOLLERR)) != 0) {
        read();
      }
    }

    private void read() {
      // At most 16 reads a turn, as Netty's loop read: a client that floods the server does not
      // keep it from the others (epoll says so again while bytes are waiting).
      for (int reads = 0; reads < 16 && fd >= 0; reads++) {
        int r = Epoll.transfer0(fd, receive, 0, receive.length, false);
        if (r > 0) {
          try {
            in.feed(receive, 0, r);
          } catch (RuntimeException e) {
            // What a request's handling threw: the connection goes, as Netty's pipeline closed
            // it; the server goes on.
            LOG.log(Level.WARNING, "closing " + this + ": handling its request failed", e);
            close();
            return;
          }
          if (r < receive.length) {
            return; // drained, most likely: epoll says so again if not
          }
        } else if (r == Epoll.WOULD_BLOCK) {
          return;
        } else if (r == 0) {
          close(); // the peer closed its end
          return;
        } else {
          LOG.log(Level.DEBUG, "reading from {0}: {1}", this, Epoll.strerror0(-r));
          close();
          return;
        }
      }
    }

    @Override
    public void connectRequest(ConnectRequest request) {
      session.connectRequest(request);
    }

    @Override
    public void frame(int tag, byte[] payload) {
      session.frame(tag, payload);
    }

    @Override
    public void failed(PmixException cause) {
      session.failed(cause);
    }

    // ---- writing ----

    @Override
    public boolean isOpen() {
      return fd >= 0;
    }

    @Override
    public void send(WireBuffer frame, int length) {
      if (fd < 0 || length <= 0) {
        return;
      }
      if (!queue.isEmpty()) {
        byte[] copy = new byte[length];
        frame.getBytes(0, copy, 0, length);
        queue.add(copy);
        return;
      }
      byte[] b = length <= SCRATCH ? scratch : new byte[length];
      frame.getBytes(0, b, 0, length);
      int w = Epoll.transfer0(fd, b, 0, length, true);
      if (w == Epoll.WOULD_BLOCK) {
        w = 0;
      } else if (w < 0) {
        LOG.log(Level.DEBUG, "writing to {0}: {1}", this, Epoll.strerror0(-w));
        close();
        return;
      }
      if (w < length) {
        queue.add(Arrays.copyOfRange(b, w, length));
        headSent = 0;
        interest(Epoll.EPOLLIN | Epoll.EPOLLRDHUP | Epoll.EPOLLOUT);
      }
    }

    /** Sends what is queued, as far as the socket takes it. */
    private void flush() {
      byte[] head;
      while ((head = queue.peek()) != null) {
        int w = Epoll.transfer0(fd, head, headSent, head.length - headSent, true);
        if (w == Epoll.WOULD_BLOCK) {
          return;
        }
        if (w < 0) {
          LOG.log(Level.DEBUG, "writing to {0}: {1}", this, Epoll.strerror0(-w));
          close();
          return;
        }
        headSent += w;
        if (headSent < head.length) {
          return;
        }
        queue.poll();
        headSent = 0;
      }
      interest(Epoll.EPOLLIN | Epoll.EPOLLRDHUP);
    }

    private void interest(int events) {
      try {
        loop.modify(fd, events);
      } catch (IOException e) {
        LOG.log(Level.WARNING, "closing " + this, e);
        close();
      }
    }

    // ---- closing ----

    @Override
    public void close() {
      int f = fd;
      if (f < 0) {
        return;
      }
      fd = -1;
      in.stop();
      queue.clear();
      loop.deregister(f);
      int unused = Epoll.close0(f);
      open.remove(this);
      // The session hears of it after the task that closed it, as Netty reported a close.
      try {
        loop.execute(new Closed(this));
      } catch (RejectedExecutionException e) {
        reportClosed(); // the loop has ended: nothing runs after this task anyway
      }
    }

    @Override
    public CompletableFuture<Void> closed() {
      return closedFuture;
    }

    void reportClosed() {
      session.closed();
      closedFuture.complete(null);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** Reports a connection's close to its session. A class: no lambda on a connection's path. */
  private static final class Closed implements Runnable {
    private final Connection connection;

    Closed(Connection connection) {
      this.connection = connection;
    }

    @Override
    public void run() {
      connection.reportClosed();
    }
  }
}
