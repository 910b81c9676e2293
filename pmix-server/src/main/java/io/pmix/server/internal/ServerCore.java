package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.Tags;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.collective.Collectives;
import io.pmix.server.internal.events.EventRouter;
import io.pmix.server.internal.events.IofRegistry;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.PeerLifecycle;
import io.pmix.server.internal.lifecycle.RankInfo;
import io.pmix.server.internal.lifecycle.Registry;
import io.pmix.server.internal.modex.Modex;
import java.lang.System.Logger.Level;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The server's core on its progress thread: it builds the parts, routes each command to the part
 * that owns it (the dispatch table), checks that it runs on the loop, and orders the shutdown.
 * What happens to peers, ranks and namespaces is {@link PeerLifecycle}'s; who may connect is
 * {@link Admission}'s; fences and connect/disconnect are {@link Collectives}'; GET and the modex
 * are {@link Modex}'s; events and forwarding are {@link EventRouter}'s and {@link IofRegistry}'s.
 *
 * <p>Every method must be called on {@link #loop()}; host upcalls leave through {@link
 * HostCalls} and come back through the loop. Not thread-safe by design: confinement to one thread
 * is what keeps the lifecycle rules enforceable.
 */
public final class ServerCore {
  private static final System.Logger LOG = System.getLogger(ServerCore.class.getName());

  /** A command's handler: the peer, the request's tag, the body after the command byte. */
  private interface Handler {
    void handle(Peer peer, int tag, PmixReader body);
  }

  private final EventLoop loop;
  private final CodecLimits limits;
  private final Registry registry = new Registry();
  private final PeerLifecycle lifecycle;
  private final Admission admission;
  private final EventRouter events;
  private final IofRegistry iof = new IofRegistry();
  private final Modex modex;
  private final Collectives collectives;
  private final QueryResponder queryResponder;
  private final SnapshotBuilder snapshots;
  private final Map<Command, Handler> handlers = new EnumMap<>(Command.class);
  private boolean stopping;

  /**
   * A core for one server.
   *
   * @param loop the progress thread
   * @param host the host's upcalls
   * @param hostExecutor where upcalls run
   * @param options the server's options
   */
  public ServerCore(EventLoop loop, HostModule host, Executor hostExecutor, ServerOptions options) {
    this.loop = requireNonNull(loop, "loop");
    requireNonNull(host, "host");
    requireNonNull(options, "options");
    this.limits = CodecLimits.DEFAULT.withMaxStringBytes(options.maxMessageSize());
    String hostname = options.hostname();
    HostCalls hostCalls = new HostCalls(loop, hostExecutor);
    this.lifecycle =
        new PeerLifecycle(registry, host, hostCalls, hostname, this::isStopping, new Effects());
    ToolSupport tools =
        new ToolSupport(registry, lifecycle, host, hostCalls, options, limits, this::isStopping);
    this.admission =
        new Admission(registry, lifecycle, host, hostCalls, options, tools, this::isStopping);
    this.events = new EventRouter(registry, host, hostCalls, limits);
    this.modex = new Modex(registry, host, hostCalls, loop, limits, hostname, this::isStopping);
    this.collectives = new Collectives(registry, host, hostCalls, loop, limits, hostname);
    this.queryResponder = new QueryResponder(registry, host, hostCalls, options);
    this.snapshots = new SnapshotBuilder(registry, lifecycle, events, iof, modex, collectives);
    JobInfoResponder jobInfo = new JobInfoResponder(hostname);
    HostForwarding forwarding = new HostForwarding(registry, host, hostCalls, limits, options);

    handlers.put(Command.REQ, (p, tag, r) -> jobInfo.handleReq(p, tag));
    handlers.put(Command.ABORT, forwarding::handleAbort);
    handlers.put(Command.COMMIT, modex::handleCommit);
    handlers.put(Command.FENCENB, collectives::handleFence);
    handlers.put(Command.GETNB, modex::handleGet);
    handlers.put(Command.REFRESH_CACHE, modex::handleRefresh);
    handlers.put(Command.FINALIZE, (p, tag, r) -> lifecycle.handleFinalize(p, tag));
    handlers.put(Command.PUBLISHNB, forwarding::handlePublish);
    handlers.put(Command.LOOKUPNB, (p, tag, r) -> forwarding.handleLookup(p, tag, r, true));
    handlers.put(Command.UNPUBLISHNB, (p, tag, r) -> forwarding.handleLookup(p, tag, r, false));
    handlers.put(Command.NOTIFY, events::handleNotify);
    handlers.put(Command.REGEVENTS, events::handleRegEvents);
    handlers.put(Command.DEREGEVENTS, (p, tag, r) -> events.handleDeregEvents(p, r));
    handlers.put(Command.QUERY, (p, tag, r) -> queryResponder.handleQuery(p, tag, r, limits));
    handlers.put(Command.LOG, forwarding::handleLog);
    handlers.put(Command.SPAWNNB, forwarding::handleSpawn);
    handlers.put(
        Command.CONNECTNB, (p, tag, r) -> collectives.handleConnect(p, tag, r, Command.CONNECTNB));
    handlers.put(
        Command.DISCONNECTNB,
        (p, tag, r) -> collectives.handleConnect(p, tag, r, Command.DISCONNECTNB));
  }

