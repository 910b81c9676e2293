package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.FinalizeRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.ConnectReply;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameLimits;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.Tags;
import io.pmix.common.internal.wire.ToolReply;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The connection to the server of one cycle, over a plain NIO socket of the {@link ProgressLoop}:
 * connect retries, the handshake and the job-data request (REQ) that together make an init,
 * sending requests framed with their tags, the inbound frames (replies to the {@link
 * ReplyRouter}, pushes on the reserved tags to the {@link Listener}), and the loss or close of the
 * socket. Also the identity the handshake fixed, and the standalone mode in which there is no
 * connection and every request fails with {@code ERR_UNREACH}.
 *
 * <p>Threading: confined to the progress thread, except the identity fields, which are written
 * there and read anywhere.
 */
final class Connection implements SessionPart {
  private static final System.Logger LOG = LazyLogger.of(Connection.class);

  /** Largest reply accepted; C has no limit, so this only guards against a corrupt header. */
  private static final int MAX_PAYLOAD = 1 << 30;

  /** How long a TCP connect may take before the attempt counts as failed. */
  private static final long CONNECT_TIMEOUT_MILLIS = 10_000;

  /**
   * Bytes read from the socket per read call, at most; a connection starts with {@link
   * #FIRST_READ_CHUNK} and doubles its chunk whenever a read fills it.
   */
  private static final int READ_CHUNK = 64 * 1024;

  /**
   * A connection's first read chunk, and its undecoded bytes' first capacity. Not {@link
   * #READ_CHUNK}: two 64 KiB arrays made at every connect were zeroed, in a young heap first
   * touched, at every init (~0.5 ms of a re-init's progress thread, issue 15), while most replies
   * are tens of bytes and a small job's data a few KiB.
   */
  private static final int FIRST_READ_CHUNK = 8 * 1024;

  /** Where the connection hands what is not a reply; all on the progress thread. */
  interface Listener {
    /**
     * The REQ reply of {@code self}'s namespace arrived; the init completes when {@code done} is
     * called (on the progress thread, at once or later) with null, or fails with what it is
     * called with.
     *
     * @throws PmixException to fail the init at once
     */
    void onJobData(Proc self, ReqReply reply, Consumer<@Nullable PmixException> done);

    /** A push on a reserved tag (0 events, 2 forwarded output). */
    void onPush(int tag, PmixReader payload);

    /** The server closed a connection that was ready, and we were not finalizing. */
    void onLost(Proc self);
  }

  private final LibraryThreads threads;
  private final ReplyRouter router;
  private final Messages messages;
  private final Listener listener;

  // ---- written on the progress thread, read anywhere ----
  private volatile @Nullable Proc me;
  private volatile @Nullable PeerId server;
  private volatile boolean standalone;
  private volatile String standaloneReason = "there is no server";

  // ---- confined to the progress thread ----
  @Bookkept("session.connection")
  private @Nullable Link channel;

  @Bookkept("session.initInProgress")
  private @Nullable CompletableFuture<Void> initFuture;

  private @Nullable ConnectorKind kind;
  private int pindex = -1;

  /** The last fence sent and its payload, for {@link #body}; progress thread only. */
  @Bookkept("session.lastFence")
  private @Nullable FenceNbRequest lastFence;

  @Bookkept("session.lastFence")
  private byte @Nullable [] lastFenceBody;
  private boolean ready;
  private boolean finalizing;

  Connection(LibraryThreads threads, ReplyRouter router, Messages messages, Listener listener) {
    this.threads = requireNonNull(threads, "threads");
    this.router = requireNonNull(router, "router");
    this.messages = requireNonNull(messages, "messages");
    this.listener = requireNonNull(listener, "listener");
  }

  /** This process's name, once the handshake (or {@link #openStandalone}) has fixed it. */
  Proc me() {
    Proc p = me;
    if (p == null) {
      throw new IllegalStateException("not connected yet");
    }
    return p;
  }

