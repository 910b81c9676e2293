package io.pmix.tool.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.connector.Bookkept;
import io.pmix.common.internal.connector.ConnectPlan;
import io.pmix.common.internal.connector.ConnectorSession;
import io.pmix.common.internal.connector.LibraryState;
import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.internal.message.IofDelivery;
import io.pmix.common.internal.message.JobControlRequest;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.tool.IofChannel;
import io.pmix.tool.IofHandler;
import io.pmix.tool.IofOutput;
import io.pmix.tool.internal.ServerLocator.Candidate;
import io.pmix.tool.internal.ToolSettings.Target;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Everything one {@code PMIxTool.init}/{@code finalize} cycle owns: the settings it was started
 * with (identity, connector kind, targets and the tmpdir choices), the server it chose, and the
 * shared connector machinery of pmix-common ({@link ConnectorSession}: threads, connection, tags,
 * pending requests, event registrations, IOF sinks, the peer store). Built by the first init and
 * shut down by the last finalize through its own code path, after which every piece of it reports
 * released (docs/lifecycle.md §6.2.9): the tmpdir choices in particular are
 * forgotten, so the next init reads the environment afresh.
 *
 * <p>Threading: the session's fields are confined to its progress thread; the few fields here are
 * written once at init (and nulled at shutdown) and read anywhere.
 */
public final class ToolState implements LibraryState {
  private static final System.Logger LOG = LazyLogger.of(ToolState.class);

  /** The search tries many candidates; a stale one should not cost more than one attempt. */
  private static final int SEARCH_ATTEMPTS = 1;

  private final ConnectorSession session;
  private final int uid;
  private final int gid;

  /** The cycle's settings, tmpdir choices included; nulled by the teardown. */
  @Bookkept("tool.settings (identity, targets, tmpdir choices)")
  private volatile @Nullable ToolSettings settings;

  /** The server this cycle connected to; nulled by the teardown. */
  @Bookkept("tool.chosenServer")
  private volatile @Nullable Candidate chosen;

  /** The servers the locator offered this cycle; cleared by the teardown. */
  @Bookkept("tool.candidates")
  private volatile List<Candidate> candidates = List.of();

  private ToolState(ToolSettings settings) {
    this.settings = settings;
    int[] ids = LocalProcess.effectiveIds();
    this.uid = ids[0];
    this.gid = ids[1];
    this.session =
        new ConnectorSession(
            Role.TOOL, WireFormat.of(settings.bufferType()), settings.hostname());
  }

  /**
   * Builds a tool state from {@code environment} and {@code directives} and connects it as they
   * say. Blocks until the server has answered the tool's job-data request.
   *
   * @throws PmixException with the reason no connection was made; nothing is left running then
   */
  static ToolState start(Map<String, String> environment, List<Info> directives) {
    ToolSettings settings = ToolSettings.parse(environment, directives);
    ToolState s = new ToolState(settings);
    try {
      s.connect(settings);
    } catch (RuntimeException e) {
      s.session.stopThreads();
      s.forget();
      throw e;
    }
    return s;
  }

  private void connect(ToolSettings st) {
    if (st.doNotConnect()) {
      standalone(st, "the tool was initialized with pmix.tool.nocon: it has no server");
      return;
    }
    PmixException last = null;
    List<Candidate> tried = new ArrayList<>();
    for (Target target : st.targets()) {
      List<Candidate> cs;
      try {
        cs = ServerLocator.locate(target, st);
      } catch (PmixException e) {
        last = e;
        continue;
      }
      boolean search = target instanceof Target.FirstFound;
      for (Candidate c : cs) {
        tried.add(c);
        candidates = List.copyOf(tried);
        try {
          session.open(plan(st, c, search));
          chosen = c;
          return;
        } catch (PmixException e) {
          LOG.log(Level.DEBUG, "server {0} ({1}) not usable: {2}", c.address(), c.origin(), e);
          last = e;
        }
      }
    }
    if (st.connectOptional()) {
      standalone(
          st,
          "the tool runs unconnected (pmix.tool.conopt): "
              + (last == null ? "no server found" : last.getMessage()));
      return;
    }
    throw last != null ? last : new PmixException(Status.ERR_UNREACH, "no PMIx server found");
  }

