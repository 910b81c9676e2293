package io.pmix.dataserver;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.dataserver.internal.Directives;
import io.pmix.dataserver.internal.DsProtocol;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DataService} whose store is a {@link DataServer} elsewhere: what a PMIx server uses
 * when many servers share one store ({@code pmixrun --dataserver HOST:PORT}).
 *
 * <p>The client connects when it is built and whenever it has requests and no connection,
 * retrying with a doubling delay while it cannot connect. Nothing hangs: a request waits at most
 * {@link Builder#connectTimeout} for a connection ({@code PMIX_ERR_UNREACH} after that) and at
 * most {@link Builder#requestTimeout} for its answer ({@code PMIX_ERR_TIMEOUT}); a lookup that
 * waits for data waits as long as its own {@code PMIX_TIMEOUT} plus the request timeout, or
 * without bound when it gave none (it is still answered when the connection fails). Requests in
 * flight when a connection is lost complete with {@code PMIX_ERR_LOST_CONNECTION} and are not
 * resent, since a publish may already have been applied; the server cancels the lookups that were
 * waiting on the lost connection.
 *
 * <p>Threading and ownership: the client owns one event loop thread; all its state lives there and
 * stages complete there. Thread-safe. {@link #close()} fails what is pending with {@code
 * PMIX_ERR_NOT_AVAILABLE} and waits for the thread to stop.
 */
public final class DataServerClient implements DataService {
  private final InetSocketAddress address;
  /** host:port as given, for logs. */
  private final String target;
  private final String name;
  private final Duration connectTimeout;
  private final Duration requestTimeout;
  private final Duration initialRetryDelay;
  private final Duration maxRetryDelay;
  private final System.Logger log;
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final Bootstrap bootstrap;

  // Everything below is confined to the loop.
  private @Nullable Channel channel;
  private boolean ready;
  private boolean connecting;
  private boolean closed;
  private @Nullable ScheduledFuture<?> retry;
  private Duration retryDelay;
  private int nextId = 1;
  private final ArrayDeque<Request<?>> queued = new ArrayDeque<>();
  private final Map<Integer, Request<?>> inflight = new HashMap<>();

  private DataServerClient(Builder b) {
    this.address = b.address;
    this.target = b.address.getHostString() + ":" + b.address.getPort();
    this.name = b.name;
    this.connectTimeout = b.connectTimeout;
    this.requestTimeout = b.requestTimeout;
    this.initialRetryDelay = b.retryDelay;
    this.maxRetryDelay = b.maxRetryDelay;
    this.retryDelay = b.retryDelay;
    this.log = b.logger;
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("pmix-dataserver-client", true), NioIoHandler.newFactory());
    this.loop = group.next();
    int maxFrame = b.maxFrameBytes;
    this.bootstrap =
        new Bootstrap()
            .group(loop)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_KEEPALIVE, true)
            .option(
                ChannelOption.CONNECT_TIMEOUT_MILLIS,
                (int) Math.min(Integer.MAX_VALUE, Math.max(1, b.connectTimeout.toMillis())))
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast("frames", new FrameDecoder(maxFrame))
                        .addLast("encoder", FrameEncoder.INSTANCE)
                        .addLast("replies", new ReplyHandler());
                  }
                });
  }

  /** A builder for a client of the data server at {@code host}:{@code port}. */
  public static Builder builder(String host, int port) {
    checkArgument(port > 0 && port <= 0xFFFF, "port out of range: %s", port);
    return new Builder(InetSocketAddress.createUnresolved(requireNonNull(host, "host"), port));
  }

  /** A builder for a client of the data server at {@code address}. */
  public static Builder builder(InetSocketAddress address) {
    return new Builder(requireNonNull(address, "address"));
  }

  /**
   * A builder for a client of the data server named {@code HOST:PORT} (as {@code pmixrun
   * --dataserver} takes it; an IPv6 host in brackets).
   *
   * @throws IllegalArgumentException if it is not HOST:PORT
   */
  public static Builder builder(String hostAndPort) {
    int colon = hostAndPort.lastIndexOf(':');
    checkArgument(colon > 0 && colon < hostAndPort.length() - 1, "not HOST:PORT: %s", hostAndPort);
    String host = hostAndPort.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(hostAndPort.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not HOST:PORT: " + hostAndPort, e);
    }
    return builder(host, port);
  }

  /** The data server this client talks to. */
  public InetSocketAddress address() {
    return address;
  }

  // ---------------------------------------------------------------------------------------------
  // DataService

  @Override
  public CompletionStage<Status> publish(Identity publisher, List<Info> info) {
    requireNonNull(publisher, "publisher");
    List<Info> i = List.copyOf(info);
    return submit(
        DsProtocol.PUBLISH,
        w -> {
          DsProtocol.writeIdentity(w, publisher);
          DsProtocol.writeInfos(w, i);
        },
        (status, r) -> status,
        s -> s,
        null);
  }

  @Override
  public CompletionStage<LookupResult> lookup(
      Identity requester, List<String> keys, List<Info> directives) {
    requireNonNull(requester, "requester");
    List<String> k = List.copyOf(keys);
    List<Info> d = List.copyOf(directives);
    return submit(
        DsProtocol.LOOKUP,
        w -> {
          DsProtocol.writeIdentity(w, requester);
          DsProtocol.writeKeys(w, k);
          DsProtocol.writeInfos(w, d);
        },
        (status, r) -> DsProtocol.readLookupData(r, status),
        LookupResult::of,
        answerTimeout(d));
  }

  @Override
  public CompletionStage<Status> unpublish(
      Identity requester, List<String> keys, List<Info> directives) {
    requireNonNull(requester, "requester");
    List<String> k = List.copyOf(keys);
    List<Info> d = List.copyOf(directives);
    return submit(
        DsProtocol.UNPUBLISH,
        w -> {
          DsProtocol.writeIdentity(w, requester);
          DsProtocol.writeKeys(w, k);
          DsProtocol.writeInfos(w, d);
        },
        (status, r) -> status,
        s -> s,
        null);
  }

  @Override
  public CompletionStage<Status> procEnded(Proc proc) {
    requireNonNull(proc, "proc");
    return simple(DsProtocol.PROC_ENDED, w -> w.packProc(proc));
  }

  @Override
  public CompletionStage<Status> appEnded(String nspace, int appNumber) {
    requireNonNull(nspace, "nspace");
    checkArgument(appNumber != Identity.UNKNOWN, "an application number is needed");
    return simple(
        DsProtocol.APP_ENDED,
        w -> {
          w.packString(nspace);
          w.packUInt32(appNumber);
        });
  }

  @Override
  public CompletionStage<Status> namespaceEnded(String nspace) {
    requireNonNull(nspace, "nspace");
    return simple(DsProtocol.NSPACE_ENDED, w -> w.packString(nspace));
  }

  @Override
  public CompletionStage<Status> sessionEnded(int sessionId) {
    return simple(DsProtocol.SESSION_ENDED, w -> w.packUInt32(sessionId));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Waits for the client's thread, so it must not be called from a stage's dependent action
   * (which runs on that thread).
   */
  @Override
  public void close() {
    if (!loop.isShuttingDown()) {
      try {
        loop.execute(this::closeOnLoop);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // Closed concurrently.
      }
    }
    Future<?> stop = group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    stop.awaitUninterruptibly();
  }

  // ---------------------------------------------------------------------------------------------
  // Requests

  /** One request: how to write it, how to read its answer, how to fail it, where it stands. */
  private static final class Request<T> {
    final int command;
    final Consumer<PmixWriter> fields;
    final BiFunction<Status, PmixReader, T> answer;
    final Function<Status, T> failure;
    /** How long to wait for the answer once sent; null for ever. */
    final @Nullable Duration answerTimeout;
    final CompletableFuture<T> future = new CompletableFuture<>();
    int id;
    @Nullable ScheduledFuture<?> timer;

    Request(
        int command,
        Consumer<PmixWriter> fields,
        BiFunction<Status, PmixReader, T> answer,
        Function<Status, T> failure,
        @Nullable Duration answerTimeout) {
      this.command = command;
      this.fields = fields;
      this.answer = answer;
      this.failure = failure;
      this.answerTimeout = answerTimeout;
    }

    void fail(Status s) {
      cancelTimer();
      future.complete(failure.apply(s));
    }

    void answer(Status s, PmixReader r) {
      cancelTimer();
      T value;
      try {
        value = answer.apply(s, r);
      } catch (PmixException e) {
        value = failure.apply(e.status());
      }
      future.complete(value);
    }

    void cancelTimer() {
      if (timer != null) {
        boolean unused = timer.cancel(false);
        timer = null;
      }
    }
  }

  private CompletionStage<Status> simple(int command, Consumer<PmixWriter> fields) {
    return submit(command, fields, (status, r) -> status, s -> s, null);
  }

  private <T> CompletionStage<T> submit(
      int command,
      Consumer<PmixWriter> fields,
      BiFunction<Status, PmixReader, T> answer,
      Function<Status, T> failure,
      @Nullable Duration waitingTimeout) {
    Duration timeout = waitingTimeout == null ? requestTimeout : waitingTimeout;
    Request<T> req =
        new Request<>(
            command, fields, answer, failure, timeout.isNegative() ? null : timeout);
    CompletableFuture<T> unused =
        req.future.whenComplete(
            (v, e) -> {
              if (req.future.isCancelled()) {
                try {
                  loop.execute(() -> abandon(req));
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                  // Closed: nothing is left to abandon.
                }
              }
            });
    try {
      loop.execute(() -> enqueue(req));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      req.future.complete(failure.apply(Status.ERR_NOT_AVAILABLE));
    }
    return req.future;
  }

  /**
   * How long a lookup may take to be answered: the request timeout, or for a waiting lookup its
   * own PMIX_TIMEOUT plus the request timeout; a negative duration (no bound) when it waits with
   * no timeout of its own.
   */
  private @Nullable Duration answerTimeout(List<Info> directives) {
    Directives.Lookup parsed;
    try {
      parsed = Directives.lookup(List.of("probe"), directives);
    } catch (PmixException e) {
      return null; // The server refuses it at once.
    }
    if (!parsed.waits()) {
      return null;
    }
    if (parsed.timeoutSeconds() == 0) {
      return Duration.ofNanos(-1);
    }
    return requestTimeout.plusSeconds(parsed.timeoutSeconds());
  }

  private void enqueue(Request<?> req) {
    if (req.future.isDone()) {
      return;
    }
    if (closed) {
      req.fail(Status.ERR_NOT_AVAILABLE);
      return;
    }
    if (ready) {
      send(req);
      return;
    }
    queued.add(req);
    req.timer =
        loop.schedule(
            () -> {
              req.timer = null;
              if (queued.remove(req)) {
                req.fail(Status.ERR_UNREACH);
              }
            },
            connectTimeout.toNanos(),
            TimeUnit.NANOSECONDS);
    connect();
  }

  private void send(Request<?> req) {
    Channel ch = channel;
    if (ch == null || !ready) {
      enqueue(req);
      return;
    }
    req.cancelTimer();
    int id = nextId();
    req.id = id;
    Frame f;
    try {
      f = DsProtocol.build(DsProtocol.request(ch.alloc(), req.command, id), req.fields);
    } catch (RuntimeException e) {
      // A value the codec cannot pack: only a Java caller can build one.
      log.log(Level.DEBUG, "data server client: cannot encode a request", e);
      req.fail(Status.ERR_BAD_PARAM);
      return;
    }
    inflight.put(id, req);
    if (req.answerTimeout != null) {
      req.timer =
          loop.schedule(
              () -> {
                req.timer = null;
                if (inflight.remove(req.id) == req) {
                  if (req.command == DsProtocol.LOOKUP) {
                    sendCancel(req.id, Status.ERR_TIMEOUT);
                  }
                  req.fail(Status.ERR_TIMEOUT);
                }
              },
              req.answerTimeout.toNanos(),
              TimeUnit.NANOSECONDS);
    }
    ChannelFuture unused = ch.writeAndFlush(f);
  }

  private int nextId() {
    // Skip ids still in use (a wrap-around after four billion requests meeting a long wait).
    int id;
    do {
      id = nextId++;
    } while (id == 0 || inflight.containsKey(id));
    return id;
  }

  /** The caller cancelled its stage: forget the request, and tell the server to drop a lookup. */
  private void abandon(Request<?> req) {
    if (queued.remove(req)) {
      req.cancelTimer();
      return;
    }
    if (req.id != 0 && inflight.remove(req.id) == req) {
      req.cancelTimer();
      if (req.command == DsProtocol.LOOKUP) {
        sendCancel(req.id, Status.ERR_LOST_CONNECTION);
      }
    }
  }

  private void sendCancel(int lookupId, Status reason) {
    Channel ch = channel;
    if (ch == null || !ready) {
      return;
    }
    // A fire-and-forget request: its reply finds no request and is dropped.
    Frame f =
        DsProtocol.build(
            DsProtocol.request(ch.alloc(), DsProtocol.CANCEL, nextId()),
            w -> {
              w.packUInt32(lookupId);
              w.packStatus(reason);
            });
    ChannelFuture unused = ch.writeAndFlush(f);
  }

  // ---------------------------------------------------------------------------------------------
  // The connection

  private void connect() {
    if (closed || channel != null || connecting || retry != null) {
      return;
    }
    connecting = true;
    InetSocketAddress target =
        address.isUnresolved()
            ? new InetSocketAddress(address.getHostString(), address.getPort())
            : address;
    ChannelFuture f = bootstrap.connect(target);
    f.addListener(
        x -> {
          connecting = false;
          if (!f.isSuccess()) {
            log.log(
                Level.DEBUG,
                "data server client: cannot connect to {0}: {1}",
                target,
                String.valueOf(f.cause()));
            scheduleRetry();
            return;
          }
          if (closed) {
            ChannelFuture unused = f.channel().close();
            return;
          }
          channel = f.channel();
          hello(f.channel());
        });
  }

  private void hello(Channel ch) {
    Request<Status> hello =
        new Request<>(
            DsProtocol.HELLO,
            w -> {
              w.packString(DsProtocol.MAGIC);
              w.packUInt32(DsProtocol.VERSION);
              w.packString(name);
            },
            (status, r) -> status,
            s -> s,
            requestTimeout);
    int id = nextId();
    hello.id = id;
    inflight.put(id, hello);
    hello.timer =
        loop.schedule(
            () -> {
              hello.timer = null;
              if (inflight.remove(id) == hello) {
                hello.fail(Status.ERR_TIMEOUT);
              }
            },
            requestTimeout.toNanos(),
            TimeUnit.NANOSECONDS);
    CompletableFuture<Status> unused =
        hello.future.whenComplete(
            (status, e) -> {
              if (channel != ch) {
                return;
              }
              if (Status.SUCCESS.equals(status)) {
                ready = true;
                retryDelay = initialRetryDelay;
                log.log(Level.DEBUG, "data server client: connected to {0}", target);
                while (!queued.isEmpty() && ready) {
                  send(queued.poll());
                }
              } else {
                log.log(
                    Level.WARNING,
                    "data server client: {0} refused us: {1}",
                    target,
                    String.valueOf(status));
                ChannelFuture unused2 = ch.close();
              }
            });
    ChannelFuture unused3 =
        ch.writeAndFlush(DsProtocol.build(DsProtocol.request(ch.alloc(), DsProtocol.HELLO, id), hello.fields));
  }

  private void scheduleRetry() {
    if (closed || queued.isEmpty() || retry != null) {
      return;
    }
    Duration d = retryDelay;
    retryDelay = retryDelay.multipliedBy(2).compareTo(maxRetryDelay) > 0
        ? maxRetryDelay
        : retryDelay.multipliedBy(2);
    retry =
        loop.schedule(
            () -> {
              retry = null;
              connect();
            },
            d.toNanos(),
            TimeUnit.NANOSECONDS);
  }

  private void lost(Channel ch) {
    if (channel != ch) {
      return;
    }
    channel = null;
    ready = false;
    if (!inflight.isEmpty()) {
      log.log(
          Level.WARNING,
          "data server client: lost the connection to {0} with {1} requests in flight",
          target,
          inflight.size());
    }
    List<Request<?>> failed = new ArrayList<>(inflight.values());
    inflight.clear();
    for (Request<?> r : failed) {
      r.fail(Status.ERR_LOST_CONNECTION);
    }
    // Requests queued meanwhile get a new connection.
    scheduleRetry();
  }

  private void closeOnLoop() {
    closed = true;
    if (retry != null) {
      boolean unused = retry.cancel(false);
      retry = null;
    }
    List<Request<?>> all = new ArrayList<>(queued);
    all.addAll(inflight.values());
    queued.clear();
    inflight.clear();
    for (Request<?> r : all) {
      r.fail(Status.ERR_NOT_AVAILABLE);
    }
    Channel ch = channel;
    channel = null;
    ready = false;
    if (ch != null) {
      ChannelFuture unused = ch.close();
    }
  }

  /** Routes the server's replies to their requests. */
  private final class ReplyHandler extends SimpleChannelInboundHandler<Frame> {
    ReplyHandler() {
      super(Frame.class);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
      PmixReader r = new PmixReader(frame.payload());
      DsProtocol.Header h;
      Status status;
      try {
        h = DsProtocol.header(r);
        status = r.unpackStatus();
      } catch (PmixException e) {
        log.log(Level.WARNING, "data server client: unreadable reply from {0}: {1}", target, e.getMessage());
        ChannelFuture unused = ctx.close();
        return;
      }
      Request<?> req = inflight.remove(h.requestId());
      if (req == null || req.command != h.command()) {
        // A late answer to a request that timed out or was cancelled.
        if (req != null) {
          inflight.put(h.requestId(), req);
        }
        return;
      }
      req.answer(status, r);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      lost(ctx.channel());
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      log.log(Level.WARNING, "data server client: closing the connection to {0}: {1}", target, cause.toString());
      ChannelFuture unused = ctx.close();
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** Builds a {@link DataServerClient}. Not thread-safe. */
  public static final class Builder {
    private final InetSocketAddress address;
    private String name = "pmix-java";
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofSeconds(30);
    private Duration retryDelay = Duration.ofMillis(100);
    private Duration maxRetryDelay = Duration.ofSeconds(5);
    private int maxFrameBytes = DsProtocol.DEFAULT_MAX_FRAME_BYTES;
    private System.Logger logger = LazyLogger.named("io.pmix.dataserver");

    private Builder(InetSocketAddress address) {
      this.address = address;
    }

    /** The name the client gives the server in its logs (e.g. the PMIx server's namespace). */
    @CanIgnoreReturnValue
    public Builder name(String n) {
      this.name = requireNonNull(n, "n");
      return this;
    }

    /** How long a request waits for a connection before {@code PMIX_ERR_UNREACH} (10 s). */
    @CanIgnoreReturnValue
    public Builder connectTimeout(Duration d) {
      this.connectTimeout = positive(d);
      return this;
    }

    /** How long a sent request waits for its answer before {@code PMIX_ERR_TIMEOUT} (30 s). */
    @CanIgnoreReturnValue
    public Builder requestTimeout(Duration d) {
      this.requestTimeout = positive(d);
      return this;
    }

    /** The first delay between connection attempts (100 ms), doubling up to the maximum. */
    @CanIgnoreReturnValue
    public Builder retryDelay(Duration first, Duration max) {
      this.retryDelay = positive(first);
      this.maxRetryDelay = positive(max);
      checkArgument(first.compareTo(max) <= 0, "the first retry delay exceeds the maximum");
      return this;
    }

    /** The largest reply payload accepted. */
    @CanIgnoreReturnValue
    public Builder maxFrameBytes(int bytes) {
      checkArgument(bytes > 0, "maxFrameBytes must be positive: %s", bytes);
      this.maxFrameBytes = bytes;
      return this;
    }

    /** The logger (borrowed). */
    @CanIgnoreReturnValue
    public Builder logger(System.Logger log) {
      this.logger = requireNonNull(log, "log");
      return this;
    }

    /** The client; it starts connecting at once. */
    public DataServerClient build() {
      DataServerClient c = new DataServerClient(this);
      c.loop.execute(c::connect);
      return c;
    }

    private static Duration positive(Duration d) {
      requireNonNull(d, "d");
      checkArgument(!d.isNegative() && !d.isZero(), "must be positive: %s", d);
      return d;
    }
  }
}
