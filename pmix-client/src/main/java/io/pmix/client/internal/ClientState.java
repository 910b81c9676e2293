package io.pmix.client.internal;

import static java.util.Objects.requireNonNull;

import com.google.common.base.CharMatcher;
import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
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
import io.pmix.client.Event;
import io.pmix.client.EventHandler;
import io.pmix.client.internal.ClientEnvironment.ServerAddress;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
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
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.TagAllocator;
import io.pmix.common.internal.wire.Tags;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Everything one init/finalize cycle of the client owns: its identity, its two threads, its
 * connection, its tag counter, its data cache, its pending requests and its event registrations.
 * The first {@code PMIx.init} builds one, the last {@code PMIx.finalize} shuts it down and drops
 * it, so nothing of a cycle can leak into the next (init-finalize-lifecycle.txt section 6.2.8).
 *
 * <p>Threading: every mutable field is confined to the progress thread (the single Netty event
 * loop); public operations hand their work to it and return a future, which completes on the
 * callback thread. No lock is held while application code runs.
 */
public final class ClientState {
  private static final System.Logger LOG = System.getLogger(ClientState.class.getName());

  /** How long the last finalize waits for the server's answer to FINALIZE, as C does. */
  static final Duration FINALIZE_ACK_WAIT = Duration.ofSeconds(2);

  /** How long teardown waits for each of its threads to end. */
  private static final Duration THREAD_STOP_WAIT = Duration.ofSeconds(10);

  /** Largest reply accepted; C has no limit, so this only guards against a corrupt header. */
  private static final int MAX_PAYLOAD = 1 << 30;

  /** C retries a refused connect ten times; we wait a little between tries. */
  private static final int CONNECT_ATTEMPTS = 10;

  private static final long CONNECT_RETRY_MILLIS = 100;

  /** DEREGEVENTS code meaning "the default handler" (PMIX_MAX_ERR_CONSTANT = INT_MIN). */
  private static final Status DEFAULT_HANDLER_CODE = Status.of(Integer.MIN_VALUE);

  private final ClientEnvironment env;
  private final Proc me;
  private final boolean singleton;
  private final int uid;
  private final int gid;
  private final List<Thread> threads = new CopyOnWriteArrayList<>();
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final ExecutorService callbacks;
  private final Messages messages;
  private final DataStore store;
  private final TagAllocator tags = new TagAllocator();

  // ---- confined to the progress thread ----
  private @Nullable Channel channel;
  private int pindex = -1;
  private boolean ready;
  private boolean finalizing;
  private @Nullable CompletableFuture<Void> initFuture;
  private final Map<Integer, ReplyHandler> pending = new HashMap<>();
  private final Map<String, Value> commitLocal = new LinkedHashMap<>();
  private final Map<String, Value> commitRemote = new LinkedHashMap<>();
  private final Map<Proc, GetQueue> gets = new HashMap<>();
  private final Map<Long, Registration> registrations = new LinkedHashMap<>();
  private final Map<Integer, Integer> serverCodes = new HashMap<>();
  private int serverDefaultHandlers;
  private long nextRegistrationId = 1;

  /** What a request waits for. */
  private interface ReplyHandler {
    void onReply(PmixReader reply);

    void onFailure(PmixException e);
  }

  private record Registration(long id, Set<Integer> codes, EventHandler handler) {}

  /** A get waiting for the server, and the gets of the same proc queued behind it. */
  private static final class GetQueue {
    final List<GetRequest> waiting = new ArrayList<>();
  }

  private record GetRequest(
      Proc proc, String key, List<Info> directives, CompletableFuture<Value> future) {}

  private ClientState(ClientEnvironment env, Proc me, boolean singleton) {
    this.env = env;
    this.me = me;
    this.singleton = singleton;
    int[] ids = effectiveIds();
    this.uid = ids[0];
    this.gid = ids[1];
    IoHandlerFactory io = Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    this.group = new MultiThreadIoEventLoopGroup(1, recording(ClientThreads.PROGRESS), io);
    this.loop = group.next();
    this.callbacks = Executors.newSingleThreadExecutor(recording(ClientThreads.CALLBACK));
    WireFormat format = WireFormat.of(env.bufferType());
    this.messages = new Messages(format, ByteBufAllocator.DEFAULT);
    this.store = new DataStore(me, env.hostname(), format);
  }