  /** The server's name from a tool-layout handshake reply; empty for clients and standalone. */
  Optional<PeerId> server() {
    return Optional.ofNullable(server);
  }

  /** Whether this cycle runs without a server. */
  boolean isStandalone() {
    return standalone;
  }

  // ---------------------------------------------------------------------------------------------
  // Sending (progress thread)

  /** Frames {@code m} with a fresh tag and sends it; {@code handler} gets the reply. */
  void send(Message m, ReplyHandler handler) {
    Link link = channel;
    if (link == null || !link.connected || !link.socket.isOpen()) {
      handler.onFailure(notConnected());
      return;
    }
    WireBuffer body = body(m);
    int tag = router.post(handler);
    link.writeFrame(pindex, tag, body);
  }

  /**
   * {@code m}'s payload. A fence like the last one sent (a job mostly fences the same way, again
   * and again) reuses its bytes rather than packing the participants and directives again: most
   * of a fence's client-side work while the code still runs interpreted.
   */
  private WireBuffer body(Message m) {
    if (!(m instanceof FenceNbRequest f)) {
      return messages.write(m);
    }
    FenceNbRequest last = lastFence;
    byte[] bytes = lastFenceBody;
    if (last != null
        && bytes != null
        && f.procs().equals(last.procs())
        && f.directives().equals(last.directives())) {
      return WireBuffer.wrap(bytes);
    }
    bytes = messages.write(m).toByteArray();
    lastFence = f;
    lastFenceBody = bytes;
    return WireBuffer.wrap(bytes);
  }

  /** A request that has no reply (DEREGEVENTS); dropped when not connected. */
  void sendOneWay(Message m) {
    Link link = channel;
    if (link == null || !link.connected || !link.socket.isOpen()) {
      return;
    }
    link.writeFrame(pindex, router.oneWayTag(), messages.write(m));
  }

  private PmixException notConnected() {
    return standalone
        ? new PmixException(Status.ERR_UNREACH, standaloneReason)
        : new PmixException(Status.ERR_LOST_CONNECTION, "not connected");
  }

  /**
   * Sends a request built on the progress thread; {@code decode} turns the reply into the result
   * (on the progress thread; a PmixException it throws fails the future).
   */
  <T> CompletableFuture<T> request(
      Supplier<? extends Message> body, Function<PmixReader, T> decode) {
    return threads.call(new Sending<>(body, decode));
  }

  /**
   * A request sent from the progress thread. A class, not a lambda: every first request passes
   * here (docs/architecture.md, "First requests").
   */
  private final class Sending<T> implements Consumer<CompletableFuture<T>> {
    private final Supplier<? extends Message> body;
    private final Function<PmixReader, T> decode;

    Sending(Supplier<? extends Message> body, Function<PmixReader, T> decode) {
      this.body = body;
      this.decode = decode;
    }

    @Override
    public void accept(CompletableFuture<T> f) {
      send(body.get(), replyTo(f, decode));
    }
  }

