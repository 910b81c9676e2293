package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Event;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.IofDelivery;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectReply;
import io.pmix.common.internal.wire.ConnectReplyDecoder;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestEncoder;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.TagAllocator;
import io.pmix.common.internal.wire.Tags;
import io.pmix.common.internal.wire.ToolReply;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One init/finalize cycle of a connector (client or tool), minus what only one role does: its two
 * threads, its connection and handshake, its tag counter and the requests waiting for replies,
 * its event registrations, its I/O-forwarding sinks and its local data store, plus the requests
 * both roles send (get, query, log, event registration and notification, IOF). A role builds one
 * per cycle, composes it into its own state object and shuts it down at the last finalize, after
 * which nothing of it runs or holds anything ({@link #bookkeeping()} is all zeros).
 *
 * <p>Threading: every mutable field is confined to the progress thread (a single Netty event
 * loop); public operations hand their work to it and return a future, which completes on the
 * callback thread, so application code never runs on the progress thread. Roles add operations
 * with {@link #call}, {@link #request} and {@link #send}; the bodies they pass run on the progress
 * thread. No lock is held while application code runs.
 */
public final class ConnectorSession {
  private static final System.Logger LOG = System.getLogger(ConnectorSession.class.getName());

  /** How long the last finalize waits for the server's answer to FINALIZE, as C does. */
  public static final Duration FINALIZE_ACK_WAIT = Duration.ofSeconds(2);

  /** How long teardown waits for each of its threads to end. */
  private static final Duration THREAD_STOP_WAIT = Duration.ofSeconds(10);

  /** Largest reply accepted; C has no limit, so this only guards against a corrupt header. */
  private static final int MAX_PAYLOAD = 1 << 30;

  /** DEREGEVENTS code meaning "the default handler" (PMIX_MAX_ERR_CONSTANT = INT_MIN). */
  private static final Status DEFAULT_HANDLER_CODE = Status.of(Integer.MIN_VALUE);

  /** What a request waits for; both methods run on the progress thread. */
  public interface ReplyHandler {
    /** The reply arrived; a thrown exception is turned into {@link #onFailure}. */
    void onReply(PmixReader reply);

    /** The request failed (connection lost, finalized, malformed reply). */
    void onFailure(PmixException e);
  }

  /**
   * Where and how to connect.
   *
   * @param address the server
   * @param request the connect request to send (it fixes the connector's kind)
   * @param layout the layout of the server's reply
   * @param attempts how many TCP connects to try before giving up (at least 1)
   * @param retryDelay the pause between attempts
   */
  public record ConnectPlan(
      ServerAddress address,
      ConnectRequest request,
      ReplyLayout layout,
      int attempts,
      Duration retryDelay) {
    /** Checks the fields. */
    public ConnectPlan {
      requireNonNull(address, "address");
      requireNonNull(request, "request");
      requireNonNull(layout, "layout");
      requireNonNull(retryDelay, "retryDelay");
      if (attempts < 1) {
        throw new IllegalArgumentException("attempts must be at least 1");
      }
    }
  }

  private record Registration(long id, Set<Integer> codes, EventHandler handler) {}

  /** A get waiting for the server, and the gets of the same proc queued behind it. */
  private static final class GetQueue {
    final List<GetRequest> waiting = new ArrayList<>();
  }

  private record GetRequest(
      Proc proc, String key, List<Info> directives, CompletableFuture<Value> future) {}

  /** An IOF_PULL registration: where its output goes and the server's id for it. */
  private static final class IofSink {
    final Consumer<IofDelivery> sink;
    long serverId = -1;

    IofSink(Consumer<IofDelivery> sink) {
      this.sink = sink;
    }
  }

  private final Role role;
  private final String hostname;
  private final WireFormat format;
  private final List<Thread> threads = new CopyOnWriteArrayList<>();
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final ExecutorService callbacks;
  private final Messages messages;
  private final TagAllocator tags = new TagAllocator();

  // ---- written on the progress thread, read anywhere ----
  private volatile @Nullable Proc me;
  private volatile @Nullable PeerId server;
  private volatile boolean standalone;
  private volatile String standaloneReason = "there is no server";
  private volatile boolean terminated;

  // ---- confined to the progress thread ----
  private @Nullable Channel channel;
  private @Nullable ConnectorKind kind;
  private int pindex = -1;
  private boolean ready;
  private boolean finalizing;
  private @Nullable CompletableFuture<Void> initFuture;
  private @Nullable DataStore store;
  private final Map<Integer, ReplyHandler> pending = new HashMap<>();
  private final Map<Proc, GetQueue> gets = new HashMap<>();
  private final Map<Long, Registration> registrations = new LinkedHashMap<>();
  private final Map<Integer, Integer> serverCodes = new HashMap<>();
  private int serverDefaultHandlers;
  private long nextRegistrationId = 1;
  private final Map<Long, IofSink> iofSinks = new HashMap<>();
  private long nextIofId = 1;

  /**
   * Starts a session's threads; it is not connected yet ({@link #open} or {@link
   * #openStandalone}).
   *
   * @param role names the threads and the API in messages
   * @param format the payload format the session speaks
   * @param hostname this node's name as the server knows it
   */
  public ConnectorSession(Role role, WireFormat format, String hostname) {
    this.role = requireNonNull(role, "role");
    this.format = requireNonNull(format, "format");
    this.hostname = requireNonNull(hostname, "hostname");
    IoHandlerFactory io =
        Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, LibraryThreads.factory(role, role.progressThread(), threads::add), io);
    this.loop = group.next();
    this.callbacks =
        Executors.newSingleThreadExecutor(
            LibraryThreads.factory(role, role.callbackThread(), threads::add));
    this.messages = new Messages(format, ByteBufAllocator.DEFAULT);
  }

  /** The role this session belongs to. */
  public Role role() {
    return role;
  }

  /** This process's name, once the handshake (or {@link #openStandalone}) has fixed it. */
  public Proc me() {
    Proc p = me;
    if (p == null) {
      throw new IllegalStateException("not connected yet");
    }
    return p;
  }

  /** The server's name from a tool-layout handshake reply; empty for clients and standalone. */
  public Optional<PeerId> server() {
    return Optional.ofNullable(server);
  }

  /** Whether this cycle runs without a server (a singleton client, an unconnected tool). */
  public boolean isStandalone() {
    return standalone;
  }

  /** The request encoders, in this session's format. */
  public Messages messages() {
    return messages;
  }

  /** This node's name as given at construction. */
  public String hostname() {
    return hostname;
  }

  /** The threads this session started (for teardown checks). */
  public List<Thread> threads() {
    return List.copyOf(threads);
  }

  /**
   * The local data store. Progress thread only (inside {@link #call} bodies and reply handlers).
   *
   * @throws IllegalStateException before the session is open
   */
  public DataStore store() {
    DataStore s = store;
    if (s == null) {
      throw new IllegalStateException("no data store before the session is open");
    }
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  // Hand-off to the progress thread and back

  /** Runs {@code body} on the progress thread; its failures complete the future. */
  public <T> CompletableFuture<T> call(Consumer<CompletableFuture<T>> body) {
    CompletableFuture<T> f = new CompletableFuture<>();
    try {
      loop.execute(
          () -> {
            try {
              body.accept(f);
            } catch (RuntimeException e) {
              fail(f, e);
            }
          });
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(finalized(e));
    }
    return f;
  }

  /**
   * Runs {@code task} on the progress thread and returns at once.
   *
   * @throws PmixException with {@code ERR_INIT} after the last finalize
   */
  public void execute(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      throw finalized(e);
    }
  }

  private PmixException finalized(@Nullable Throwable cause) {
    return new PmixException(Status.ERR_INIT, role.api() + " has been finalized", cause);
  }

  /** Completes a future on the callback thread, so application code never runs on ours. */
  public <T> void complete(CompletableFuture<T> f, @Nullable T value) {
    try {
      callbacks.execute(() -> f.complete(value));
    } catch (RejectedExecutionException e) {
      f.complete(value);
    }
  }

  /** Fails a future on the callback thread. */
  public void fail(CompletableFuture<?> f, Throwable t) {
    try {
      callbacks.execute(() -> f.completeExceptionally(t));
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(t);
    }
  }

  /** Waits for {@code f} as {@link #await(CompletableFuture, Role, String)} with this role. */
  public <T> T await(CompletableFuture<T> f, String operation) {
    return await(f, role, operation);
  }

  /**
   * Waits for an operation's future and unwraps its failure: a PmixException or a caller mistake
   * is rethrown as it is.
   *
   * @throws IllegalStateException on one of {@code role}'s own threads
   */
  public static <T> T await(CompletableFuture<T> f, Role role, String operation) {
    LibraryThreads.checkMayBlock(role, operation);
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PmixException(Status.ERR_TIMEOUT, operation + " interrupted", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException r) {
        throw r;
      }
      throw new PmixException(Status.ERROR, operation + " failed", c);
    }
  }

  /**
   * Sends a request built on the progress thread; {@code decode} turns the reply into the result
   * (on the progress thread; a PmixException it throws fails the future).
   */
  public <T> CompletableFuture<T> request(
      Supplier<ByteBuf> body, Function<PmixReader, T> decode) {
    return call(f -> send(body.get(), replyTo(f, decode)));
  }

  /** A reply handler completing {@code f} with the decoded reply. */
  public <T> ReplyHandler replyTo(CompletableFuture<T> f, Function<PmixReader, T> decode) {
    return new ReplyHandler() {
      @Override
      public void onReply(PmixReader reply) {
        complete(f, decode.apply(reply));
      }

      @Override
      public void onFailure(PmixException e) {
        fail(f, e);
      }
    };
  }

  /** Decodes a status-only reply: null on success, else throws its status. */
  public static @Nullable Void statusOnly(PmixReader r, String what) {
    Messages.checkStatus(r, what);
    return null;
  }

  /** On the progress thread: frames {@code body} with a fresh tag and sends it. */
  public void send(ByteBuf body, ReplyHandler handler) {
    Channel ch = channel;
    if (ch == null || !ch.isActive()) {
      body.release();
      handler.onFailure(notConnected());
      return;
    }
    int tag = tags.allocate();
    pending.put(tag, handler);
    ChannelFuture wf = ch.writeAndFlush(new Frame(pindex, tag, body));
    wf.addListener(
        done -> {
          if (!done.isSuccess()) {
            ReplyHandler h = pending.remove(tag);
            tags.release(tag);
            if (h != null) {
              h.onFailure(
                  new PmixException(Status.ERR_LOST_CONNECTION, "send failed", done.cause()));
            }
          }
        });
  }

  private PmixException notConnected() {
    return standalone
        ? new PmixException(Status.ERR_UNREACH, standaloneReason)
        : new PmixException(Status.ERR_LOST_CONNECTION, "not connected");
  }

  /** On the progress thread: a request that has no reply (DEREGEVENTS). */
  public void sendOneWay(ByteBuf body) {
    Channel ch = channel;
    if (ch == null || !ch.isActive()) {
      body.release();
      return;
    }
    // It still consumes a tag, as in C, but nothing is posted for a reply.
    int tag = tags.allocate();
    tags.release(tag);
    ch.writeAndFlush(new Frame(pindex, tag, body)).addListener(LogFailure.INSTANCE);
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

  // ---------------------------------------------------------------------------------------------
  // Connect and init

  /**
   * Runs without a server: the identity is {@code me}, a data store exists (filled by {@code
   * describe}, on the progress thread) and every request fails with {@code ERR_UNREACH} and
   * {@code reason}.
   */
  public CompletableFuture<Void> openStandalone(
      Proc me, String reason, Consumer<DataStore> describe) {
    requireNonNull(me, "me");
    requireNonNull(reason, "reason");
    requireNonNull(describe, "describe");
    return call(
        f -> {
          this.me = me;
          standaloneReason = reason;
          standalone = true;
          DataStore s = new DataStore(me, hostname, format);
          store = s;
          describe.accept(s);
          ready = true;
          complete(f, null);
        });
  }

  /**
   * Connects as {@code plan} says, performs the handshake and the job-data request (REQ) and
   * completes when the data has arrived. The identity is the one in the connect request, or the
   * one the server assigns (flags 3 and 6). May be called again after a failure, for instance with
   * another server.
   *
   * @return a future failing with {@code ERR_UNREACH} if the server cannot be reached or refuses,
   *     {@code ERR_INIT} if the session was shut down meanwhile
   */
  public CompletableFuture<Void> open(ConnectPlan plan) {
    requireNonNull(plan, "plan");
    return call(
        f -> {
          if (ready || initFuture != null) {
            throw new IllegalStateException("the session is already open or opening");
          }
          // What a failed earlier attempt left: its socket may still be closing, and its close
          // must not fail this attempt (channelInactive ignores channels other than the current).
          Channel old = channel;
          if (old != null) {
            channel = null;
            failPending(new PmixException(Status.ERR_UNREACH, "connection attempt abandoned"));
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
        });
  }

  private void attemptConnect(ConnectPlan plan, int attempt) {
    ServerAddress addr = plan.address();
    Bootstrap b =
        new Bootstrap()
            .group(loop)
            .channel(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class)
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
                    loop.schedule(
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
      fail(f, e);
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
      Status s =
          reply instanceof ToolReply.Full full ? full.validationStatus() : reply.status();
      failInit(new PmixException(s, "the server refused the connection"));
      closeChannel();
      return;
    }
    if (reply instanceof ClientReply cr) {
      pindex = cr.index();
    } else if (reply instanceof ToolReply.Full tr) {
      server = tr.server();
      // Server-launched tools and singletons write 0xFFFFFFFF, other tools 0 (transport.md 5.3).
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
        messages.req(),
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            String nspace = r.unpackString();
            if (!self.nspace().equals(nspace)) {
              throw new PmixException(
                  Status.ERROR, "job data for namespace " + nspace + ", not " + self.nspace());
            }
            DataStore s = new DataStore(self, hostname, format);
            s.ingestJobData(nspace, r);
            store = s;
            ready = true;
            CompletableFuture<Void> f = initFuture;
            initFuture = null;
            if (f != null) {
              complete(f, null);
            }
          }

          @Override
          public void onFailure(PmixException e) {
            failInit(e);
            closeChannel();
          }
        });
  }

  private void closeChannel() {
    Channel ch = channel;
    if (ch != null) {
      var unused = ch.close();
    }
  }

  private void onFrame(Frame frame) {
    int tag = frame.tag();
    if (tag == Tags.NOTIFY) {
      try {
        onNotification(messages.reader(frame.payload()));
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "malformed event notification dropped", e);
      }
      return;
    }
    if (tag == Tags.IOF) {
      try {
        onIof(messages.reader(frame.payload()));
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "malformed forwarded output dropped", e);
      }
      return;
    }
    ReplyHandler h = pending.remove(tag);
    if (h == null) {
      // Unknown reserved tags (6.x additions) are ignored, as a newer peer may send them.
      LOG.log(
          Level.DEBUG,
          "message on tag {0} without a request; dropped",
          Integer.toUnsignedString(tag));
      return;
    }
    tags.release(tag);
    try {
      h.onReply(messages.reader(frame.payload()));
    } catch (PmixException e) {
      h.onFailure(e);
    } catch (RuntimeException e) {
      h.onFailure(new PmixException(Status.ERR_UNPACK_FAILURE, "malformed reply", e));
    }
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
            ? finalized(null)
            : new PmixException(
                Status.ERR_LOST_CONNECTION, "lost the connection to the PMIx server");
    failPending(lost);
    Proc self = me;
    if (wasReady && !finalizing && ch != null && self != null) {
      deliver(new Event(Status.ERR_LOST_CONNECTION, self, List.of(), Optional.empty()));
    }
  }

  /** Fails every request waiting for a reply and frees its tag. */
  private void failPending(PmixException e) {
    List<ReplyHandler> hs = new ArrayList<>(pending.values());
    for (Integer t : pending.keySet()) {
      tags.release(t);
    }
    pending.clear();
    for (ReplyHandler h : hs) {
      h.onFailure(e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Get

  /** Gets {@code key} of {@code proc}: from the local store when it can, else from the server. */
  public CompletableFuture<Value> get(Proc proc, String key, List<Info> directives) {
    requireNonNull(proc, "proc");
    requireNonNull(key, "key");
    List<Info> ds = List.copyOf(directives);
    return call(f -> resolve(new GetRequest(proc, key, ds, f)));
  }

  private void resolve(GetRequest g) {
    DataStore st = store();
    Proc self = me();
    DataStore.Lookup l = st.lookup(g.proc(), g.key(), g.directives());
    if (l instanceof DataStore.Lookup.Found found) {
      completeGet(g.future(), found.value());
      return;
    }
    if (l instanceof DataStore.Lookup.Absent
        || DataStore.flag(g.directives(), "pmix.optional")
        || standalone) {
      fail(g.future(), DataStore.notFound(g.proc(), g.key()));
      return;
    }
    boolean ownNspace = g.proc().nspace().equals(self.nspace());
    boolean reserved = DataStore.isReserved(g.key());
    if (ownNspace && g.proc().rank() == self.rank() && !reserved) {
      // Our own data is all here: asking the server would only wait for a commit of ourselves.
      fail(g.future(), DataStore.notFound(g.proc(), g.key()));
      return;
    }
    GetQueue q = gets.get(g.proc());
    if (q != null) {
      q.waiting.add(g);
      return;
    }
    q = new GetQueue();
    gets.put(g.proc(), q);
    List<Info> ds = g.directives();
    if (reserved && ownNspace && !DataStore.flag(ds, "pmix.immediate")) {
      // What the job data lacks the server answers at once or not at all (commands.md 6.3 step 5).
      ds = ImmutableList.<Info>builder().addAll(ds).add(Info.of("pmix.immediate", true)).build();
    }
    GetQueue queue = q;
    send(
        messages.get(g.proc(), ds, g.key()),
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            Status s = Messages.status(r);
            if (s.isSuccess()) {
              while (r.hasRemaining()) {
                st.ingestGetBlob(r.unpackOne(DataType.BYTE_OBJECT).asBytes(), g.proc());
              }
            }
            finishGet(
                g,
                queue,
                s.isSuccess() ? null : new PmixException(s, "get " + g.key() + " of " + g.proc()));
          }

          @Override
          public void onFailure(PmixException e) {
            finishGet(g, queue, e);
          }
        });
  }

  /** Hands a found value to the caller, a compressed string expanded as C's get does. */
  private void completeGet(CompletableFuture<Value> future, Value value) {
    Value v;
    try {
      v = CompressedStrings.expand(value);
    } catch (PmixException e) {
      fail(future, e);
      return;
    }
    complete(future, v);
  }

  private void finishGet(GetRequest leader, GetQueue queue, @Nullable PmixException failure) {
    gets.remove(leader.proc(), queue);
    DataStore st = store;
    if (failure != null) {
      fail(leader.future(), failure);
    } else if (st != null
        && st.lookup(leader.proc(), leader.key(), leader.directives())
            instanceof DataStore.Lookup.Found found) {
      completeGet(leader.future(), found.value());
    } else {
      fail(leader.future(), DataStore.notFound(leader.proc(), leader.key()));
    }
    for (GetRequest g : queue.waiting) {
      if (failure != null
          && (failure.status().equals(Status.ERR_LOST_CONNECTION)
              || failure.status().equals(Status.ERR_INIT))) {
        fail(g.future(), failure);
      } else {
        resolve(g);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  /** Registers a handler for {@code codes} (every event when empty); completes with its id. */
  public CompletableFuture<Long> registerEventHandler(
      Collection<Status> codes, EventHandler handler, List<Info> directives) {
    requireNonNull(codes, "codes");
    requireNonNull(handler, "handler");
    Set<Integer> cs = new LinkedHashSet<>();
    for (Status s : codes) {
      cs.add(s.code());
    }
    List<Info> ds = List.copyOf(directives);
    return call(
        f -> {
          long id = nextRegistrationId++;
          Registration reg = new Registration(id, Set.copyOf(cs), handler);
          boolean news = cs.isEmpty() && serverDefaultHandlers == 0;
          for (int c : cs) {
            news |= !serverCodes.containsKey(c);
          }
          // Registered before the server answers: it may push cached events right away.
          registrations.put(id, reg);
          count(reg, +1);
          if (standalone || (!news && ds.isEmpty())) {
            complete(f, id);
            return;
          }
          List<Status> list = new ArrayList<>();
          for (int c : cs) {
            list.add(Status.of(c));
          }
          send(
              messages.registerEvents(list, ds),
              new ReplyHandler() {
                @Override
                public void onReply(PmixReader r) {
                  Status s = Messages.status(r);
                  if (s.isSuccess()) {
                    complete(f, id);
                  } else {
                    unregister(id, false);
                    fail(f, new PmixException(s, "event registration"));
                  }
                }

                @Override
                public void onFailure(PmixException e) {
                  unregister(id, false);
                  fail(f, e);
                }
              });
        });
  }

  private void count(Registration reg, int delta) {
    if (reg.codes().isEmpty()) {
      serverDefaultHandlers += delta;
      return;
    }
    for (int c : reg.codes()) {
      int n = serverCodes.getOrDefault(c, 0) + delta;
      if (n <= 0) {
        serverCodes.remove(c);
      } else {
        serverCodes.put(c, n);
      }
    }
  }

  /** Removes a registration; tells the server about codes nobody listens to any more. */
  public CompletableFuture<Void> deregisterEventHandler(long id) {
    return call(
        f -> {
          if (!registrations.containsKey(id)) {
            fail(f, new PmixException(Status.ERR_NOT_FOUND, "no event handler " + id));
            return;
          }
          unregister(id, true);
          complete(f, null);
        });
  }

  private void unregister(long id, boolean tellServer) {
    Registration reg = registrations.remove(id);
    if (reg == null) {
      return;
    }
    count(reg, -1);
    if (!tellServer || standalone) {
      return;
    }
    List<Status> gone = new ArrayList<>();
    if (reg.codes().isEmpty()) {
      if (serverDefaultHandlers == 0) {
        gone.add(DEFAULT_HANDLER_CODE);
      }
    } else {
      for (int c : reg.codes()) {
        if (!serverCodes.containsKey(c)) {
          gone.add(Status.of(c));
        }
      }
    }
    if (!gone.isEmpty()) {
      sendOneWay(messages.deregisterEvents(gone));
    }
  }

  /**
   * Raises an event: to the server unless the range is this process only, and to this process's
   * own matching handlers (the server does not echo it back).
   */
  public CompletableFuture<Void> notifyEvent(Status code, DataRange range, List<Info> info) {
    requireNonNull(code, "code");
    requireNonNull(range, "range");
    List<Info> is = List.copyOf(info);
    return call(
        f -> {
          Event local = new Event(code, me(), is, Optional.of(range));
          if (range == DataRange.PROC_LOCAL || standalone) {
            deliver(local);
            complete(f, null);
            return;
          }
          send(
              messages.notify(code, range, is),
              new ReplyHandler() {
                @Override
                public void onReply(PmixReader r) {
                  Status s = Messages.status(r);
                  if (!s.isSuccess()) {
                    fail(f, new PmixException(s, "notify"));
                    return;
                  }
                  deliver(local);
                  complete(f, null);
                }

                @Override
                public void onFailure(PmixException e) {
                  fail(f, e);
                }
              });
        });
  }

  /** The server's push on tag 0: COMMAND, code, source, infos and (4.2.2+) the range. */
  private void onNotification(PmixReader r) {
    int cmd = r.unpackByteEnum(DataType.COMMAND);
    if (cmd != Command.NOTIFY.code()) {
      LOG.log(Level.DEBUG, "tag-0 message with command {0} ignored", cmd);
      return;
    }
    Status code = r.unpackStatus();
    Proc source = r.unpackProc();
    long n = r.unpackSize();
    List<Info> info = n > 0 ? r.unpackInfos(Integer.MAX_VALUE) : List.of();
    Optional<DataRange> range = Optional.empty();
    if (r.hasRemaining()) {
      range = DataRange.fromCode(r.unpackByteEnum(DataType.DATA_RANGE));
    }
    deliver(new Event(code, source, info, range));
  }

  /** Hands an event to every matching handler, on the callback thread. */
  private void deliver(Event e) {
    List<EventHandler> specific = new ArrayList<>();
    List<EventHandler> fallback = new ArrayList<>();
    for (Registration reg : registrations.values()) {
      if (reg.codes().isEmpty()) {
        fallback.add(reg.handler());
      } else if (reg.codes().contains(e.status().code())) {
        specific.add(reg.handler());
      }
    }
    specific.addAll(fallback);
    if (specific.isEmpty()) {
      return;
    }
    try {
      callbacks.execute(
          () -> {
            for (EventHandler h : specific) {
              try {
                h.onEvent(e);
              } catch (RuntimeException ex) {
                LOG.log(Level.WARNING, "event handler threw; continuing", ex);
              }
            }
          });
    } catch (RejectedExecutionException ex) {
      // Finalizing: events are no longer delivered.
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Query, log

  /** Asks the server the queries; completes with one info per answered key. */
  public CompletableFuture<List<Info>> query(List<Value.Query> queries) {
    List<Value.Query> qs = List.copyOf(queries);
    return request(
        () -> messages.query(qs),
        r -> {
          Status s = Messages.status(r);
          if (!s.isSuccess() && !s.equals(Status.QUERY_PARTIAL_SUCCESS)) {
            throw new PmixException(s, "query");
          }
          return List.copyOf(Messages.infoArray(r));
        });
  }

  /** Sends log data to the server. */
  public CompletableFuture<Void> log(List<Info> data, List<Info> directives) {
    List<Info> d = List.copyOf(data);
    List<Info> ds = List.copyOf(directives);
    if (d.isEmpty()) {
      throw new IllegalArgumentException("nothing to log");
    }
    return request(() -> messages.log(d, ds), r -> statusOnly(r, "log"));
  }

  // ---------------------------------------------------------------------------------------------
  // Spawn, connect, disconnect

  /**
   * Asks the server (and its host) to start a job; completes with its namespace. The apps are
   * first completed as {@code PMIx_Spawn_nb} of 4.2.2 completes them (see {@link #fillApp}). The
   * new job's data in the reply goes to the store, so gets of it are local.
   *
   * @throws IllegalArgumentException if there is no app, or an app has no command
   */
  public CompletableFuture<String> spawn(List<Value.App> apps, List<Info> jobInfo) {
    if (apps.isEmpty()) {
      throw new IllegalArgumentException("nothing to spawn");
    }
    String cwd = System.getProperty("user.dir");
    List<Value.App> filled = new ArrayList<>();
    for (Value.App a : apps) {
      filled.add(fillApp(requireNonNull(a, "app"), cwd));
    }
    List<Info> ji = List.copyOf(jobInfo);
    return request(
        () -> messages.spawn(ji, filled),
        r -> {
          Messages.checkStatus(r, "spawn");
          String nspace = r.hasRemaining() ? r.unpackString() : null;
          if (nspace == null || nspace.isEmpty()) {
            throw new PmixException(Status.ERR_BAD_PARAM, "spawn reply without a namespace");
          }
          store().ingestJobData(nspace, r);
          return nspace;
        });
  }

  /**
   * What the 4.2.2 client does to an app before packing it: a missing working directory becomes
   * {@code cwd}; an empty argv becomes the basename of the command; an argv whose first element's
   * basename differs from the command's gets the command's basename prepended. (The C client also
   * expands {@code pmix.setup.env} through its programming-model plugins; that is not done here.)
   *
   * @throws IllegalArgumentException if the app has no command (C refuses an app with neither
   *     command nor argv; one with argv only crashes it)
   */
  static Value.App fillApp(Value.App a, String cwd) {
    String cmd = a.cmd();
    if (cmd == null || cmd.isEmpty()) {
      throw new IllegalArgumentException("an app needs a command");
    }
    String base = basename(cmd);
    List<String> argv;
    if (a.argv().isEmpty()) {
      argv = List.of(base);
    } else if (!basename(a.argv().get(0)).equals(base)) {
      argv = ImmutableList.<String>builder().add(base).addAll(a.argv()).build();
    } else {
      argv = a.argv();
    }
    return new Value.App(cmd, argv, a.env(), a.cwd() == null ? cwd : a.cwd(), a.maxprocs(), a.info());
  }

  /** The last path element, trailing slashes ignored, as {@code pmix_basename} gives it. */
  static String basename(String path) {
    String p = path;
    while (p.length() > 1 && p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    int i = p.lastIndexOf('/');
    return i < 0 || p.length() == 1 ? p : p.substring(i + 1);
  }

  /**
   * CONNECTNB over {@code procs}: completes once every participant has connected (a collective
   * the server and its host run). The reply carries the job data of the other namespaces among
   * the server's local participants, which goes to the store so their job keys are local gets;
   * this is read even when the status is an error, as C does, and the status decides.
   *
   * @throws IllegalArgumentException if {@code procs} is empty (C: PMIX_ERR_BAD_PARAM)
   */
  public CompletableFuture<Void> connect(List<Proc> procs, List<Info> directives) {
    List<Proc> ps = List.copyOf(procs);
    List<Info> ds = List.copyOf(directives);
    if (ps.isEmpty()) {
      throw new IllegalArgumentException("connect needs at least one proc");
    }
    return request(
        () -> messages.connect(Command.CONNECTNB, ps, ds),
        r -> {
          Status s = Messages.status(r);
          Messages.connectBlobs(r, store(), messages.format());
          if (!s.isSuccess()) {
            throw new PmixException(s, "connect");
          }
          return null;
        });
  }

  /**
   * DISCONNECTNB over {@code procs}. As the 4.2.2 client does before it sends anything, the job
   * and process data held for every other namespace named in {@code procs} is dropped.
   *
   * @throws IllegalArgumentException if {@code procs} is empty (C: PMIX_ERR_BAD_PARAM)
   */
  public CompletableFuture<Void> disconnect(List<Proc> procs, List<Info> directives) {
    List<Proc> ps = List.copyOf(procs);
    List<Info> ds = List.copyOf(directives);
    if (ps.isEmpty()) {
      throw new IllegalArgumentException("disconnect needs at least one proc");
    }
    return request(
        () -> {
          for (Proc p : ps) {
            store().forgetNamespace(p.nspace());
          }
          return messages.connect(Command.DISCONNECTNB, ps, ds);
        },
        r -> {
          Status s = Messages.status(r);
          Messages.connectBlobs(r, store(), messages.format());
          if (!s.isSuccess()) {
            throw new PmixException(s, "disconnect");
          }
          return null;
        });
  }

  // ---------------------------------------------------------------------------------------------
  // I/O forwarding

  /**
   * Asks the server to forward the output of {@code sources} on {@code channels} (a bit mask) to
   * {@code sink}, which then runs on the callback thread for each piece, in order. Completes with
   * the registration's local id, for {@link #iofDeregister}.
   */
  public CompletableFuture<Long> iofPull(
      List<Proc> sources, int channels, List<Info> directives, Consumer<IofDelivery> sink) {
    List<Proc> ps = List.copyOf(sources);
    List<Info> ds = List.copyOf(directives);
    requireNonNull(sink, "sink");
    if (ps.isEmpty()) {
      throw new IllegalArgumentException("no processes to forward output from");
    }
    return call(
        f -> {
          long localId = nextIofId++;
          IofSink s = new IofSink(sink);
          // Registered before the request: the server may push output right after its reply.
          iofSinks.put(localId, s);
          send(
              messages.iofPull(ps, ds, channels, localId),
              new ReplyHandler() {
                @Override
                public void onReply(PmixReader r) {
                  Status st = Messages.status(r);
                  if (!st.isSuccess()) {
                    iofSinks.remove(localId);
                    fail(f, new PmixException(st, "IOF pull"));
                    return;
                  }
                  s.serverId = Messages.iofServerId(r);
                  complete(f, localId);
                }

                @Override
                public void onFailure(PmixException e) {
                  iofSinks.remove(localId);
                  fail(f, e);
                }
              });
        });
  }

  /** Ends an IOF registration: no more output reaches its sink, and the server is told. */
  public CompletableFuture<Void> iofDeregister(long localId, List<Info> directives) {
    List<Info> ds = List.copyOf(directives);
    return call(
        f -> {
          IofSink s = iofSinks.remove(localId);
          if (s == null) {
            fail(f, new PmixException(Status.ERR_NOT_FOUND, "no IOF registration " + localId));
            return;
          }
          send(
              messages.iofDeregister(ds, s.serverId),
              replyTo(f, r -> statusOnly(r, "IOF deregister")));
        });
  }

  /** Sends {@code data} (null: end of input) to the standard input of {@code targets}. */
  public CompletableFuture<Void> iofPush(
      List<Proc> targets, byte @Nullable [] data, List<Info> directives) {
    List<Proc> ts = List.copyOf(targets);
    List<Info> ds = List.copyOf(directives);
    byte[] copy = data == null ? null : data.clone();
    return request(() -> messages.iofPush(ts, ds, copy), r -> statusOnly(r, "IOF push"));
  }

  private void onIof(PmixReader r) {
    IofDelivery c = Messages.iofChunk(r);
    IofSink s = iofSinks.get(c.localId());
    if (s == null) {
      LOG.log(Level.DEBUG, "forwarded output for unknown registration {0} dropped", c.localId());
      return;
    }
    try {
      callbacks.execute(
          () -> {
            try {
              s.sink.accept(c);
            } catch (RuntimeException ex) {
              LOG.log(Level.WARNING, "IOF handler threw; continuing", ex);
            }
          });
    } catch (RejectedExecutionException ex) {
      // Finalizing: output is no longer delivered.
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Teardown

  /**
   * Ends the cycle: FINALIZE and its answer (at most {@link #FINALIZE_ACK_WAIT}; skipped when
   * standalone or never connected), then the socket is closed, pending work fails with {@code
   * ERR_INIT}, both threads are stopped and waited for, and every registration, sink, queue and
   * the data store are dropped. Always leaves nothing running, even when a step fails. Must not be
   * called on this session's threads.
   */
  public void shutdown() {
    try {
      CompletableFuture<Void> fin =
          call(
              f -> {
                if (!ready || standalone || channel == null) {
                  complete(f, null);
                  return;
                }
                send(messages.finalizeRequest(), replyTo(f, r -> statusOnly(r, "finalize")));
              });
      try {
        fin.get(FINALIZE_ACK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException | ExecutionException e) {
        LOG.log(Level.DEBUG, "no clean FINALIZE acknowledgement", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      CompletableFuture<Void> closed =
          call(
              f -> {
                finalizing = true;
                Channel ch = channel;
                if (ch == null) {
                  onConnectionLost();
                  f.complete(null);
                  return;
                }
                // channelInactive fails whatever is still pending, with ERR_INIT.
                ch.close().addListener(x -> f.complete(null));
              });
      try {
        closed.get(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException | ExecutionException e) {
        LOG.log(Level.WARNING, "closing the PMIx connection failed", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    } finally {
      stopThreads();
    }
  }

  /**
   * Stops both threads, waits until they have ended, then drops everything the cycle held. Also
   * used when an init fails: nothing is left running then either.
   */
  public void stopThreads() {
    group
        .shutdownGracefully(0, 0, TimeUnit.SECONDS)
        .awaitUninterruptibly(THREAD_STOP_WAIT.toMillis());
    callbacks.shutdown();
    boolean interrupted = false;
    try {
      if (!callbacks.awaitTermination(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        callbacks.shutdownNow();
      }
    } catch (InterruptedException e) {
      interrupted = true;
    }
    for (Thread t : threads) {
      try {
        t.join(THREAD_STOP_WAIT.toMillis());
      } catch (InterruptedException e) {
        interrupted = true;
      }
      if (t.isAlive()) {
        LOG.log(Level.WARNING, "PMIx thread {0} did not stop", t.getName());
      }
    }
    // The progress thread has ended (joined above): its fields may be touched from here.
    releaseAll();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void releaseAll() {
    terminated = true;
    // Shutting the event loop down closed every channel registered with it.
    channel = null;
    pending.clear();
    gets.clear();
    registrations.clear();
    serverCodes.clear();
    serverDefaultHandlers = 0;
    iofSinks.clear();
    initFuture = null;
    DataStore s = store;
    store = null;
    if (s != null) {
      s.clear();
    }
    ready = false;
  }

  /**
   * Every resource and collection of the cycle with its size (or 1/0 for a resource held or not).
   * After {@link #shutdown} all are 0: the shared teardown contract checks that. Answered on the
   * progress thread while it runs, directly once it has stopped.
   */
  public Map<String, Long> bookkeeping() {
    return bookkeeping(m -> {});
  }

  /**
   * As {@link #bookkeeping()}, with the role's own entries added by {@code more}, which runs where
   * the session's entries are read (on the progress thread while it runs), so a role's
   * progress-thread-confined collections are read safely too.
   */
  public Map<String, Long> bookkeeping(Consumer<Map<String, Long>> more) {
    requireNonNull(more, "more");
    if (!terminated && !loop.inEventLoop()) {
      CompletableFuture<Map<String, Long>> f = new CompletableFuture<>();
      try {
        loop.execute(() -> f.complete(bookkeepingNow(more)));
        return f.get(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
        // Stopping meanwhile: fall through to a direct read.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return bookkeepingNow(more);
  }

  /**
   * The objects this cycle owns, by name: the event loop group and its loop, the callback
   * executor, each thread, and the connection's channel and the data store while they exist. For
   * tests that hold them weakly across many cycles and check that nothing keeps a finished cycle
   * reachable (a static registry, a listener left on a global, a thread-local of a dead thread).
   * Answered on the progress thread while it runs, directly once it has stopped.
   */
  public Map<String, Object> resources() {
    if (!terminated && !loop.inEventLoop()) {
      CompletableFuture<Map<String, Object>> f = new CompletableFuture<>();
      try {
        loop.execute(() -> f.complete(resourcesNow()));
        return f.get(THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
        // Stopping meanwhile: fall through to a direct read.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return resourcesNow();
  }

  private Map<String, Object> resourcesNow() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("eventLoopGroup", group);
    m.put("eventLoop", loop);
    m.put("callbackExecutor", callbacks);
    for (Thread t : threads) {
      m.put("thread " + t.getName(), t);
    }
    Channel ch = channel;
    if (ch != null) {
      m.put("channel", ch);
    }
    DataStore s = store;
    if (s != null) {
      m.put("dataStore", s);
    }
    return m;
  }

  private Map<String, Long> bookkeepingNow(Consumer<Map<String, Long>> more) {
    Map<String, Long> m = new LinkedHashMap<>();
    long alive = threads.stream().filter(Thread::isAlive).count();
    m.put("session.threadsAlive", alive);
    m.put("session.eventLoopRunning", group.isTerminated() ? 0L : 1L);
    m.put("session.callbackExecutorRunning", callbacks.isTerminated() ? 0L : 1L);
    Channel ch = channel;
    m.put("session.connection", ch != null && ch.isOpen() ? 1L : 0L);
    m.put("session.pendingReplies", (long) pending.size());
    m.put("session.outstandingTags", (long) tags.outstandingCount());
    m.put("session.queuedGets", (long) gets.size());
    m.put("session.eventRegistrations", (long) registrations.size());
    m.put("session.serverEventCodes", (long) serverCodes.size() + serverDefaultHandlers);
    m.put("session.iofSinks", (long) iofSinks.size());
    DataStore s = store;
    m.put("session.peerStore", s == null ? 0L : 1L + s.size());
    m.put("session.initInProgress", initFuture != null ? 1L : 0L);
    more.accept(m);
    return m;
  }
}
