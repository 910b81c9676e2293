package io.pmix.client.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataRange;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.connector.Bookkept;
import io.pmix.common.internal.connector.ConnectPlan;
import io.pmix.common.internal.connector.ConnectorSession;
import io.pmix.common.internal.connector.DataStore;
import io.pmix.common.internal.connector.LibraryState;
import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.internal.connector.ServerAddress;
import io.pmix.common.internal.gds.DstoreReader;
import io.pmix.common.internal.gds.GdsChoice;
import io.pmix.common.internal.message.AbortRequest;
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.LookupNbReply;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.PublishNbRequest;
import io.pmix.common.internal.message.UnpublishNbRequest;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.ReplyLayout;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Everything one init/finalize cycle of the client owns: its identity and mode (server or
 * singleton), the shared connector machinery of pmix-common (threads, connection, tags, pending
 * requests, events, data store; {@link ConnectorSession}) and the client-only bookkeeping, the
 * values put since the last commit. The first {@code PMIx.init} builds one, the last {@code
 * PMIx.finalize} shuts it down and drops it, so nothing of a cycle can leak into the next
 * (docs/lifecycle.md §6.2.8).
 *
 * <p>Threading: every mutable field is confined to the session's progress thread; public
 * operations hand their work to it and return a future, which completes on the callback thread.
 */
public final class ClientState implements LibraryState {
  private static final System.Logger LOG = LazyLogger.of(ClientState.class);

  /** How long the last finalize waits for the server's answer to FINALIZE, as C does. */
  static final Duration FINALIZE_ACK_WAIT = ConnectorSession.FINALIZE_ACK_WAIT;

  /** C retries a refused connect ten times; we wait a little between tries. */
  private static final int CONNECT_ATTEMPTS = 10;

  private static final Duration CONNECT_RETRY = Duration.ofMillis(100);

  /**
   * How long one read of a shared-memory store waits for the server's write lock at most. The
   * server holds it for one store of one key (or one job's data at registration); libpmix waits
   * without end, we fail the get instead.
   */
  static final Duration GDS_LOCK_TIMEOUT = Duration.ofSeconds(10);

  private final ClientEnvironment env;
  private final Proc me;
  private final boolean singleton;
  private final int uid;
  private final int gid;
  private final ConnectorSession session;

  // ---- confined to the progress thread ----
  @Bookkept("client.commitLocal")
  private final Map<String, Value> commitLocal = new LinkedHashMap<>();

  @Bookkept("client.commitRemote")
  private final Map<String, Value> commitRemote = new LinkedHashMap<>();

  private ClientState(ClientEnvironment env, Proc me, boolean singleton) {
    this.env = env;
    this.me = me;
    this.singleton = singleton;
    int[] ids = LocalProcess.effectiveIds();
    this.uid = ids[0];
    this.gid = ids[1];
    this.session =
        new ConnectorSession(Role.CLIENT, WireFormat.of(env.bufferType()), env.hostname());
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
            ? Proc.of("singleton." + env.hostname() + "." + LocalProcess.pid(), 0)
            : Proc.of(env.nspace().orElseThrow(), env.rank());
    ClientState s = new ClientState(env, me, singleton);
    try {
      if (singleton) {
        s.session.openStandalone(
            me,
            "running as a singleton: there is no server",
            store -> store.describeSingleton(env.hostname()));
      } else {
        // The gds module as libpmix's client chooses it, its store attached before the handshake
        // announces it: the server then stores this namespace's data where we read it.
        GdsChoice.Chosen gds =
            GdsChoice.choose(
                environment, me.nspace(), WireFormat.of(env.bufferType()), GDS_LOCK_TIMEOUT);
        ConnectPlan plan;
        try {
          plan = s.connectPlan(env.server().orElseThrow(), gds.kind().libpmixName());
        } catch (RuntimeException e) {
          gds.reader().ifPresent(DstoreReader::close);
          throw e;
        }
        if (gds.reader().isPresent()) {
          s.session.open(plan, gds.reader().get());
        } else {
          s.session.open(plan);
        }
      }
    } catch (RuntimeException e) {
      s.session.stopThreads();
      throw e;
    }
    return s;
  }

