package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.gds.GdsModule;
import io.pmix.common.internal.message.IofDelivery;
import io.pmix.common.internal.message.LogRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.NotifyPush;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.common.internal.message.QueryRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.Tags;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One init/finalize cycle of a connector (client or tool), minus what only one role does, put
 * together from its {@link SessionPart parts}: the {@link LibraryThreads threads} and the
 * hand-offs between them, the {@link Connection connection} (connect, handshake, job data,
 * sending), the {@link ReplyRouter replies awaited} by tag, the {@link GetResolver store and the
 * gets} resolved against it, the {@link EventRegistry event handlers}, the {@link IofSinks
 * output sinks} and the {@link JobRequests job requests} (spawn, connect, disconnect). A role
 * builds one per cycle, composes it into its own state object and shuts it down at the last
 * finalize, after which nothing of it runs or holds anything: its {@link #bookkeeping()}, the
 * parts' put together, is all zeros.
 *
 * <p>This class holds nothing of its own but the parts and immutable configuration (a test
 * checks that by reflection): it wires them, routes the server's pushes to the part they are for,
 * and offers the roles one facade.
 *
 * <p>Threading: every mutable field of every part is confined to the progress thread (a single
 * Netty event loop); public operations hand their work to it and return a future, which completes
 * on the callback thread, so application code never runs on the progress thread. Roles add
 * operations with {@link #call}, {@link #request} and {@link #send}; the bodies they pass run on
 * the progress thread. No lock is held while application code runs.
 */
public final class ConnectorSession {
  private static final System.Logger LOG = LazyLogger.of(ConnectorSession.class);

  /** How long the last finalize waits for the server's answer to FINALIZE, as C does. */
  public static final Duration FINALIZE_ACK_WAIT = Duration.ofSeconds(2);

  private final Role role;
  private final String hostname;
  private final WireFormat format;
  private final Messages messages;

  private final LibraryThreads threads;
  private final ReplyRouter router;
  private final Connection connection;
  private final GdsAccess gds;
  private final GetResolver gets;
  private final EventRegistry events;
  private final IofSinks iof;
  private final JobRequests jobs;

  /**
   * Creates a session's parts; its threads start with their first task. It is not connected yet
   * ({@link #open} or {@link #openStandalone}).
   *
   * @param role names the threads and the API in messages
   * @param format the payload format the session speaks
   * @param hostname this node's name as the server knows it
   */
  public ConnectorSession(Role role, WireFormat format, String hostname) {
    this.role = requireNonNull(role, "role");
    this.format = requireNonNull(format, "format");
    this.hostname = requireNonNull(hostname, "hostname");
    this.messages = new Messages(format);
    this.threads = new LibraryThreads(role);
    this.router = new ReplyRouter();
    this.connection = new Connection(threads, router, messages, new Inbound());
    this.gds = new GdsAccess(threads);
    this.gets = new GetResolver(threads, connection, gds);
    this.events = new EventRegistry(threads, connection);
    this.iof = new IofSinks(threads, connection);
    this.jobs = new JobRequests(connection, gets, messages);
  }

  /** Every part, in the order their bookkeeping is listed and their state released. */
  List<SessionPart> parts() {
    return List.of(threads, connection, router, gets, gds, events, iof, jobs);
  }

  /** What the connection hands over: the job data, the pushes, the loss of the server. */
  private final class Inbound implements Connection.Listener {
    @Override
    public void onJobData(
        Proc self, ReqReply reply, Consumer<@Nullable PmixException> done) {
      DataStore s = new DataStore(self, hostname, format);
      s.ingestJobData(reply.nspace(), messages.reader(reply.jobData()));
      gets.install(s);
      // A dstore client's REQ reply holds only the info arrays: the rest is in shared memory.
      // The future is nobody's: should the cycle end meanwhile, the init has failed already.
      gets.completeJobData(self, new CompletableFuture<Void>(), done);
    }

    @Override
    public void onPush(int tag, PmixReader payload) {
      if (tag == Tags.NOTIFY) {
        try {
          int cmd = payload.unpackByteEnum(DataType.COMMAND);
          if (cmd != Command.NOTIFY.code()) {
            LOG.log(Level.DEBUG, "tag-0 message with command {0} ignored", cmd);
            return;
          }
          events.onNotification(NotifyPush.decode(payload));
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "malformed event notification dropped", e);
        }
      } else {
        try {
          iof.onDelivery(IofDelivery.decode(payload));
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "malformed forwarded output dropped", e);
        }
      }
    }

    @Override
    public void onLost(Proc self) {
      events.onConnectionLost(self);
    }
  }

  /** The role this session belongs to. */
  public Role role() {
    return role;
  }

  /** This process's name, once the handshake (or {@link #openStandalone}) has fixed it. */
  public Proc me() {
    return connection.me();
  }

  /** The server's name from a tool-layout handshake reply; empty for clients and standalone. */
  public Optional<PeerId> server() {
    return connection.server();
  }

  /** Whether this cycle runs without a server (a singleton client, an unconnected tool). */
  public boolean isStandalone() {
    return connection.isStandalone();
  }

  /** The session's wire format: readers of payloads, and the connect request's info blob. */
  public Messages messages() {
    return messages;
  }

  /** This node's name as given at construction. */
  public String hostname() {
    return hostname;
  }

  /** The threads this session started (for teardown checks). */
  public List<Thread> threads() {
    return threads.threads();
  }

  /**
   * The local data store. Progress thread only (inside {@link #call} bodies and reply handlers).
   *
   * @throws IllegalStateException before the session is open
   */
  public DataStore store() {
    return gets.store();
  }

  // ---------------------------------------------------------------------------------------------
  // Hand-off to the progress thread and back (LibraryThreads)

  /** Runs {@code body} on the progress thread; its failures complete the future. */
  public <T> CompletableFuture<T> call(Consumer<CompletableFuture<T>> body) {
    return threads.call(body);
  }

  /**
   * Runs {@code task} on the progress thread and returns at once.
   *
   * @throws PmixException with {@code ERR_INIT} after the last finalize
   */
  public void execute(Runnable task) {
    threads.execute(task);
  }

  /** Completes a future on the callback thread, so application code never runs on ours. */
  public <T> void complete(CompletableFuture<T> f, @Nullable T value) {
    threads.complete(f, value);
  }

  /** Fails a future on the callback thread. */
  public void fail(CompletableFuture<?> f, Throwable t) {
    threads.fail(f, t);
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
    Runnable release = LibraryThreads.awaiting(f);
    try {
      return waitFor(f, operation);
    } finally {
      release.run();
    }
  }

  /**
   * Runs {@code body} on the progress thread and waits for the future it completes, a future no
   * one else sees. It is marked as waited on before the hand-off, so the progress thread completes
   * it itself even when it is done before this thread begins to wait (a singleton's init often
   * is): the callback thread is not started for it.
   */
  private <T> T callAndAwait(Consumer<CompletableFuture<T>> body, String operation) {
    LibraryThreads.checkMayBlock(role, operation);
    CompletableFuture<T> f = new CompletableFuture<>();
    Runnable release = LibraryThreads.awaiting(f);
    try {
      threads.call(f, body);
      return waitFor(f, operation);
    } finally {
      release.run();
    }
  }

  /** Waits for {@code f}, unwrapping its failure. */
  private static <T> T waitFor(CompletableFuture<T> f, String operation) {
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

  // ---------------------------------------------------------------------------------------------
  // Requests (Connection, ReplyRouter)

  /**
   * Sends a request built on the progress thread; {@code decode} turns the reply into the result
   * (on the progress thread; a PmixException it throws fails the future).
   */
  public <T> CompletableFuture<T> request(
      Supplier<? extends Message> body, Function<PmixReader, T> decode) {
    return connection.request(body, decode);
  }

  /** A reply handler completing {@code f} with the decoded reply. */
  public <T> ReplyHandler replyTo(CompletableFuture<T> f, Function<PmixReader, T> decode) {
    return connection.replyTo(f, decode);
  }

  /** Decodes a status-only reply: null on success, else throws its status. */
  public static @Nullable Void statusOnly(PmixReader r, String what) {
    StatusReply.decode(r).check(what);
    return null;
  }

  /**
   * {@link #statusOnly(PmixReader, String)} as a decoder: a class, not a lambda at each caller,
   * whose first call would cost a fresh JVM ~0.1-0.3 ms (docs/architecture.md, "First requests").
   */
  public static Function<PmixReader, @Nullable Void> statusOnly(String what) {
    return new StatusOnly(what);
  }

  private static final class StatusOnly implements Function<PmixReader, @Nullable Void> {
    private final String what;

    StatusOnly(String what) {
      this.what = what;
    }

    @Override
    public @Nullable Void apply(PmixReader r) {
      return statusOnly(r, what);
    }
  }

  /** On the progress thread: sends {@code m} with a fresh tag; {@code handler} gets the reply. */
  public void send(Message m, ReplyHandler handler) {
    connection.send(m, handler);
  }

  // ---------------------------------------------------------------------------------------------
  // Connect and init (Connection)

  /**
   * Runs without a server: the identity is {@code me}, a data store exists (filled by {@code
   * describe}, on the progress thread) and every request fails with {@code ERR_UNREACH} and
   * {@code reason}. Blocks until the store is filled.
   *
   * @throws PmixException with {@code ERR_INIT} if the session was shut down
   * @throws IllegalStateException on one of the role's own threads
   */
  public void openStandalone(Proc me, String reason, Consumer<DataStore> describe) {
    requireNonNull(me, "me");
    requireNonNull(reason, "reason");
    requireNonNull(describe, "describe");
    Void unused =
        callAndAwait(
            f -> {
              DataStore s = new DataStore(me, hostname, format);
              gets.install(s);
              describe.accept(s);
              connection.openStandalone(me, reason);
              complete(f, null);
            },
            "init");
  }

  /**
   * Connects as {@code plan} says, performs the handshake and the job-data request (REQ) and
   * returns when the data has arrived. The identity is the one in the connect request, or the one
   * the server assigns (flags 3 and 6). May be called again after a failure, for instance with
   * another server.
   *
   * @throws PmixException with {@code ERR_UNREACH} if the server cannot be reached or refuses,
   *     {@code ERR_INIT} if the session was shut down meanwhile
   * @throws IllegalStateException on one of the role's own threads
   */
  public void open(ConnectPlan plan) {
    requireNonNull(plan, "plan");
    // An anonymous class, not a lambda, on the way of a first init (docs/architecture.md, "First
    // requests").
    Void unused =
        callAndAwait(
            new Consumer<CompletableFuture<Void>>() {
              @Override
              public void accept(CompletableFuture<Void> f) {
                connection.open(plan, f);
              }
            },
            "init");
  }

  /**
   * As {@link #open(ConnectPlan)}, for a client that chose and attached the shared-memory store
   * {@code gds} and announces it in {@code plan}'s connect request: job-level and modex data are
   * read from it (docs/gds.md). The session owns {@code gds} from this call on, whatever happens,
   * and closes it when the cycle ends.
   *
   * @throws IllegalArgumentException if the request announces another module
   */
  public void open(ConnectPlan plan, GdsModule gds) {
    requireNonNull(plan, "plan");
    requireNonNull(gds, "gds");
    if (!plan.request().gdsModule().equals(gds.name())) {
      gds.close();
      throw new IllegalArgumentException(
          "the connect request announces " + plan.request().gdsModule() + ", not " + gds.name());
    }
    AtomicBoolean handed = new AtomicBoolean();
    try {
      Void unused =
          callAndAwait(
              new Consumer<CompletableFuture<Void>>() { // not a lambda: every ds21 first init
                @Override
                public void accept(CompletableFuture<Void> g) {
                  handed.set(true);
                  ConnectorSession.this.gds.install(gds);
                  connection.open(plan, g);
                }
              },
              "init");
    } finally {
      if (!handed.get()) {
        // Refused (the session has stopped, or this is one of its threads): the body never ran,
        // so the module is still ours.
        gds.close();
      }
    }
  }

  /** The gds module this cycle reads its data through: {@code ds21}, {@code ds12} or hash. */
  public String gdsModule() {
    return threads.read(gds::name);
  }

  // ---------------------------------------------------------------------------------------------
  // Get (GetResolver)

  /**
   * Gets {@code key} of {@code proc}: from the local store when it can, else from the server. On a
   * shared-memory store a peer's key is read on the calling thread first (unless it is one of this
   * session's threads); found, the future returned is complete already.
   */
  public CompletableFuture<Value> get(Proc proc, String key, List<Info> directives) {
    return gets.get(proc, key, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Events (EventRegistry)

  /** Registers a handler for {@code codes} (every event when empty); completes with its id. */
  public CompletableFuture<Long> registerEventHandler(
      Collection<Status> codes, EventHandler handler, List<Info> directives) {
    return events.register(codes, handler, directives);
  }

  /** Removes a registration; tells the server about codes nobody listens to any more. */
  public CompletableFuture<Void> deregisterEventHandler(long id) {
    return events.deregister(id);
  }

  /**
   * Raises an event: to the server unless the range is this process only, and to this process's
   * own matching handlers (the server does not echo it back).
   */
  public CompletableFuture<Void> notifyEvent(Status code, DataRange range, List<Info> info) {
    return events.notifyEvent(code, range, info);
  }

  // ---------------------------------------------------------------------------------------------
  // Query, log (stateless requests)

  /** Asks the server the queries; completes with one info per answered key. */
  public CompletableFuture<List<Info>> query(List<Value.Query> queries) {
    List<Value.Query> qs = List.copyOf(queries);
    // Anonymous classes, not lambdas: a tool's first query runs this (docs/architecture.md,
    // "First requests").
    return request(
        new Supplier<Message>() {
          @Override
          public Message get() {
            return new QueryRequest(qs);
          }
        },
        new Function<PmixReader, List<Info>>() {
          @Override
          public List<Info> apply(PmixReader r) {
            QueryReply reply = QueryReply.decode(r);
            Status s = reply.status();
            if (!s.isSuccess() && !s.equals(Status.QUERY_PARTIAL_SUCCESS)) {
              throw new PmixException(s, "query");
            }
            return reply.info();
          }
        });
  }

  /** Sends log data to the server. */
  public CompletableFuture<Void> log(List<Info> data, List<Info> directives) {
    List<Info> d = List.copyOf(data);
    List<Info> ds = List.copyOf(directives);
    if (d.isEmpty()) {
      throw new IllegalArgumentException("nothing to log");
    }
    return request(() -> new LogRequest(d, ds), r -> statusOnly(r, "log"));
  }

  // ---------------------------------------------------------------------------------------------
  // Spawn, connect, disconnect (JobRequests)

  /**
   * Asks the server (and its host) to start a job; completes with its namespace. The apps are
   * first completed as {@code PMIx_Spawn_nb} of 4.2.2 completes them (see {@link #fillApp}). The
   * new job's data in the reply goes to the store, so gets of it are local.
   *
   * @throws IllegalArgumentException if there is no app, or an app has no command
   */
  public CompletableFuture<String> spawn(List<Value.App> apps, List<Info> jobInfo) {
    return jobs.spawn(apps, jobInfo);
  }

  /** See {@link JobRequests#fillApp}. */
  static Value.App fillApp(Value.App a, String cwd) {
    return JobRequests.fillApp(a, cwd);
  }

  /** See {@link JobRequests#basename}. */
  static String basename(String path) {
    return JobRequests.basename(path);
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
    return jobs.connect(procs, directives);
  }

  /**
   * DISCONNECTNB over {@code procs}. As the 4.2.2 client does before it sends anything, the job
   * and process data held for every other namespace named in {@code procs} is dropped.
   *
   * @throws IllegalArgumentException if {@code procs} is empty (C: PMIX_ERR_BAD_PARAM)
   */
  public CompletableFuture<Void> disconnect(List<Proc> procs, List<Info> directives) {
    return jobs.disconnect(procs, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // I/O forwarding (IofSinks)

  /**
   * Asks the server to forward the output of {@code sources} on {@code channels} (a bit mask) to
   * {@code sink}, which then runs on the callback thread for each piece, in order. Completes with
   * the registration's local id, for {@link #iofDeregister}.
   */
  public CompletableFuture<Long> iofPull(
      List<Proc> sources, int channels, List<Info> directives, Consumer<IofDelivery> sink) {
    return iof.pull(sources, channels, directives, sink);
  }

  /** Ends an IOF registration: no more output reaches its sink, and the server is told. */
  public CompletableFuture<Void> iofDeregister(long localId, List<Info> directives) {
    return iof.deregister(localId, directives);
  }

  /** Sends {@code data} (null: end of input) to the standard input of {@code targets}. */
  public CompletableFuture<Void> iofPush(
      List<Proc> targets, byte @Nullable [] data, List<Info> directives) {
    return iof.push(targets, data, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Teardown

  /**
   * Ends the cycle: FINALIZE and its answer (at most {@link #FINALIZE_ACK_WAIT}; skipped when
   * standalone or never connected), then the socket is closed, pending work fails with {@code
   * ERR_INIT}, both threads are stopped and waited for, and every part drops what it holds.
   * Always leaves nothing running, even when a step fails. Must not be called on this session's
   * threads.
   */
  public void shutdown() {
    try {
      // FINALIZE, and the close once it is answered, in one step of the progress thread. Only
      // this call waits for it: the progress thread may complete it itself, as for any blocking
      // call (LibraryThreads#awaiting), instead of through the callback thread.
      CompletableFuture<Void> fin =
          call(
              new Consumer<CompletableFuture<Void>>() { // not a method reference: a last finalize
                @Override
                public void accept(CompletableFuture<Void> f) {
                  connection.finalizeAndClose(f);
                }
              });
      Runnable release = LibraryThreads.awaiting(fin);
      boolean closed = false;
      try {
        fin.get(FINALIZE_ACK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        closed = true;
      } catch (ExecutionException | TimeoutException e) {
        // A failed answer has closed already, but a failure before the request went out has not:
        // the close below then does it (it changes nothing the second time).
        LOG.log(Level.DEBUG, "no clean FINALIZE acknowledgement", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        release.run();
      }
      if (!closed && !threads.loopEnding()) {
        // The close fails whatever is still pending, with ERR_INIT. (A failed answer has closed
        // and ended the loop already.)
        CompletableFuture<Void> done = call(connection::close);
        try {
          done.get(LibraryThreads.THREAD_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
          LOG.log(Level.WARNING, "closing the PMIx connection failed", e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    } finally {
      stopThreads();
    }
  }

  /**
   * Stops both threads, waits until they have ended, then has every part drop what it holds.
   * Also used when an init fails: nothing is left running then either.
   */
  public void stopThreads() {
    boolean interrupted = threads.stop();
    // The progress thread has ended (joined): the parts' fields may be touched from here.
    for (SessionPart p : parts()) {
      p.release();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Every resource and collection of the cycle with its size (or 1/0 for a resource held or not):
   * the parts' {@link SessionPart#bookkeeping}, put together. After {@link #shutdown} all are 0:
   * the shared teardown contract checks that. Answered on the progress thread while it runs,
   * directly once it has stopped.
   */
  public Map<String, Long> bookkeeping() {
    return bookkeeping(m -> {});
  }

  /**
   * As {@link #bookkeeping()}, with the role's own entries added by {@code more}, which runs where
   * the parts' entries are read (on the progress thread while it runs), so a role's
   * progress-thread-confined collections are read safely too.
   */
  public Map<String, Long> bookkeeping(Consumer<Map<String, Long>> more) {
    requireNonNull(more, "more");
    return threads.read(
        () -> {
          Map<String, Long> m = new LinkedHashMap<>();
          for (SessionPart p : parts()) {
            m.putAll(p.bookkeeping());
          }
          more.accept(m);
          return m;
        });
  }

  /**
   * The objects this cycle owns, by name (the parts' {@link SessionPart#resources}): the event
   * loop group and its loop, the callback executor, each thread, and the connection's channel and
   * the data store while they exist. For tests that hold them weakly across many cycles and check
   * that nothing keeps a finished cycle reachable (a static registry, a listener left on a global,
   * a thread-local of a dead thread). Answered on the progress thread while it runs, directly
   * once it has stopped.
   */
  public Map<String, Object> resources() {
    return threads.read(
        () -> {
          Map<String, Object> m = new LinkedHashMap<>();
          for (SessionPart p : parts()) {
            m.putAll(p.resources());
          }
          return m;
        });
  }
}