  private java.util.concurrent.ThreadFactory recording(String name) {
    java.util.concurrent.ThreadFactory f = ClientThreads.named(name);
    return r -> {
      Thread t = f.newThread(r);
      threads.add(t);
      return t;
    };
  }

  /**
   * Builds a client state from {@code environment} and connects it (or sets it up as a singleton
   * when the environment names no server). Blocks until the server has answered the job-data
   * request.
   *
   * @throws PmixException with the reason the connection failed; nothing is left running then
   */
  static ClientState start(Map<String, String> environment, List<Info> directives) {
    ClientEnvironment env = ClientEnvironment.parse(environment);
    boolean singleton = env.server().isEmpty();
    Proc me =
        singleton
            ? Proc.of("singleton." + env.hostname() + "." + ProcessHandle.current().pid(), 0)
            : Proc.of(env.nspace().orElseThrow(), env.rank());
    ClientState s = new ClientState(env, me, singleton);
    try {
      await(s.call(s::connect), "init");
    } catch (RuntimeException e) {
      s.stopThreads();
      throw e;
    }
    return s;
  }

  /** This process. */
  public Proc me() {
    return me;
  }

  /** Whether this cycle runs without a server. */
  public boolean isSingleton() {
    return singleton;
  }

  /** The environment this cycle was built from. */
  public ClientEnvironment environment() {
    return env;
  }

  /** The threads this cycle started (for teardown checks). */
  public List<Thread> threads() {
    return List.copyOf(threads);
  }

  // ---------------------------------------------------------------------------------------------
  // Hand-off to the progress thread and back