  private void standalone(ToolSettings st, String reason) {
    Proc me =
        st.identity()
            .orElse(Proc.of("tool." + st.hostname() + "." + LocalProcess.pid(), 0));
    session.openStandalone(me, reason, store -> {});
  }

  private ConnectPlan plan(ToolSettings st, Candidate c, boolean search) {
    byte[] credential =
        st.psecModule().equals(NativeCredential.MODULE)
            ? new NativeCredential(uid, gid).toBytes()
            : new byte[0];
    ConnectRequest.Builder b =
        ConnectRequest.builder()
            .security(st.psecModule(), credential)
            .kind(st.kind())
            .ids(uid, gid)
            .bfropsModule(c.address().bfropsModule())
            .bufferType(st.bufferType().code())
            .gdsModule("hash")
            .infoBlob(session.messages().connectInfoBlob(connectInfo(st)));
    if (st.kind().carriesProcId()) {
      Proc id = st.identity().orElseThrow();
      b.procId(id.nspace(), id.rank());
    }
    int attempts = search && !st.retriesGiven() ? SEARCH_ATTEMPTS : st.attempts();
    return new ConnectPlan(
        c.address(),
        b.build(),
        ReplyLayout.forConnector(st.kind(), c.version().orElse(ConnectRequest.JAVA_CONNECTOR_VERSION)),
        attempts,
        st.retryDelay());
  }

  /**
   * The info blob of the connect request: the directives init did not consume, then this
   * process's pid and command, as C tools send them (a 4.2.2 server ignores the blob; later ones
   * hand it to the host's tool_connected upcall).
   */
  private static List<Info> connectInfo(ToolSettings st) {
    List<Info> out = new ArrayList<>(st.connectInfo());
    out.add(Info.of(Keys.PROC_PID, Value.pid((int) LocalProcess.pid())));
    String cmd = LocalProcess.executable().orElse("java");
    out.add(Info.of(Keys.CMD_LINE, Value.of(cmd)));
    return out;
  }

  /** Drops the remembered choices (tmpdirs, targets, servers), as the last finalize must. */
  private void forget() {
    settings = null;
    chosen = null;
    candidates = List.of();
  }

  // ---------------------------------------------------------------------------------------------
  // Identity

  /** This tool's name: its own, or the one the server assigned. */
  public Proc me() {
    return session.me();
  }

  /** Whether the tool has a server (false after pmix.tool.nocon or an optional connect failed). */
  public boolean isConnected() {
    return !session.isStandalone();
  }

  /** The server's name as its handshake reply gave it. */
  public Optional<Proc> server() {
    return session.server().map(ToolState::proc);
  }

  private static Proc proc(PeerId id) {
    return Proc.of(id.nspace(), id.rank());
  }

  /** The system tmpdir this cycle searched (for diagnostics and tests). */
  public Optional<Path> systemTmpdir() {
    ToolSettings st = settings;
    return st == null ? Optional.empty() : Optional.of(st.systemTmpdir());
  }

  /** Where the server this cycle connected to was found: a file, "URI", ... */
  public Optional<String> serverOrigin() {
    Candidate c = chosen;
    return c == null ? Optional.empty() : Optional.of(c.origin());
  }

  @Override
  public List<Thread> threads() {
    return session.threads();
  }

  /** Waits for an operation of this role; see {@link ConnectorSession#await}. */
  public static <T> T await(CompletableFuture<T> f, String operation) {
    return ConnectorSession.await(f, Role.TOOL, operation);
  }

  // ---------------------------------------------------------------------------------------------
  // Query, get