  private ConnectPlan connectPlan(ServerAddress addr, String gdsModule) {
    byte[] credential =
        env.psecModule().equals(NativeCredential.MODULE)
            ? new NativeCredential(uid, gid).toBytes()
            : new byte[0];
    ConnectRequest req =
        ConnectRequest.builder()
            .security(env.psecModule(), credential)
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(me.nspace(), me.rank())
            .bfropsModule(addr.bfropsModule())
            .bufferType(env.bufferType().code())
            .gdsModule(gdsModule)
            .build();
    return new ConnectPlan(
        addr, req, ReplyLayout.CLIENT, CONNECT_ATTEMPTS, CONNECT_RETRY);
  }

  /** This process. */
  public Proc me() {
    return me;
  }

  /** Whether this cycle runs without a server. */
  public boolean isSingleton() {
    return singleton;
  }

  /**
   * The gds module this cycle announced and reads job and modex data through: {@code ds21},
   * {@code ds12} or {@code hash} (always hash for a singleton).
   */
  public String gdsModule() {
    return session.gdsModule();
  }

  /** The environment this cycle was built from. */
  public ClientEnvironment environment() {
    return env;
  }

  @Override
  public List<Thread> threads() {
    return session.threads();
  }

  /**
   * Waits for an operation's future and unwraps its failure: a PmixException or a caller mistake
   * is rethrown as it is.
   */
  public static <T> T await(CompletableFuture<T> f, String operation) {
    return ConnectorSession.await(f, Role.CLIENT, operation);
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
    if (key.isEmpty() || key.getBytes(StandardCharsets.UTF_8).length > Info.MAX_KEYLEN) {
      throw new IllegalArgumentException("key must have 1 to " + Info.MAX_KEYLEN + " bytes");
    }
    // Anonymous classes, not lambdas, in put, commit and fence: a lambda's first call costs a
    // fresh JVM ~0.1-0.3 ms (docs/architecture.md, "First requests").
    session.execute(
        new Runnable() {
          @Override
          public void run() {
            session.store().putOwn(key, value);
            if (scope == Scope.INTERNAL || DataStore.isReserved(key)) {
              return;
            }
            if (scope.reachesLocal()) {
              commitLocal.put(key, value);
            }
            if (scope.reachesRemote()) {
              commitRemote.put(key, value);
            }
          }
        });
  }

  /** Sends what was put since the last commit. */
  public CompletableFuture<Void> commit() {
    return session.call(
        new Consumer<CompletableFuture<Void>>() {
          @Override
          public void accept(CompletableFuture<Void> f) {
            Map<String, Value> local = new LinkedHashMap<>(commitLocal);
            Map<String, Value> remote = new LinkedHashMap<>(commitRemote);
            commitLocal.clear();
            commitRemote.clear();
            if (singleton) {
              session.complete(f, null);
              return;
            }
            session.send(
                CommitRequest.of(local, remote),
                session.replyTo(f, ConnectorSession.statusOnly("commit")));
          }
        });
  }

  /** Fences {@code procs} (all of this namespace when empty). */
  public CompletableFuture<Void> fence(Collection<Proc> procs, List<Info> directives) {
    List<Proc> ps = procs.isEmpty() ? List.of(Proc.wildcard(me.nspace())) : List.copyOf(procs);
    List<Info> ds = List.copyOf(directives);
    return session.call(
        new Consumer<CompletableFuture<Void>>() {
          @Override
          public void accept(CompletableFuture<Void> f) {
            if (singleton) {
              for (Proc p : ps) {
                if (!p.nspace().equals(me.nspace())
                    || !(p.rank() == me.rank() || p.rank() == Proc.RANK_WILDCARD)) {
                  session.fail(
                      f,
                      new PmixException(Status.ERR_UNREACH, "a singleton can only fence itself"));
                  return;
                }
              }
              session.complete(f, null);
              return;
            }
            session.send(
                new FenceNbRequest(ps, ds), session.replyTo(f, ConnectorSession.statusOnly("fence")));
          }
        });
  }