  /**
   * What the other parts do when a lifecycle rule fires, in the order the rules need: a
   * departure stops collectives first, then fails the waiting requests, then drops kept events.
   */
  private final class Effects implements PeerLifecycle.Effects {
    @Override
    public void peerPruned(Peer peer) {
      events.forget(peer);
      iof.forget(peer);
      modex.dropGetsOf(peer);
    }

    @Override
    public void rankFinalized(Proc proc) {
      modex.failWaitsFor(proc, Status.ERR_NOT_FOUND);
      events.forgetTarget(proc);
    }

    @Override
    public void rankDeparted(Proc proc, Status why) {
      collectives.rankDeparted(proc);
      modex.failWaitsFor(proc, why);
      events.forgetTarget(proc);
    }

    @Override
    public void rankReturned(Proc proc) {
      collectives.rankReturned(proc);
    }

    @Override
    public void registrationChanged(Namespace ns) {
      modex.registrationChanged(ns);
      collectives.registrationChanged();
    }

    @Override
    public void namespaceGone(Namespace ns) {
      collectives.namespaceGone(ns.name());
      modex.namespaceGone(ns.name());
      events.namespaceGone(ns.name());
      iof.namespaceGone(ns);
    }
  }

  /** The progress thread. */
  public EventLoop loop() {
    return loop;
  }

  private void checkLoop() {
    if (!loop.inEventLoop()) {
      throw new IllegalStateException("ServerCore used off its progress thread");
    }
  }

  private boolean isStopping() {
    return stopping;
  }

  // ============================================================================================
  // Host-facing API (called on the progress thread by PMIxServer)
  // ============================================================================================