  /** A reply handler completing {@code f} with the decoded reply, on the callback thread. */
  <T> ReplyHandler replyTo(CompletableFuture<T> f, Function<PmixReader, T> decode) {
    return new ReplyHandler() {
      @Override
      public void onReply(PmixReader reply) {
        threads.complete(f, decode.apply(reply));
      }

      @Override
      public void onFailure(PmixException e) {
        threads.fail(f, e);
      }
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Opening (progress thread)

  /** Runs without a server as {@code me}; every request fails with ERR_UNREACH and the reason. */
  void openStandalone(Proc me, String reason) {
    this.me = me;
    standaloneReason = reason;
    standalone = true;
    ready = true;
  }

  /**
   * Connects as {@code plan} says; {@code f} completes once the handshake and the job data are
   * done (after {@link Listener#onJobData}), or fails.
   *
   * @throws IllegalStateException if already open or opening
   */
  void open(ConnectPlan plan, CompletableFuture<Void> f) {
    if (ready || initFuture != null) {
      throw new IllegalStateException("the session is already open or opening");
    }
    // What a failed earlier attempt left: its socket must not disturb this attempt (a link
    // that is not the current one reports nothing when it closes).
    Link old = channel;
    if (old != null) {
      channel = null;
      router.failAll(new PmixException(Status.ERR_UNREACH, "connection attempt abandoned"));
      old.close();
    }
    server = null;
    pindex = -1;
    ConnectRequest req = plan.request();
    kind = req.kind();
    me =
        req.nspace().isPresent() && req.rank().isPresent()
            ? Proc.of(req.nspace().get(), req.rank().getAsInt())
            : null;
    initFuture = f;
    attemptConnect(plan, 1);
  }

  private void attemptConnect(ConnectPlan plan, int attempt) {
    ServerAddress addr = plan.address();
    Link link = new Link(plan);
    try {
      link.socket = threads.loop().socket(link);
    } catch (IOException e) {
      connectFailed(plan, attempt, e);
      return;
    }
    channel = link;
    link.connect(addr.host(), addr.port(), attempt);
  }

  /** A TCP connect failed: try again as the plan allows, else fail the init. */
  private void connectFailed(ConnectPlan plan, int attempt, @Nullable Throwable cause) {
    if (attempt < plan.attempts() && !finalizing && initFuture != null) {
      var unused =
          threads
              .loop()
              .schedule(() -> attemptConnect(plan, attempt + 1), plan.retryDelay().toMillis());
    } else {
      ServerAddress addr = plan.address();
      failInit(
          new PmixException(
              Status.ERR_UNREACH,
              "cannot connect to the PMIx server at " + addr.host() + ":" + addr.port(),
              cause));
    }
  }

  private void failInit(PmixException e) {
    CompletableFuture<Void> f = initFuture;
    initFuture = null;
    if (f != null) {
      threads.fail(f, e);
    }
  }

  /**
   * One socket to the server and its byte streams: the connect, the handshake request written
   * once connected, the handshake reply and then the frames read, and the frames written (queued
   * while the socket cannot take them). Lives on the progress thread.
   */
  private final class Link implements ProgressLoop.Registrant {
    /** Set once, right after the link is made (the socket tells the link of its readiness). */
    StreamSocket socket;

    private final ConnectPlan plan;
    private final ReplyLayout layout;
    private ProgressLoop.@Nullable Timer connectTimer;
    private int attempt;
    boolean connected;
    private boolean handshakeDone;
    private boolean closed;
    /** Bytes read and not yet decoded. */
    private final WireBuffer in = WireBuffer.allocate(FIRST_READ_CHUNK);
    private byte[] chunk = new byte[FIRST_READ_CHUNK];
    /** Bytes the socket has not taken yet, in order: whole frames, the first maybe in part. */
    private final ArrayDeque<byte[]> pending = new ArrayDeque<>();
    /** How much of the first pending frame the socket took. */
    private int pendingOffset;

    Link(ConnectPlan plan) {
      this.plan = plan;
      this.layout = plan.layout();
    }

    void connect(String host, int port, int attempt) {
      this.attempt = attempt;
      try {
        boolean done = socket.connect(host, port);
        socket.interest(done ? Poller.OP_READ : Poller.OP_CONNECT);
        if (done) {
          onConnected();
        } else {
          connectTimer =
              threads
                  .loop()
                  .schedule(
                      new Runnable() { // not a lambda: a first init runs this
                        @Override
                        public void run() {
                          failConnect(new IOException("connect timed out"));
                        }
                      },
                      CONNECT_TIMEOUT_MILLIS);
        }
      } catch (IOException | RuntimeException e) {
        failConnect(e);
      }
    }

    private void failConnect(Throwable cause) {
      if (closed) {
        return;
      }
      closeQuietly();
      if (channel == this) {
        channel = null;
        connectFailed(plan, attempt, cause);
      }
    }

    @Override
    public void ready(int readyOps) {
      if (closed) {
        return;
      }
      try {
        if (!connected && (readyOps & Poller.OP_CONNECT) != 0) {
          if (!socket.finishConnect()) {
            return;
          }
          socket.interest(Poller.OP_READ);
          onConnected();
          return;
        }
        if ((readyOps & Poller.OP_WRITE) != 0) {
          flush();
        }
        if ((readyOps & Poller.OP_READ) != 0) {
          read();
        }
      } catch (IOException e) {
        if (!connected) {
          failConnect(e);
        } else {
          LOG.log(Level.DEBUG, "PMIx connection failed", e);
          close();
        }
      }
    }

    private void onConnected() {
      ProgressLoop.Timer t = connectTimer;
      if (t != null) {
        t.cancel();
        connectTimer = null;
      }
      connected = true;
      if (initFuture == null || channel != this) {
        // The attempt was given up (finalize, or a failure) while the connect was in flight.
        close();
        return;
      }
      WireBuffer req = WireBuffer.allocate(256);
      try {
        ConnectRequestCodec.encode(plan.request(), req);
      } catch (RuntimeException e) {
        failInit(new PmixException(Status.ERR_UNREACH, "connect request not sent", e));
        close();
        return;
      }
      write(req.toByteArray());
    }

    /**
     * Sends a frame: the 16-byte header (docs/transport.md §5.1), then the payload, copied into one
     * buffer and written at once, so that they leave together as C peers send them. (One buffer
     * rather than a gathering write: the JDK's writev path copies each part into a temporary
     * direct buffer of its own, and a frame is small.)
     */
    void writeFrame(int pindex, int tag, WireBuffer payload) {
      int n = payload.readableBytes();
      byte[] frame = new byte[FrameDecoder.HEADER_LENGTH + n];
      ByteBuffer.wrap(frame).putInt(pindex).putInt(tag).putInt(n); // network order, then 4 zeros
      if (n > 0) {
        payload.nioBuffer(payload.readerIndex(), n).get(frame, FrameDecoder.HEADER_LENGTH, n);
      }
      write(frame);
    }

    private void write(byte[] bytes) {
      if (closed) {
        return;
      }
      int taken = 0;
      if (pending.isEmpty()) {
        try {
          taken = socket.write(bytes, 0, bytes.length);
        } catch (IOException e) {
          writeFailed(e);
          return;
        }
        if (taken == bytes.length) {
          return;
        }
        pendingOffset = taken;
        socket.interest(socket.interest() | Poller.OP_WRITE);
      }
      pending.add(bytes);
    }

    private void flush() throws IOException {
      byte[] head;
      while ((head = pending.peek()) != null) {
        int n = socket.write(head, pendingOffset, head.length - pendingOffset);
        pendingOffset += n;
        if (pendingOffset < head.length) {
          return;
        }
        pending.poll();
        pendingOffset = 0;
      }
      socket.interest(socket.interest() & ~Poller.OP_WRITE);
    }

    /** A write failed: the socket is dropped once the caller's work is done. */
    private void writeFailed(IOException e) {
      LOG.log(Level.DEBUG, "PMIx send failed; closing the connection", e);
      // Not here: the sender may be in the middle of posting its handler.
      threads.loop().execute(this::close);
    }

    private void read() throws IOException {
      while (!closed) {
        int size = chunk.length;
        int n = socket.read(chunk, 0, size);
        if (n < 0) {
          close();
          return;
        }
        if (n == 0) {
          return;
        }
        in.writeBytes(chunk, 0, n);
        decode();
        if (n < size) {
          return;
        }
        if (size < READ_CHUNK) {
          chunk = new byte[Math.min(READ_CHUNK, 2 * size)]; // more came than fitted: read more
        }
      }
    }

    /** Decodes what {@link #in} holds: the handshake reply once, then whole frames. */
    private void decode() {
      try {
        if (!handshakeDone) {
          Optional<ConnectReply> reply = ConnectReply.tryDecode(in, layout);
          if (reply.isEmpty()) {
            return;
          }
          handshakeDone = true;
          onConnectReply(reply.get());
        }
        while (!closed && in.readableBytes() >= FrameDecoder.HEADER_LENGTH) {
          int start = in.readerIndex();
          long nbytes = in.getUnsignedInt(start + 8);
          if (nbytes > MAX_PAYLOAD) {
            throw FrameLimits.tooLong(nbytes, in.getInt(start + 4), MAX_PAYLOAD);
          }
          if (in.readableBytes() - FrameDecoder.HEADER_LENGTH < nbytes) {
            break;
          }
          in.skipBytes(4); // pindex: ours, echoed
          int tag = in.readInt();
          in.skipBytes(8);
          // A view, not a copy: readers are done with a payload when onFrame returns.
          onFrame(tag, in.readSlice((int) nbytes));
        }
      } catch (RuntimeException e) {
        // A corrupt stream cannot be resynchronised: drop the connection, as C does.
        LOG.log(Level.WARNING, "PMIx connection failed; closing it", e);
        close();
        return;
      }
      in.discardReadBytes();
    }

    /** Closes the socket; if it is the current connection, that is its loss. */
    void close() {
      if (closed) {
        return;
      }
      closeQuietly();
      if (channel == this) {
        onConnectionLost();
      }
    }

    private void closeQuietly() {
      closed = true;
      ProgressLoop.Timer t = connectTimer;
      if (t != null) {
        t.cancel();
        connectTimer = null;
      }
      pending.clear();
      pendingOffset = 0;
      try {
        socket.close();
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "closing the PMIx socket failed", e);
      }
    }

    @Override
    public void shutdown() {
      close();
    }
  }

  private void onConnectReply(ConnectReply reply) {
    if (!reply.isSuccess()) {
      // A 4.2.2 server never sends a non-zero status (it closes instead); later ones may.
      Status s = reply instanceof ToolReply.Full full ? full.validationStatus() : reply.status();
      failInit(new PmixException(s, "the server refused the connection"));
      closeChannel();
      return;
    }
    if (reply instanceof ClientReply cr) {
      pindex = cr.index();
    } else if (reply instanceof ToolReply.Full tr) {
      server = tr.server();
      // Server-launched tools and singletons write 0xFFFFFFFF, other tools 0 (docs/transport.md
      // §5.3).
      ConnectorKind k = kind;
      pindex =
          k == ConnectorKind.TOOL_CLIENT
                  || k == ConnectorKind.LAUNCHER_CLIENT
                  || k == ConnectorKind.SINGLETON_CLIENT
              ? -1
              : 0;
      if (tr.assignedId().isPresent()) {
        PeerId id = tr.assignedId().get();
        me = Proc.of(id.nspace(), id.rank());
      }
    }
    Proc self = me;
    if (self == null) {
      failInit(new PmixException(Status.ERR_BAD_PARAM, "the server assigned no identity"));
      closeChannel();
      return;
    }
    send(
        ReqRequest.INSTANCE,
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            ReqReply data = ReqReply.decode(r);
            if (!self.nspace().equals(data.nspace())) {
              throw new PmixException(
                  Status.ERROR,
                  "job data for namespace " + data.nspace() + ", not " + self.nspace());
            }
            listener.onJobData(
                self,
                data,
                new Consumer<@Nullable PmixException>() { // not a lambda: a first init runs this
                  @Override
                  public void accept(@Nullable PmixException failure) {
                    jobDataDone(failure);
                  }
                });
          }

          @Override
          public void onFailure(PmixException e) {
            failInit(e);
            closeChannel();
          }
        });
  }
  /** The job data is complete (or could not be): the init ends, unless it failed meanwhile. */
  private void jobDataDone(@Nullable PmixException failure) {
    if (initFuture == null) {
      // The connection was lost (or given up) while the job data was being completed.
      return;
    }
    if (failure != null) {
      failInit(failure);
      closeChannel();
      return;
    }
    ready = true;
    CompletableFuture<Void> f = initFuture;
    initFuture = null;
    threads.complete(f, null);
  }

  private void closeChannel() {
    Link link = channel;
    if (link != null) {
      link.close();
    }
  }

  private void onFrame(int tag, WireBuffer payload) {
    if (tag == Tags.NOTIFY || tag == Tags.IOF) {
      listener.onPush(tag, messages.reader(payload));
      return;
    }
    var unused = router.reply(tag, messages.reader(payload));
  }

  private void onConnectionLost() {
    Link ch = channel;
    channel = null;
    lastFence = null;
    lastFenceBody = null;
    boolean wasReady = ready;
    ready = false;
    // The failures are made only when something waits for them: a clean finalize's close has
    // nothing to fail, and each exception's stack trace was ~50 µs of every interpreted finalize.
    if (initFuture != null) {
      failInit(
          new PmixException(Status.ERR_UNREACH, "the server closed the connection during init"));
    }
    if (router.hasPending()) {
      PmixException lost =
          finalizing
              ? threads.finalized(null)
              : new PmixException(
                  Status.ERR_LOST_CONNECTION, "lost the connection to the PMIx server");
      router.failAll(lost);
    }
    Proc self = me;
    if (wasReady && !finalizing && ch != null && self != null) {
      listener.onLost(self);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Closing (progress thread)

  /**
   * The last finalize: FINALIZE and, once it is answered or has failed, the socket closed on this
   * thread at once ({@link #close}'s work), then {@code f} completing with the answer; closed and
   * completed at once when standalone or not connected. The caller closes with {@link #close}
   * only if no answer came in time.
   */
  void finalizeAndClose(CompletableFuture<Void> f) {
    if (!ready || standalone || channel == null) {
      closeForFinalize();
      threads.complete(f, null);
      return;
    }
    ReplyHandler answer = replyTo(f, ConnectorSession.statusOnly("finalize"));
    // The socket closes first, whatever the answer, so the caller wakes to a closed connection,
    // and the loop is marked to end after this task, so the caller wakes to an ending loop: the
    // threads' chain of ends starts from this thread, already awake, while the caller wakes,
    // rather than after the caller has woken it again.
    send(
        FinalizeRequest.INSTANCE,
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            closeForFinalize();
            threads.endLoop();
            answer.onReply(r);
          }

          @Override
          public void onFailure(PmixException e) {
            closeForFinalize();
            threads.endLoop();
            answer.onFailure(e);
          }
        });
  }

  /**
   * After a finalize without an answer in time: as {@link #finalizeAndClose} closes, and {@code
   * f} completes (here, not on the callback thread) once closed.
   */
  void close(CompletableFuture<Void> f) {
    closeForFinalize();
    f.complete(null);
  }

  /**
   * From now on a lost connection is a finalize, not an event; the socket is closed, which fails
   * whatever is still pending with ERR_INIT. Running it again changes nothing.
   */
  private void closeForFinalize() {
    finalizing = true;
    Link link = channel;
    if (link == null) {
      onConnectionLost();
    } else {
      link.close();
    }
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    Link link = channel;
    m.put("session.connection", link != null && link.socket.isOpen() ? 1L : 0L);
    m.put("session.initInProgress", initFuture != null ? 1L : 0L);
    m.put("session.lastFence", lastFence != null || lastFenceBody != null ? 1L : 0L);
    return m;
  }

  @Override
  public Map<String, Object> resources() {
    Link link = channel;
    return link == null ? Map.of() : Map.of("channel", link.socket);
  }

  /** Shutting the progress loop down closed every socket registered with it. */
  @Override
  public void release() {
    channel = null;
    initFuture = null;
    lastFence = null;
    lastFenceBody = null;
    ready = false;
  }
}