  /** Runs {@code body} on the progress thread; its failures complete the future. */
  <T> CompletableFuture<T> call(java.util.function.Consumer<CompletableFuture<T>> body) {
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
      f.completeExceptionally(new PmixException(Status.ERR_INIT, "PMIx has been finalized", e));
    }
    return f;
  }

  /** Completes a future on the callback thread, so application code never runs on ours. */
  private <T> void complete(CompletableFuture<T> f, @Nullable T value) {
    try {
      callbacks.execute(() -> f.complete(value));
    } catch (RejectedExecutionException e) {
      f.complete(value);
    }
  }

  private void fail(CompletableFuture<?> f, Throwable t) {
    try {
      callbacks.execute(() -> f.completeExceptionally(t));
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(t);
    }
  }

  /**
   * Waits for an operation's future and unwraps its failure: a PmixException or a caller mistake
   * is rethrown as it is.
   */
  public static <T> T await(CompletableFuture<T> f, String operation) {
    ClientThreads.checkMayBlock(operation);
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

  /** Sends a request on the progress thread; {@code decode} turns the reply into the result. */
  private <T> CompletableFuture<T> request(
      java.util.function.Supplier<ByteBuf> body, Function<PmixReader, T> decode) {
    return call(f -> send(body.get(), replyTo(f, decode)));
  }

  private <T> ReplyHandler replyTo(CompletableFuture<T> f, Function<PmixReader, T> decode) {
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

  /** On the progress thread: frames {@code body} with a fresh tag and sends it. */
  private void send(ByteBuf body, ReplyHandler handler) {
    Channel ch = channel;
    if (ch == null || !ch.isActive()) {
      body.release();
      handler.onFailure(
          new PmixException(
              singleton ? Status.ERR_UNREACH : Status.ERR_LOST_CONNECTION,
              singleton ? "running as a singleton: there is no server" : "not connected"));
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

  /** On the progress thread: a request that has no reply (DEREGEVENTS). */
  private void sendOneWay(ByteBuf body) {
    Channel ch = channel;
    if (ch == null || !ch.isActive()) {
      body.release();
      return;
    }
    // It still consumes a tag, as in C, but nothing is posted for a reply.
    int tag = tags.allocate();
    tags.release(tag);
    ch.writeAndFlush(new Frame(pindex, tag, body)).addListener(ChannelFutureListenerLog.INSTANCE);
  }

  /** Logs a failed one-way write; nobody waits for it. */
  private enum ChannelFutureListenerLog implements io.netty.channel.ChannelFutureListener {
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

  private void connect(CompletableFuture<Void> done) {
    if (singleton) {
      store.describeSingleton(env.hostname());
      ready = true;
      complete(done, null);
      return;
    }
    initFuture = done;
    attemptConnect(env.server().orElseThrow(), 1);
  }

  private void attemptConnect(ServerAddress addr, int attempt) {
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
                            new ConnectReplyDecoder(ReplyLayout.CLIENT),
                            new FrameDecoder(MAX_PAYLOAD),
                            ConnectRequestEncoder.INSTANCE,
                            FrameEncoder.INSTANCE,
                            new Handler());
                  }
                });
    b.connect(addr.host(), addr.port())
        .addListener(
            (ChannelFuture f) -> {
              if (f.isSuccess()) {
                return;
              }
              if (attempt < CONNECT_ATTEMPTS && !finalizing) {
                var unused =
                    loop.schedule(
                    () -> attemptConnect(addr, attempt + 1),
                    CONNECT_RETRY_MILLIS,
                    TimeUnit.MILLISECONDS);
              } else {
                failInit(
                    new PmixException(
                        Status.ERR_UNREACH,
                        "cannot connect to the PMIx server at "
                            + addr.host()
                            + ":"
                            + addr.port(),
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

  private ConnectRequest connectRequest(ServerAddress addr) {
    byte[] credential =
        env.psecModule().equals(NativeCredential.MODULE)
            ? new NativeCredential(uid, gid).toBytes()
            : new byte[0];
    return ConnectRequest.builder()
        .security(env.psecModule(), credential)
        .kind(ConnectorKind.SIMPLE_CLIENT)
        .procId(me.nspace(), me.rank())
        .bfropsModule(addr.bfropsModule())
        .bufferType(env.bufferType().code())
        .gdsModule("hash")
        .build();
  }

  /** The connection's inbound side; lives on the progress thread. */
  private final class Handler extends ChannelInboundHandlerAdapter {
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      channel = ctx.channel();
      ctx.writeAndFlush(connectRequest(env.server().orElseThrow()))
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
      if (msg instanceof ConnectReply reply) {
        onConnectReply(reply);
      } else if (msg instanceof Frame frame) {
        try {
          onFrame(frame);
        } finally {
          frame.release();
        }
      } else {
        io.netty.util.ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      onConnectionLost();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // A corrupt stream cannot be resynchronised: drop the connection, as C does.
      LOG.log(Level.WARNING, "PMIx connection failed; closing it", cause);
      var unused = ctx.close();
    }
  }

  private void onConnectReply(ConnectReply reply) {
    if (!(reply instanceof ClientReply cr) || !cr.isSuccess()) {
      // A 4.2.2 server never sends a non-zero status to a client; later ones may. Either way: fail.
      failInit(new PmixException(reply.status(), "the server refused the connection"));
      if (channel != null) {
        var unused = channel.close();
      }
      return;
    }
    pindex = cr.index();
    send(
        messages.req(),
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            String nspace = r.unpackString();
            if (!me.nspace().equals(nspace)) {
              throw new PmixException(
                  Status.ERROR, "job data for namespace " + nspace + ", not " + me.nspace());
            }
            store.ingestJobData(nspace, r);
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
            if (channel != null) {
              var unused = channel.close();
            }
          }
        });
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
    ReplyHandler h = pending.remove(tag);
    if (h == null) {
      // Unknown reserved tags (IOF, 6.x additions) are ignored, as a newer peer may send them.
      LOG.log(Level.DEBUG, "message on tag {0} without a request; dropped", Integer.toUnsignedString(tag));
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
    failInit(new PmixException(Status.ERR_UNREACH, "the server closed the connection during init"));
    PmixException lost =
        new PmixException(
            finalizing ? Status.ERR_INIT : Status.ERR_LOST_CONNECTION,
            finalizing ? "PMIx has been finalized" : "lost the connection to the PMIx server");
    List<ReplyHandler> hs = new ArrayList<>(pending.values());
    for (Integer t : pending.keySet()) {
      tags.release(t);
    }
    pending.clear();
    for (ReplyHandler h : hs) {
      h.onFailure(lost);
    }
    if (wasReady && !finalizing && ch != null) {
      deliver(new Event(Status.ERR_LOST_CONNECTION, me, List.of(), java.util.Optional.empty()));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Put, commit, fence, get

  /**
   * Records a value: at once in the own store (a get sees it), and for the next commit in the
   * sections its scope reaches. Reserved keys stay local, as in C.
   */
  public void put(Scope scope, String key, Value value) {
    requireNonNull(scope, "scope");
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    if (scope == Scope.UNDEF) {
      throw new IllegalArgumentException("a put needs a scope");
    }
    if (key.isEmpty() || key.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > Info.MAX_KEYLEN) {
      throw new IllegalArgumentException("key must have 1 to " + Info.MAX_KEYLEN + " bytes");
    }
    try {
      loop.execute(
          () -> {
            store.putOwn(key, value);
            if (scope == Scope.INTERNAL || DataStore.isReserved(key)) {
              return;
            }
            if (scope.reachesLocal()) {
              commitLocal.put(key, value);
            }
            if (scope.reachesRemote()) {
              commitRemote.put(key, value);
            }
          });
    } catch (RejectedExecutionException e) {
      throw new PmixException(Status.ERR_INIT, "PMIx has been finalized", e);
    }
  }

  /** Sends what was put since the last commit. */
  public CompletableFuture<Void> commit() {
    return call(
        f -> {
          Map<String, Value> local = new LinkedHashMap<>(commitLocal);
          Map<String, Value> remote = new LinkedHashMap<>(commitRemote);
          commitLocal.clear();
          commitRemote.clear();
          if (singleton) {
            complete(f, null);
            return;
          }
          send(messages.commit(local, remote), replyTo(f, r -> statusOnly(r, "commit")));
        });
  }

  private static @Nullable Void statusOnly(PmixReader r, String what) {
    Messages.checkStatus(r, what);
    return null;
  }

  /** Fences {@code procs} (all of this namespace when empty). */
  public CompletableFuture<Void> fence(Collection<Proc> procs, List<Info> directives) {
    List<Proc> ps = procs.isEmpty() ? List.of(Proc.wildcard(me.nspace())) : List.copyOf(procs);
    List<Info> ds = List.copyOf(directives);
    return call(
        f -> {
          if (singleton) {
            for (Proc p : ps) {
              if (!p.nspace().equals(me.nspace())
                  || !(p.rank() == me.rank() || p.rank() == Proc.RANK_WILDCARD)) {
                fail(f, new PmixException(Status.ERR_UNREACH, "a singleton can only fence itself"));
                return;
              }
            }
            complete(f, null);
            return;
          }
          send(messages.fence(ps, ds), replyTo(f, r -> statusOnly(r, "fence")));
        });
  }

  /** Gets {@code key} of {@code proc}: from the local cache when it can, else from the server. */
  public CompletableFuture<Value> get(Proc proc, String key, List<Info> directives) {
    requireNonNull(proc, "proc");
    requireNonNull(key, "key");
    List<Info> ds = List.copyOf(directives);
    return call(f -> resolve(new GetRequest(proc, key, ds, f)));
  }

  private void resolve(GetRequest g) {
    DataStore.Lookup l = store.lookup(g.proc(), g.key(), g.directives());
    if (l instanceof DataStore.Lookup.Found found) {
      complete(g.future(), found.value());
      return;
    }
    if (l instanceof DataStore.Lookup.Absent
        || DataStore.flag(g.directives(), "pmix.optional")
        || singleton) {
      fail(g.future(), DataStore.notFound(g.proc(), g.key()));
      return;
    }
    boolean ownNspace = g.proc().nspace().equals(me.nspace());
    boolean reserved = DataStore.isReserved(g.key());
    if (ownNspace && g.proc().rank() == me.rank() && !reserved) {
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
                store.ingestGetBlob(r.unpackOne(DataType.BYTE_OBJECT).asBytes(), g.proc());
              }
            }
            finishGet(g, queue, s.isSuccess() ? null : new PmixException(s, "get " + g.key() + " of " + g.proc()));
          }

          @Override
          public void onFailure(PmixException e) {
            finishGet(g, queue, e);
          }
        });
  }

  private void finishGet(GetRequest leader, GetQueue queue, @Nullable PmixException failure) {
    gets.remove(leader.proc(), queue);
    if (failure != null) {
      fail(leader.future(), failure);
    } else if (store.lookup(leader.proc(), leader.key(), leader.directives())
        instanceof DataStore.Lookup.Found found) {
      complete(leader.future(), found.value());
    } else {
      fail(leader.future(), DataStore.notFound(leader.proc(), leader.key()));
    }
    for (GetRequest g : queue.waiting) {
      if (failure != null && failure.status().equals(Status.ERR_LOST_CONNECTION)) {
        fail(g.future(), failure);
      } else {
        resolve(g);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Publish, lookup, unpublish

  /** Publishes data (the infos that are not directives) with the directives among them. */
  public CompletableFuture<Void> publish(List<Info> info) {
    List<Info> is = List.copyOf(info);
    return request(() -> messages.publish(uid, is), r -> statusOnly(r, "publish"));
  }

  /** Looks published keys up. */
  public CompletableFuture<List<Value.PData>> lookup(Collection<String> keys, List<Info> directives) {
    List<String> ks = List.copyOf(keys);
    List<Info> ds = List.copyOf(directives);
    return request(
        () -> messages.keys(Command.LOOKUPNB, uid, ks, ds),
        r -> {
          Messages.checkStatus(r, "lookup " + ks);
          return List.copyOf(Messages.lookupData(r));
        });
  }

  /** Unpublishes keys (everything this process published when {@code keys} is empty). */
  public CompletableFuture<Void> unpublish(Collection<String> keys, List<Info> directives) {
    List<String> ks = List.copyOf(keys);
    List<Info> ds = List.copyOf(directives);
    return request(
        () -> messages.keys(Command.UNPUBLISHNB, uid, ks, ds), r -> statusOnly(r, "unpublish"));
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  /** Registers a handler for {@code codes} (every event when empty); completes with its id. */
  public CompletableFuture<Long> registerEventHandler(
      Collection<Status> codes, EventHandler handler, List<Info> directives) {
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
          boolean news = cs.isEmpty() ? serverDefaultHandlers == 0 : false;
          for (int c : cs) {
            news |= !serverCodes.containsKey(c);
          }
          // Registered before the server answers: it may push cached events right away.
          registrations.put(id, reg);
          count(reg, +1);
          if (singleton || (!news && ds.isEmpty())) {
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
    if (!tellServer || singleton) {
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
          Event local = new Event(code, me, is, java.util.Optional.of(range));
          if (range == DataRange.PROC_LOCAL || singleton) {
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
    java.util.Optional<DataRange> range = java.util.Optional.empty();
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
  // Query, log, abort

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

  /** Asks the server to abort {@code procs} (the whole job when empty). */
  public CompletableFuture<Void> abort(Status status, @Nullable String msg, List<Proc> procs) {
    requireNonNull(status, "status");
    List<Proc> ps = List.copyOf(procs);
    return request(() -> messages.abort(status, msg, ps), r -> statusOnly(r, "abort"));
  }

  // ---------------------------------------------------------------------------------------------
  // Teardown

  /**
   * The last finalize: optionally a barrier, FINALIZE and its answer (at most {@link
   * #FINALIZE_ACK_WAIT}), then the socket is closed, pending work fails with ERR_INIT, and both
   * threads are stopped and waited for. Always leaves nothing running, even when a step fails.
   */
  void shutdown(List<Info> directives) {
    try {
      if (DataStore.flag(directives, "pmix.embed.barrier") && !singleton) {
        try {
          await(fence(List.of(), List.of()), "finalize");
        } catch (PmixException e) {
          LOG.log(Level.DEBUG, "barrier before finalize failed", e);
        }
      }
      CompletableFuture<Void> fin =
          call(
              f -> {
                if (!ready || singleton) {
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

  /** Stops both threads and waits until they have ended. */
  private void stopThreads() {
    group.shutdownGracefully(0, 0, TimeUnit.SECONDS).awaitUninterruptibly(THREAD_STOP_WAIT.toMillis());
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
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * The effective uid and gid, for the native credential and the uid field of publish requests.
   * Linux's /proc/self/status has them (second field of the Uid/Gid lines); elsewhere the JDK's
   * UnixSystem gives the real ids, which differ only in setuid programs.
   */
  private static final Splitter WORDS = Splitter.on(CharMatcher.whitespace()).omitEmptyStrings();

  static int[] effectiveIds() {
    int[] ids = {-1, -1};
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Uid:")) {
          ids[0] = Integer.parseUnsignedInt(WORDS.splitToList(line).get(2));
        } else if (line.startsWith("Gid:")) {
          ids[1] = Integer.parseUnsignedInt(WORDS.splitToList(line).get(2));
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux: fall through to the JDK.
    }
    if (ids[0] == -1 || ids[1] == -1) {
      com.sun.security.auth.module.UnixSystem u = new com.sun.security.auth.module.UnixSystem();
      ids[0] = (int) u.getUid();
      ids[1] = (int) u.getGid();
    }
    return ids;
  }
}