  /**
   * Answers the queries: those asking for the attributes of tool functions here, the rest from
   * the server in one QUERY message; the infos come back in query order.
   */
  public CompletableFuture<List<Info>> query(List<Value.Query> queries) {
    List<Value.Query> qs = List.copyOf(queries);
    if (qs.isEmpty()) {
      throw new IllegalArgumentException("no queries");
    }
    List<Info> local = new ArrayList<>();
    List<Value.Query> remote = new ArrayList<>();
    for (Value.Query q : qs) {
      if (ToolAttributes.answersLocally(q)) {
        local.add(ToolAttributes.answer(q));
      } else {
        remote.add(q);
      }
    }
    if (remote.isEmpty()) {
      return session.call(f -> session.complete(f, List.copyOf(local)));
    }
    return session
        .query(remote)
        .thenApply(
            r -> {
              List<Info> all = new ArrayList<>(local);
              all.addAll(r);
              return List.copyOf(all);
            });
  }

  /** The namespaces the server knows ({@code pmix.qry.ns}, a comma-separated list). */
  public CompletableFuture<List<String>> queryNamespaces() {
    // An anonymous class and a plain split, not a lambda and Guava's Splitter (~20 classes): a
    // tool's first query runs this (docs/architecture.md, "First requests").
    return session
        .query(List.of(new Value.Query(List.of(Keys.QUERY_NAMESPACES.name()), List.of())))
        .thenApply(
            new Function<List<Info>, List<String>>() {
              @Override
              public List<String> apply(List<Info> infos) {
                Info i = find(infos, Keys.QUERY_NAMESPACES.name());
                String list = i.value().asString();
                List<String> out = new ArrayList<>();
                if (list != null) {
                  for (String part : list.split(",", -1)) {
                    String n = part.strip();
                    if (!n.isEmpty()) {
                      out.add(n);
                    }
                  }
                }
                return List.copyOf(out);
              }
            });
  }

  /** The processes of {@code nspace} ({@code pmix.qry.ptable}: an array of PROC_INFO). */
  public CompletableFuture<List<Value.ProcInfo>> queryProcTable(String nspace) {
    requireNonNull(nspace, "nspace");
    Value.Query q =
        new Value.Query(
            List.of(Keys.QUERY_PROC_TABLE.name()), List.of(Info.of(Keys.NSPACE, Value.of(nspace))));
    return session
        .query(List.of(q))
        .thenApply(
            infos -> {
              Info i = find(infos, Keys.QUERY_PROC_TABLE.name());
              List<Value.ProcInfo> out = new ArrayList<>();
              if (i.value() instanceof DataArray a) {
                for (Value v : a.items()) {
                  if (v instanceof Value.ProcInfo p) {
                    out.add(p);
                  }
                }
              } else if (i.value() instanceof Value.ProcInfo p) {
                out.add(p);
              } else {
                throw new PmixException(
                    Status.ERR_TYPE_MISMATCH, "pmix.qry.ptable answered with " + i.value().type());
              }
              return List.copyOf(out);
            });
  }

  private static Info find(List<Info> infos, String key) {
    for (Info i : infos) {
      if (i.key().equals(key)) {
        return i;
      }
    }
    throw new CompletionException(
        new PmixException(Status.ERR_NOT_FOUND, "the server's answer lacks " + key));
  }