  /** Registers (or re-registers) a namespace; SUCCESS or the reason it was refused. */
  public Status registerNspace(String nspace, int nlocalprocs, List<Info> infos) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    return lifecycle.registerNspace(nspace, nlocalprocs, infos);
  }

  /** Registers a local client; creates a placeholder namespace if needed. */
  public Status registerClient(Proc proc, int uid, int gid, @Nullable Object hostObject) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    return lifecycle.registerClient(proc, uid, gid, hostObject);
  }

  /** Deregisters a client (docs/lifecycle.md §6.2.5, {@link PeerLifecycle#deregisterClient}). */
  public Status deregisterClient(Proc proc) {
    checkLoop();
    return lifecycle.deregisterClient(proc);
  }

  /** Deregisters a namespace (docs/lifecycle.md §6.2.6, {@link PeerLifecycle#deregisterNspace}). */
  public Status deregisterNspace(String nspace) {
    checkLoop();
    return lifecycle.deregisterNspace(nspace);
  }

  /** Registers cleanup for a rank (run at its deregistration) or a namespace (wildcard rank). */
  public Status registerEpilog(Proc proc, Runnable epilog) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    return lifecycle.registerEpilog(proc, epilog);
  }

  /**
   * Records the pid and executable of a registered local process, reported to tools in the
   * process table ({@code pmix.qry.ptable}).
   */
  public Status setProcInfo(Proc proc, int pid, @Nullable String executable) {
    checkLoop();
    return queryResponder.setProcInfo(proc, pid, executable);
  }

  /** Sets the host attributes reported to tools for {@code function} ({@code pattrs --host}). */
  public Status registerAttributes(String function, List<Value.RegAttr> attrs) {
    checkLoop();
    queryResponder.registerAttributes(function, attrs);
    return Status.SUCCESS;
  }

  /**
   * Pushes an event to the local clients registered for it ({@link EventRouter#notifyLocal}).
   *
   * @param range the {@code pmix_data_range_t} code
   * @param except a peer not to deliver to (the raiser), or null
   */
  public Status notifyLocal(
      Status code, Proc source, int range, List<Info> info, @Nullable Peer except) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    events.notifyLocal(code, source, range, info, except);
    return Status.SUCCESS;
  }

  /** The host asks for a local process's data for another node ({@link Modex#dmodexRequest}). */
  public void dmodexRequest(Proc proc, List<Info> directives, CompletableFuture<byte[]> result) {
    checkLoop();
    modex.dmodexRequest(proc, directives, result);
  }

  /** A copy of the bookkeeping. */
  public ServerSnapshot snapshot() {
    checkLoop();
    return snapshots.build();
  }

  /**
   * Stops serving: new work is refused, collectives and waiting requests are answered with
   * {@code status}, then every connection is closed. The listener is the caller's to close first.
   */
  public List<ChannelFuture> shutdown(Status status) {
    checkLoop();
    stopping = true;
    collectives.shutdown(status);
    modex.shutdown(status);
    return lifecycle.closeAll();
  }

  // ============================================================================================
  // Connections and frames (called by PeerHandler)
  // ============================================================================================

  /** Decides a connect request, perhaps later (a tool's; {@link Admission}). */
  public void accept(
      Channel ch, ConnectRequest req, OptionalInt kernelUid, Consumer<Optional<Object>> done) {
    checkLoop();
    admission.accept(ch, req, kernelUid, done);
  }

  /** Decides a client's or singleton's connect request at once ({@link Admission}). */
  public Optional<Object> accept(Channel ch, ConnectRequest req, OptionalInt kernelUid) {
    checkLoop();
    return admission.accept(ch, req, kernelUid);
  }

  /** The peer's socket closed ({@link PeerLifecycle#closed}). */
  public void closed(Object peerHandle) {
    checkLoop();
    lifecycle.closed((Peer) peerHandle);
  }

  /** A frame from a connected peer; the frame is released here. */
  public void frame(Object peerHandle, Frame frame) {
    checkLoop();
    Peer peer = (Peer) peerHandle;
    try {
      if (peer.closed() || stopping) {
        return;
      }
      int tag = frame.tag();
      if (Tags.isReserved(tag)) {
        // Tag 1 heartbeat: no monitor yet. Tags 0 and 2 from a client are dropped, as C does.
        return;
      }
      dispatch(peer, tag, frame.payload());
    } finally {
      frame.release();
    }
  }

  /**
   * Hands the request to its command's handler. An unknown command is NOT_SUPPORTED; a malformed
   * request is answered with its unpack status (DEREGEVENTS, which has no reply, excepted), and
   * the server keeps serving.
   */
  private void dispatch(Peer peer, int tag, ByteBuf payload) {
    PmixReader r = new PmixReader(payload, peer.format(), limits);
    int code = -1;
    try {
      code = r.unpackByteEnum(DataType.COMMAND);
      Handler h = Command.fromCode(code).map(handlers::get).orElse(null);
      if (h == null) {
        Replies.status(peer, tag, Status.ERR_NOT_SUPPORTED);
        return;
      }
      h.handle(peer, tag, r);
    } catch (PmixException e) {
      LOG.log(Level.INFO, "malformed request (command {0}) from {1}: {2}", code, peer,
          e.getMessage());
      if (code != Command.DEREGEVENTS.code()) {
        Replies.status(peer, tag, e.status());
      }
    } catch (RuntimeException e) {
      // A value of the wrong type where a field needs another: the peer's bytes are wrong.
      LOG.log(Level.INFO, "unusable request (command " + code + ") from " + peer, e);
      if (code != Command.DEREGEVENTS.code()) {
        Replies.status(peer, tag, Status.ERR_UNPACK_FAILURE);
      }
    }
  }

  // ============================================================================================
  // Seams for the unit tests of this package
  // ============================================================================================

  /** The registry (read it; the lifecycle changes it). */
  Registry registry() {
    return registry;
  }

  /** The peer in slot {@code index}, or null. */
  @Nullable Peer peerAt(int index) {
    return registry.peerAt(index);
  }

  /** Attaches a peer as a connection would ({@link PeerLifecycle#attach}). */
  Peer attach(
      Channel ch, Namespace ns, RankInfo info, ServerSnapshot.Role role, WireFormat format,
      String version) {
    return lifecycle.attach(ch, ns, info, role, format, version);
  }

  /** Records an I/O-forwarding request of a connected peer (no IOF command handler yet). */
  void addIofRequest(Peer requester, List<Proc> sources, int channels) {
    checkLoop();
    iof.add(requester, sources, channels);
  }

  /** The namespace's finalized count ({@link PeerLifecycle#nfinalized}). */
  int nfinalized(Namespace ns) {
    return lifecycle.nfinalized(ns);
  }

  /** The number of collectives in progress. */
  int activeFences() {
    return collectives.active();
  }
}