  /** Gets {@code key} of {@code proc}: from the local cache when it can, else from the server. */
  public CompletableFuture<Value> get(Proc proc, String key, List<Info> directives) {
    return session.get(proc, key, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Publish, lookup, unpublish

  /** Publishes data (the infos that are not directives) with the directives among them. */
  public CompletableFuture<Void> publish(List<Info> info) {
    List<Info> is = List.copyOf(info);
    return session.request(
        () -> new PublishNbRequest(uid, is),
        r -> ConnectorSession.statusOnly(r, "publish"));
  }

  /** Looks published keys up. */
  public CompletableFuture<List<Value.PData>> lookup(
      Collection<String> keys, List<Info> directives) {
    List<String> ks = List.copyOf(keys);
    List<Info> ds = List.copyOf(directives);
    return session.request(
        () -> new LookupNbRequest(uid, ks, ds),
        r -> {
          LookupNbReply reply = LookupNbReply.decode(r);
          if (!reply.status().isSuccess()) {
            throw new PmixException(reply.status(), "lookup " + ks);
          }
          return reply.data();
        });
  }

  /** Unpublishes keys (everything this process published when {@code keys} is empty). */
  public CompletableFuture<Void> unpublish(Collection<String> keys, List<Info> directives) {
    List<String> ks = List.copyOf(keys);
    List<Info> ds = List.copyOf(directives);
    return session.request(
        () -> new UnpublishNbRequest(uid, ks, ds),
        r -> ConnectorSession.statusOnly(r, "unpublish"));
  }

  // ---------------------------------------------------------------------------------------------
  // Events, query, log, abort

  /** Registers a handler for {@code codes} (every event when empty); completes with its id. */
  public CompletableFuture<Long> registerEventHandler(
      Collection<Status> codes, EventHandler handler, List<Info> directives) {
    return session.registerEventHandler(codes, handler, directives);
  }

  /** Removes a registration; tells the server about codes nobody listens to any more. */
  public CompletableFuture<Void> deregisterEventHandler(long id) {
    return session.deregisterEventHandler(id);
  }

  /**
   * Raises an event: to the server unless the range is this process only, and to this process's
   * own matching handlers (the server does not echo it back).
   */
  public CompletableFuture<Void> notifyEvent(Status code, DataRange range, List<Info> info) {
    return session.notifyEvent(code, range, info);
  }

  /** Asks the server the queries; completes with one info per answered key. */
  public CompletableFuture<List<Info>> query(List<Value.Query> queries) {
    return session.query(queries);
  }

  /** Sends log data to the server. */
  public CompletableFuture<Void> log(List<Info> data, List<Info> directives) {
    return session.log(data, directives);
  }

  /** Asks the server to abort {@code procs} (the whole job when empty). */
  public CompletableFuture<Void> abort(Status status, @Nullable String msg, List<Proc> procs) {
    requireNonNull(status, "status");
    List<Proc> ps = List.copyOf(procs);
    return session.request(
        () -> new AbortRequest(status, msg, ps),
        r -> ConnectorSession.statusOnly(r, "abort"));
  }

  // ---------------------------------------------------------------------------------------------
  // Spawn, connect, disconnect (the connector's shared requests)

  /** Asks the server to start a job; completes with its namespace, whose job data is cached. */
  public CompletableFuture<String> spawn(List<Value.App> apps, List<Info> jobInfo) {
    return session.spawn(apps, jobInfo);
  }

  /** Connects with {@code procs}; the other namespaces' job data in the reply is cached. */
  public CompletableFuture<Void> connect(List<Proc> procs, List<Info> directives) {
    return session.connect(procs, directives);
  }

  /** Disconnects from {@code procs}, dropping what is cached of their other namespaces. */
  public CompletableFuture<Void> disconnect(List<Proc> procs, List<Info> directives) {
    return session.disconnect(procs, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Teardown

  /**
   * The last finalize: optionally a barrier ({@code pmix.embed.barrier}), then the session's
   * teardown (FINALIZE and its answer, at most {@link #FINALIZE_ACK_WAIT}; the socket closed;
   * pending work failed with ERR_INIT; both threads stopped and waited for), then the client's own
   * bookkeeping is dropped. Always leaves nothing running, even when a step fails.
   */
  @Override
  public void shutdown(List<Info> directives) {
    try {
      if (DataStore.flag(directives, "pmix.embed.barrier") && !singleton) {
        try {
          await(fence(List.of(), List.of()), "finalize");
        } catch (PmixException e) {
          LOG.log(Level.DEBUG, "barrier before finalize failed", e);
        }
      }
    } finally {
      session.shutdown();
      // The progress thread has ended: its collections may be touched from here.
      commitLocal.clear();
      commitRemote.clear();
    }
  }

  @Override
  public Map<String, Object> resources() {
    return session.resources();
  }

  @Override
  public Map<String, Long> bookkeeping() {
    return session.bookkeeping(
        m -> {
          m.put("client.commitLocal", (long) commitLocal.size());
          m.put("client.commitRemote", (long) commitRemote.size());
        });
  }
}
