package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.message.FinalizeRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.ConnectReply;
import io.pmix.common.internal.wire.ConnectReplyDecoder;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestEncoder;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.Tags;
import io.pmix.common.internal.wire.ToolReply;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The connection to the server of one cycle: bootstrap and connect retries, the handshake and the
 * job-data request (REQ) that together make an init, sending requests framed with their tags, the
 * inbound frames (replies to the {@link ReplyRouter}, pushes on the reserved tags to the {@link
 * Listener}), and the loss or close of the socket. Also the identity the handshake fixed, and the
 * standalone mode in which there is no connection and every request fails with {@code
 * ERR_UNREACH}.
 *
 * <p>Threading: confined to the progress thread, except the identity fields, which are written
 * there and read anywhere.
 */
final class Connection implements SessionPart {
  private static final System.Logger LOG = System.getLogger(Connection.class.getName());

  /** Largest reply accepted; C has no limit, so this only guards against a corrupt header. */
  private static final int MAX_PAYLOAD = 1 << 30;

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
  private @Nullable Channel channel;

  @Bookkept("session.initInProgress")
  private @Nullable CompletableFuture<Void> initFuture;

  private @Nullable ConnectorKind kind;
  private int pindex = -1;
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
    Channel ch = channel;
    if (ch == null || !ch.isActive()) {
      handler.onFailure(notConnected());
      return;
    }
    ByteBuf body = messages.write(m);
    int tag = router.post(handler);
    ChannelFuture wf = ch.writeAndFlush(new Frame(pindex, tag, body));
    wf.addListener(
        done -> {
          if (!done.isSuccess() && router.cancel(tag, handler)) {
            handler.onFailure(
                new PmixException(Status.ERR_LOST_CONNECTION, "send failed", done.cause()));
          }
        });
  }

  /** A request that has no reply (DEREGEVENTS); dropped when not connected. */
  void sendOneWay(Message m) {
    Channel ch = channel;
    if (ch == null || !ch.isActive()) {
      return;
    }
    ch.writeAndFlush(new Frame(pindex, router.oneWayTag(), messages.write(m)))
        .addListener(LogFailure.INSTANCE);
  }

  /** Logs a failed one-way write; nobody waits for it. */
  private enum LogFailure implements ChannelFutureListener {
    INSTANCE;

    @Override
    public void operationComplete(ChannelFuture f) {
      if (!f.isSuccess()) {
        LOG.log(Level.DEBUG, "one-way request not sent", f.cause());
      }
    }
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
    return threads.call(f -> send(body.get(), replyTo(f, decode)));
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
    // What a failed earlier attempt left: its socket may still be closing, and its close must
    // not fail this attempt (channelInactive ignores channels other than the current).
    Channel old = channel;
    if (old != null) {
      channel = null;
      router.failAll(new PmixException(Status.ERR_UNREACH, "connection attempt abandoned"));
      var unused = old.close();
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
    Bootstrap b =
        new Bootstrap()
            .group(threads.loop())
            .channel(NioSocketChannel.class)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(
                            new ConnectReplyDecoder(plan.layout()),
                            new FrameDecoder(MAX_PAYLOAD),
                            ConnectRequestEncoder.INSTANCE,
                            FrameEncoder.INSTANCE,
                            new Handler(plan.request()));
                  }
                });
    b.connect(addr.host(), addr.port())
        .addListener(
            (ChannelFuture f) -> {
              if (f.isSuccess()) {
                return;
              }
              if (attempt < plan.attempts() && !finalizing && initFuture != null) {
                var unused =
                    threads
                        .loop()
                        .schedule(
                            () -> attemptConnect(plan, attempt + 1),
                            plan.retryDelay().toMillis(),
                            TimeUnit.MILLISECONDS);
              } else {
                failInit(
                    new PmixException(
                        Status.ERR_UNREACH,
                        "cannot connect to the PMIx server at " + addr.host() + ":" + addr.port(),
                        f.cause()));
              }
            });
  }

  private void failInit(PmixException e) {
    CompletableFuture<Void> f = initFuture;
    initFuture = null;
    if (f != null) {
      threads.fail(f, e);
    }
  }

  /** The connection's inbound side; lives on the progress thread. */
  private final class Handler extends ChannelInboundHandlerAdapter {
    private final ConnectRequest request;

    Handler(ConnectRequest request) {
      this.request = request;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      if (initFuture == null) {
        // The attempt was given up (finalize, or a failure) while the connect was in flight.
        var unused = ctx.close();
        return;
      }
      channel = ctx.channel();
      ctx.writeAndFlush(request)
          .addListener(
              (ChannelFuture f) -> {
                if (!f.isSuccess()) {
                  failInit(
                      new PmixException(Status.ERR_UNREACH, "connect request not sent", f.cause()));
                  var unused = f.channel().close();
                }
              });
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (ctx.channel() != channel) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof ConnectReply reply) {
        onConnectReply(reply);
      } else if (msg instanceof Frame frame) {
        try {
          onFrame(frame);
        } finally {
          frame.release();
        }
      } else {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      // A connection given up for another one must not disturb its successor.
      if (ctx.channel() == channel) {
        onConnectionLost();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // A corrupt stream cannot be resynchronised: drop the connection, as C does.
      LOG.log(Level.WARNING, "PMIx connection failed; closing it", cause);
      var unused = ctx.close();
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
            listener.onJobData(self, data, failure -> jobDataDone(failure));
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
    Channel ch = channel;
    if (ch != null) {
      var unused = ch.close();
    }
  }

  private void onFrame(Frame frame) {
    int tag = frame.tag();
    if (tag == Tags.NOTIFY || tag == Tags.IOF) {
      listener.onPush(tag, messages.reader(frame.payload()));
      return;
    }
    var unused = router.reply(tag, messages.reader(frame.payload()));
  }

  private void onConnectionLost() {
    Channel ch = channel;
    channel = null;
    boolean wasReady = ready;
    ready = false;
    failInit(
        new PmixException(Status.ERR_UNREACH, "the server closed the connection during init"));
    PmixException lost =
        finalizing
            ? threads.finalized(null)
            : new PmixException(
                Status.ERR_LOST_CONNECTION, "lost the connection to the PMIx server");
    router.failAll(lost);
    Proc self = me;
    if (wasReady && !finalizing && ch != null && self != null) {
      listener.onLost(self);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Closing (progress thread)

  /**
   * The first step of the last finalize: FINALIZE, {@code f} completing with its answer; at once
   * when standalone or not connected.
   */
  void sendFinalize(CompletableFuture<Void> f) {
    if (!ready || standalone || channel == null) {
      threads.complete(f, null);
      return;
    }
    send(FinalizeRequest.INSTANCE, replyTo(f, r -> {
      StatusReply.decode(r).check("finalize");
      return null;
    }));
  }

  /**
   * The second step: from now on a lost connection is a finalize, not an event; the socket is
   * closed (which fails whatever is still pending with ERR_INIT) and {@code f} completes (here,
   * not on the callback thread) once it is.
   */
  void close(CompletableFuture<Void> f) {
    finalizing = true;
    Channel ch = channel;
    if (ch == null) {
      onConnectionLost();
      f.complete(null);
      return;
    }
    ch.close().addListener(x -> f.complete(null));
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    Channel ch = channel;
    m.put("session.connection", ch != null && ch.isOpen() ? 1L : 0L);
    m.put("session.initInProgress", initFuture != null ? 1L : 0L);
    return m;
  }

  @Override
  public Map<String, Object> resources() {
    Channel ch = channel;
    return ch == null ? Map.of() : Map.of("channel", ch);
  }

  /** Shutting the event loop down closed every channel registered with it. */
  @Override
  public void release() {
    channel = null;
    initFuture = null;
    ready = false;
  }
}