  /** Gets {@code key} of {@code proc}: from the peer store when it can, else from the server. */
  public CompletableFuture<Value> get(Proc proc, String key, List<Info> directives) {
    return session.get(proc, key, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Events, log

  /** Registers a handler for {@code codes} (every event when empty); completes with its id. */
  public CompletableFuture<Long> registerEventHandler(
      Collection<Status> codes, EventHandler handler, List<Info> directives) {
    return session.registerEventHandler(codes, handler, directives);
  }

  /** Removes a registration. */
  public CompletableFuture<Void> deregisterEventHandler(long id) {
    return session.deregisterEventHandler(id);
  }

  /** Raises an event with this tool as its source. */
  public CompletableFuture<Void> notifyEvent(Status code, DataRange range, List<Info> info) {
    return session.notifyEvent(code, range, info);
  }

  /** Sends log data to the server. */
  public CompletableFuture<Void> log(List<Info> data, List<Info> directives) {
    return session.log(data, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Spawn, job control

  /**
   * Asks the server (and its host) to start a job; completes with its namespace. The apps are
   * completed as C completes them (working directory, argv[0]) and the new job's data in the reply
   * goes to the peer store, so gets of it are local: the connector's shared spawn.
   */
  public CompletableFuture<String> spawn(List<Value.App> apps, List<Info> jobInfo) {
    return session.spawn(apps, jobInfo);
  }

  /** Job control ({@code pmix.jctrl.*} directives) over {@code targets}; the host's answer. */
  public CompletableFuture<List<Info>> jobControl(List<Proc> targets, List<Info> directives) {
    List<Proc> ts = List.copyOf(targets);
    List<Info> ds = List.copyOf(directives);
    if (ds.isEmpty()) {
      throw new IllegalArgumentException("job control needs at least one directive");
    }
    return session.request(
        () -> new JobControlRequest(ts, ds),
        r -> {
          QueryReply reply = QueryReply.decode(r);
          if (!reply.status().isSuccess()) {
            throw new PmixException(reply.status(), "job control");
          }
          return reply.info();
        });
  }

  // ---------------------------------------------------------------------------------------------
  // I/O forwarding

  /** Registers {@code handler} for the output of {@code sources}; completes with its id. */
  public CompletableFuture<Long> iofPull(
      List<Proc> sources, Set<IofChannel> channels, IofHandler handler, List<Info> directives) {
    requireNonNull(handler, "handler");
    if (channels.isEmpty() || channels.contains(IofChannel.STDIN)) {
      throw new IllegalArgumentException("pull stdout, stderr or stddiag, not " + channels);
    }
    Consumer<IofDelivery> sink =
        c ->
            handler.onOutput(
                new IofOutput(c.source(), IofChannel.fromMask(c.channel()), c.data(), c.info()));
    return session.iofPull(sources, IofChannel.mask(channels), directives, sink);
  }

  /** Ends an IOF registration. */
  public CompletableFuture<Void> iofDeregister(long id, List<Info> directives) {
    return session.iofDeregister(id, directives);
  }

  /** Sends {@code data} (null: end of input) to the standard input of {@code targets}. */
  public CompletableFuture<Void> iofPush(
      List<Proc> targets, byte @Nullable [] data, List<Info> directives) {
    if (targets.isEmpty()) {
      throw new IllegalArgumentException("no targets for stdin");
    }
    return session.iofPush(targets, data, directives);
  }

  // ---------------------------------------------------------------------------------------------
  // Teardown

  /**
   * The last finalize, through the tool's own path: the session's teardown (FINALIZE and its
   * answer, at most two seconds; the socket closed; pending work failed with ERR_INIT; both
   * threads stopped and waited for; registrations, IOF sinks and the peer store dropped), then the
   * tool's remembered choices (settings with the tmpdirs, candidates, the chosen server) are
   * forgotten.
   */
  @Override
  public void shutdown(List<Info> directives) {
    try {
      session.shutdown();
    } finally {
      forget();
    }
  }

  /** The session's resources (threads, event loop, executor, channel, store), as the client's. */
  @Override
  public Map<String, Object> resources() {
    return session.resources();
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = session.bookkeeping();
    m.put("tool.settings (identity, targets, tmpdir choices)", settings == null ? 0L : 1L);
    m.put("tool.chosenServer", chosen == null ? 0L : 1L);
    m.put("tool.candidates", (long) candidates.size());
    return m;
  }
}
