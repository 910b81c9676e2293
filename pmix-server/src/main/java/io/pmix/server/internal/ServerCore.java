package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.AbortRequest;
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.ConnectNbRequest;
import io.pmix.common.internal.message.DeregEventsRequest;
import io.pmix.common.internal.message.DisconnectNbRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.GroupConstructRequest;
import io.pmix.common.internal.message.GroupDestructRequest;
import io.pmix.common.internal.message.FinalizeRequest;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.common.internal.message.JobControlRequest;
import io.pmix.common.internal.message.LogRequest;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.MonitorRequest;
import io.pmix.common.internal.message.NotifyRequest;
import io.pmix.common.internal.message.PublishNbRequest;
import io.pmix.common.internal.message.QueryRequest;
import io.pmix.common.internal.message.RegEventsRequest;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.message.Request;
import io.pmix.common.internal.message.SpawnNbRequest;
import io.pmix.common.internal.message.UnpublishNbRequest;
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
import io.pmix.server.internal.gds.SharedStores;
import io.pmix.server.internal.modex.Modex;
import io.pmix.server.internal.modex.ProcData;
import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The server's core on its progress thread: it builds the parts, decodes each request once with
 * its message record and routes it to the part that owns the command (the dispatch table), checks
 * that it runs on the loop, and orders the shutdown.
 * What happens to peers, ranks and namespaces is {@link PeerLifecycle}'s; who may connect is
 * {@link Admission}'s; fences and connect/disconnect are {@link Collectives}'; GET and the modex
 * are {@link Modex}'s; events and forwarding are {@link EventRouter}'s and {@link IofRegistry}'s.
 *
 * <p>Every method must be called on {@link #loop()}; host upcalls leave through {@link
 * HostCalls} and come back through the loop. Not thread-safe by design: confinement to one thread
 * is what keeps the lifecycle rules enforceable.
 */
public final class ServerCore {
  private static final System.Logger LOG = LazyLogger.of(ServerCore.class);

  private final ProgressExecutor loop;
  private final CodecLimits limits;
  private final String hostname;
  private final Registry registry = new Registry();
  private final PeerLifecycle lifecycle;
  private final Admission admission;
  private final EventRouter events;
  private final IofRegistry iof = new IofRegistry();
  private final Modex modex;
  private final Collectives collectives;
  private final QueryResponder queryResponder;
  private final Monitors monitors;
  private final SnapshotBuilder snapshots;
  /** The dispatch table: each command served, with the record type its request decodes to. */
  private final Map<Command, Class<? extends Request>> routes = new EnumMap<>(Command.class);
  private final SharedStores stores;
  private final JobInfoResponder jobInfo;
  private final HostForwarding forwarding;
  private final JobControl jobControl;

  /** Set once a rank is registered under a user that cannot read the stores; never cleared. */
  private volatile boolean someRankCannotReadStores;
  private final CompletableFuture<Void> storesClosed = new CompletableFuture<>();
  private final Map<Command, AtomicLong> requestCounts = new EnumMap<>(Command.class);
  private boolean stopping;

  /**
   * The last FENCENB decoded, with its bytes and wire format: a job's ranks send the same fence
   * (same participants, same directives) again and again, so an equal payload reuses the
   * immutable record instead of decoding it once more per arrival; progress thread only.
   */
  private byte @Nullable [] lastFenceBytes;

  private @Nullable WireFormat lastFenceFormat;
  private @Nullable Request lastFence;

  /**
   * A core for one server.
   *
   * @param loop the progress thread
   * @param host the host's upcalls
   * @param hostExecutor where upcalls run
   * @param options the server's options
   */
  public ServerCore(ProgressExecutor loop, HostModule host, Executor hostExecutor, ServerOptions options) {
    this.loop = requireNonNull(loop, "loop");
    requireNonNull(host, "host");
    requireNonNull(options, "options");
    this.limits = CodecLimits.DEFAULT.withMaxStringBytes(options.maxMessageSize());
    String hostname = options.hostname();
    this.hostname = hostname;
    HostCalls hostCalls = new HostCalls(loop, hostExecutor);
    // One call site for all parts (each site is linked once, docs/architecture.md "Start-up of
    // pmixrun").
    BooleanSupplier stopping = this::isStopping;
    this.lifecycle =
        new PeerLifecycle(registry, host, hostCalls, hostname, stopping, new Effects());
    ToolSupport tools =
        new ToolSupport(registry, lifecycle, host, hostCalls, options, limits, stopping);
    this.stores = SharedStores.open(options, loop);
    this.admission =
        new Admission(
            registry, lifecycle, host, hostCalls, options, tools, stopping, stores.gate());
    this.events = new EventRouter(registry, host, hostCalls);
    this.monitors = new Monitors(loop, events, host, hostCalls);
    this.modex = new Modex(registry, host, hostCalls, loop, limits, hostname, stopping);
    this.collectives = new Collectives(registry, host, hostCalls, loop, limits, hostname);
    this.queryResponder = new QueryResponder(registry, host, hostCalls, options);
    this.snapshots =
        new SnapshotBuilder(registry, lifecycle, events, iof, modex, collectives, stores);
    this.jobInfo = new JobInfoResponder(hostname);
    // Another node's process's data (fence, direct modex) goes to the stores too, so the first
    // get after a collecting fence is local; a local rank's is there from its commits, and its
    // REMOTE-only keys must stay out of its local peers' sight.
    registry.onDelivered(
        (proc, values) -> {
          Namespace ns = registry.namespace(proc.nspace());
          if (ns != null
              && (ns.rankNumbers().contains(proc.rank())
                  || ns.departedRanks().contains(proc.rank()))) {
            return;
          }
          stores.store(proc.nspace(), proc.rank(), values);
        });
    this.forwarding = new HostForwarding(registry, host, hostCalls, options);
    this.jobControl = new JobControl(registry, lifecycle, host, hostCalls);
    route(Command.REQ, ReqRequest.class);
    route(Command.ABORT, AbortRequest.class);
    route(Command.COMMIT, CommitRequest.class);
    route(Command.FENCENB, FenceNbRequest.class);
    route(Command.GETNB, GetNbRequest.class);
    route(Command.FINALIZE, FinalizeRequest.class);
    route(Command.PUBLISHNB, PublishNbRequest.class);
    route(Command.LOOKUPNB, LookupNbRequest.class);
    route(Command.UNPUBLISHNB, UnpublishNbRequest.class);
    route(Command.NOTIFY, NotifyRequest.class);
    route(Command.REGEVENTS, RegEventsRequest.class);
    route(Command.DEREGEVENTS, DeregEventsRequest.class);
    route(Command.QUERY, QueryRequest.class);
    route(Command.LOG, LogRequest.class);
    route(Command.SPAWNNB, SpawnNbRequest.class);
    route(Command.JOB_CONTROL, JobControlRequest.class);
    route(Command.MONITOR, MonitorRequest.class);
    route(Command.CONNECTNB, ConnectNbRequest.class);
    route(Command.DISCONNECTNB, DisconnectNbRequest.class);
    route(Command.GROUP_CONSTRUCT, GroupConstructRequest.class);
    route(Command.GROUP_DESTRUCT, GroupDestructRequest.class);
  }

  /** Enters {@code cmd} in the dispatch table, counted (e.g. that a dstore client's get after a
   * fence needs no GETNB). */
  private void route(Command cmd, Class<? extends Request> type) {
    requestCounts.put(cmd, new AtomicLong());
    routes.put(cmd, type);
  }

  /**
   * Hands a decoded request to the part that owns its command. A switch rather than a method
   * reference per command: each of those is a call site that a fresh JVM links when the server
   * is made (~0.15 ms each with pmixrun's archive, docs/architecture.md "Start-up of pmixrun").
   * The caller has checked the record's type against the table ({@code Class.cast}).
   */
  private void handle(Command cmd, Peer p, int tag, Request q) {
    switch (cmd) {
      case REQ -> {
        // The first client's version is part of the job data (4.2.2's pmix.bfrops.mod), and a
        // dstore client reads its job data from the store as soon as it has the reply.
        if (!p.ns().isToolNamespace()) {
          p.ns().noteClientVersion(p.version());
        }
        writeJobData(p);
        jobInfo.handleReq(p, tag);
      }
      case ABORT -> forwarding.handleAbort(p, tag, (AbortRequest) q);
      case COMMIT -> {
        modex.handleCommit(p, tag, (CommitRequest) q);
        // Before any other request runs: a fence that follows finds the data in shared memory.
        ProcData d = p.ns().data().proc(p.info().rank());
        if (d != null) {
          stores.store(p.ns().name(), p.info().rank(), d.local());
        }
      }
      case FENCENB -> collectives.handleFence(p, tag, (FenceNbRequest) q);
      case GETNB -> modex.handleGet(p, tag, (GetNbRequest) q);
      case FINALIZE -> lifecycle.handleFinalize(p, tag);
      case PUBLISHNB -> forwarding.handlePublish(p, tag, (PublishNbRequest) q);
      case LOOKUPNB -> forwarding.handleLookup(p, tag, (LookupNbRequest) q);
      case UNPUBLISHNB -> forwarding.handleUnpublish(p, tag, (UnpublishNbRequest) q);
      case NOTIFY -> events.handleNotify(p, tag, (NotifyRequest) q);
      case REGEVENTS -> events.handleRegEvents(p, tag, (RegEventsRequest) q);
      case DEREGEVENTS -> events.handleDeregEvents(p, (DeregEventsRequest) q);
      case QUERY -> queryResponder.handleQuery(p, tag, (QueryRequest) q);
      case LOG -> forwarding.handleLog(p, tag, (LogRequest) q);
      case SPAWNNB -> forwarding.handleSpawn(p, tag, (SpawnNbRequest) q);
      case JOB_CONTROL -> jobControl.handle(p, tag, (JobControlRequest) q);
      case MONITOR -> monitors.handle(p, tag, (MonitorRequest) q);
      case CONNECTNB -> collectives.handleConnect(p, tag, (ConnectNbRequest) q);
      case DISCONNECTNB -> collectives.handleDisconnect(p, tag, (DisconnectNbRequest) q);
      case GROUP_CONSTRUCT -> collectives.handleGroupConstruct(p, tag, (GroupConstructRequest) q);
      case GROUP_DESTRUCT -> collectives.handleGroupDestruct(p, tag, (GroupDestructRequest) q);
      default -> throw new IllegalStateException("no handler for " + cmd);
    }
  }

  /** How many requests of each command were handed to their handler so far. Any thread. */
  public Map<String, Long> requestCounts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    requestCounts.forEach((cmd, n) -> out.put(cmd.name(), n.get()));
    return out;
  }

  /**
   * What the other parts do when a lifecycle rule fires, in the order the rules need: a
   * departure stops collectives first, then fails the waiting requests, then drops kept events.
   */
  private final class Effects implements PeerLifecycle.Effects {
    @Override
    public void peerPruned(Peer peer) {
      monitors.forget(peer);
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
    public void cycleBegins(Proc proc) {
      modex.cycleBegins(proc);
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
      stores.namespaceGone(ns.name());
      collectives.namespaceGone(ns.name());
      modex.namespaceGone(ns.name());
      events.namespaceGone(ns.name());
      iof.namespaceGone(ns);
    }
  }

  /** The progress thread. */
  public ProgressExecutor loop() {
    return loop;
  }

  private void checkLoop() {
    if (!loop.inProgressThread()) {
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
    Status st = lifecycle.registerNspace(nspace, nlocalprocs, infos);
    if (st.equals(Status.SUCCESS)) {
      stores.namespaceRegistered(nspace, nlocalprocs);
      storeJobDataOnceRegistered(nspace);
    }
    return st;
  }

  /**
   * A REQ of a namespace's client: its job data goes to the shared-memory stores, unless it is
   * there already (then only the first client's version is added).
   */
  private void writeJobData(Peer p) {
    Namespace ns = p.ns();
    if (ns.isToolNamespace() || !ns.registered()) {
      return;
    }
    storeJobData(ns);
  }

  private void storeJobData(Namespace ns) {
    try {
      JobData jd = ns.jobData(hostname);
      // Every client's REQ comes here: once the stores hold this job data, nothing is assembled
      // (the job-level map's copy was ~20 µs of each warm REQ, more in a cold server).
      if (stores.jobDataWritten(
          ns.name(), ns.jobDataGeneration(), jd.jobLevel().get(Keys.BFROPS_MODULE.name()))) {
        return;
      }
      stores.jobData(ns.name(), ns.jobDataGeneration(), withThisNode(jd, hostname), jd.perRank);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "job data of " + ns.name() + " not stored", e);
    }
  }

  /**
   * The job-level values 4.2.2 stores under WILDCARD: the loose ones and this node's node-info
   * array flattened (its keys but the host name, node id and aliases), so that e.g. {@code
   * pmix.node.size} is read from the store (docs/gds.md §3).
   */
  private static Map<String, Value> withThisNode(JobData jd, String hostname) {
    Map<String, Value> out = new java.util.LinkedHashMap<>(jd.jobLevel());
    for (Value.KVal kv : jd.realmArrays) {
      if (!Keys.NODE_INFO_ARRAY.name().equals(kv.key())
          || !(kv.value() instanceof io.pmix.common.DataArray a)
          || a.elementType() != DataType.INFO) {
        continue;
      }
      boolean mine = false;
      for (Value v : a.items()) {
        Info i = (Info) v;
        if (i.key().equals("pmix.hname") && hostname.equals(i.value().asString())) {
          mine = true;
        }
      }
      if (!mine) {
        continue;
      }
      for (Value v : a.items()) {
        Info i = (Info) v;
        String k = i.key();
        if (!k.equals("pmix.hname") && !k.equals("pmix.nodeid") && !k.equals("pmix.alias")) {
          out.putIfAbsent(k, i.value());
        }
      }
    }
    return out;
  }

  /**
   * What {@code setupFork} exports for {@code proc}'s stores ({@link SharedStores#environment}),
   * or hash alone when the host registered {@code proc} under a user that cannot read them.
   * Progress thread.
   */
  public Map<String, String> gdsEnvironment(Proc proc) {
    Namespace ns = registry.namespace(proc.nspace());
    RankInfo info = ns == null ? null : ns.rank(proc.rank());
    if (info == null || !info.hostRegistered()) {
      return stores.environment(proc.nspace());
    }
    return stores.environmentFor(proc.nspace(), info.uid());
  }

  /** The shared-memory store directories, best first (for tests and state reports). Any thread. */
  public List<java.nio.file.Path> gdsDirectories() {
    return stores.directories();
  }

  /** Removes the shared-memory stores; for a server that never started serving. */
  public void releaseStores() {
    stores.close();
  }

  /**
   * Completes on the progress thread once the shared-memory writes submitted so far have ended
   * (a namespace's registration is visible to its clients only then). Progress thread only.
   */
  public CompletableFuture<Void> storesWritten() {
    checkLoop();
    return stores.written();
  }

  /** Completes when {@link #shutdown} has removed the shared-memory stores. */
  public CompletableFuture<Void> storesClosed() {
    return storesClosed;
  }

  /** Registers a local client; creates a placeholder namespace if needed. */
  public Status registerClient(Proc proc, int uid, int gid, @Nullable Object hostObject) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    Status st = lifecycle.registerClient(proc, uid, gid, hostObject);
    if (st.equals(Status.SUCCESS)) {
      if (!stores.readableBy(uid)) {
        someRankCannotReadStores = true;
      }
      storeJobDataOnceRegistered(proc.nspace());
    }
    return st;
  }

  /**
   * What {@code setupFork} exports for the stores of any process of {@code nspace} while no rank
   * has been registered under a user that cannot read them (then the answer depends on the
   * namespace alone: {@link SharedStores#environment}), else null: ask {@link
   * #gdsEnvironment(Proc)} on the progress thread. Any thread. A launcher calls {@code setupFork} once per process while the progress thread serves
   * the processes started before; a hop to it for each one held the launcher up behind that work.
   */
  public @Nullable Map<String, String> gdsEnvironmentForAll(String nspace) {
    return someRankCannotReadStores ? null : stores.environment(nspace);
  }

  /**
   * Writes a namespace's job data to the shared-memory stores as soon as the host has registered
   * it and all its local clients: the writer thread does it while the processes start, instead of
   * at the first client's REQ, which the job's first inits then waited for (docs/gds.md §3).
   */
  private void storeJobDataOnceRegistered(String nspace) {
    Namespace ns = registry.namespace(nspace);
    if (ns != null && ns.registered() && ns.allRegistered() && ns.nlocalprocs() > 0) {
      storeJobData(ns);
    }
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
  public List<CompletableFuture<Void>> shutdown(Status status) {
    checkLoop();
    stopping = true;
    collectives.shutdown(status);
    modex.shutdown(status);
    monitors.shutdown();
    List<CompletableFuture<Void>> closes = lifecycle.closeAll();
    try {
      // After the writes under way: the writer thread removes the files, then stops.
      CompletableFuture<Void> unused =
          stores
              .closeAsync()
              .whenComplete(
                  (v, e) -> {
                    if (e != null) {
                      LOG.log(Level.WARNING, "removing the shared-memory stores failed", e);
                    }
                    storesClosed.complete(null);
                  });
    } catch (RuntimeException e) {
      // Files left behind must not stop the shutdown; a later server removes them.
      LOG.log(Level.WARNING, "removing the shared-memory stores failed", e);
      storesClosed.complete(null);
    }
    return closes;
  }

  // ============================================================================================
  // Connections and frames (called by PeerSession)
  // ============================================================================================

  /** Decides a connect request, perhaps later (a tool's; {@link Admission}). */
  public void accept(
      ServerConnection ch, ConnectRequest req, OptionalInt kernelUid,
      Consumer<Optional<Object>> done) {
    checkLoop();
    admission.accept(ch, req, kernelUid, done);
  }

  /** Decides a client's or singleton's connect request at once ({@link Admission}). */
  public Optional<Object> accept(ServerConnection ch, ConnectRequest req, OptionalInt kernelUid) {
    checkLoop();
    return admission.accept(ch, req, kernelUid);
  }

  /** The peer's socket closed ({@link PeerLifecycle#closed}). */
  public void closed(Object peerHandle) {
    checkLoop();
    lifecycle.closed((Peer) peerHandle);
  }

  /** A frame from a connected peer: its tag and payload, which the core now owns. */
  public void frame(Object peerHandle, int tag, byte[] payload) {
    checkLoop();
    Peer peer = (Peer) peerHandle;
    if (peer.closed() || stopping) {
      return;
    }
    if (Tags.isReserved(tag)) {
      // Tag 1 is a heartbeat (for the heartbeat monitors); tags 0 and 2 from a client are
      // dropped, as C does.
      if (tag == Tags.HEARTBEAT) {
        monitors.beat(peer);
      }
      return;
    }
    dispatch(peer, tag, payload);
  }

  /**
   * Decodes the request with its command's record ({@link
   * io.pmix.common.internal.message.Requests#decodeFields}) and hands it to the command's handler.
   * A command without a handler is NOT_SUPPORTED, whatever follows it; a malformed request is
   * answered with the status its decoder gives (a count beyond the limits BAD_PARAM, bytes the
   * codec cannot read its unpack status, any other flaw UNPACK_FAILURE), DEREGEVENTS, which has no
   * reply, excepted; the server keeps serving.
   */
  private void dispatch(Peer peer, int tag, byte[] bytes) {
    // The codec reads a plain array (FrameReader copied the payload into it as it arrived):
    // reading through a ByteBuf costs ~10 calls per byte (index, reference-count and bounds
    // checks), which a fresh server runs interpreted for its first hundreds of messages
    // (docs/architecture.md, "Start-up of pmixrun").
    PmixReader r = new PmixReader(WireBuffer.wrap(bytes), peer.format(), limits);
    int code = -1;
    try {
      code = r.unpackByteEnum(DataType.COMMAND);
      Optional<Command> cmd = Command.fromCode(code);
      if (cmd.isPresent() && cmd.get() == Command.REFRESH_CACHE) {
        // PMIx 5+ only: no message record yet (docs/commands.md); the handler reads its fields.
        modex.handleRefresh(peer, tag, r);
        return;
      }
      Class<? extends Request> type = cmd.isPresent() ? routes.get(cmd.get()) : null;
      if (type == null) {
        Replies.status(peer, tag, Status.ERR_NOT_SUPPORTED);
        return;
      }
      // LOG's layout depends on the peer's version: its TIME field came with 3.0.
      boolean logWithTime =
          cmd.get() != Command.LOG
              || LogRequest.carriesTime(HostForwarding.parseVersion(peer.version())[0]);
      // GROUP_DESTRUCT's carries the members from 5.0 on (docs/commands.md §4.3).
      Request request =
          cmd.get() == Command.GROUP_DESTRUCT
              ? GroupDestructRequest.decode(r, peer.majorVersion() >= 5)
              : cmd.get() == Command.FENCENB
                  ? fence(bytes, peer.format(), r)
                  : io.pmix.common.internal.message.Requests.decodeFields(
                      cmd.get(), r, logWithTime);
      requireNonNull(requestCounts.get(cmd.get())).incrementAndGet();
      handle(cmd.get(), peer, tag, type.cast(request));
    } catch (PmixException e) {
      LOG.log(Level.INFO, "malformed request (command {0}) from {1}: {2}", code, peer,
          e.getMessage());
      if (code != Command.DEREGEVENTS.code()) {
        Replies.status(peer, tag, e.status());
      }
    } catch (RuntimeException e) {
      // A handler that meets what its record let through (a value of an unexpected type).
      LOG.log(Level.INFO, "unusable request (command " + code + ") from " + peer, e);
      if (code != Command.DEREGEVENTS.code()) {
        Replies.status(peer, tag, Status.ERR_UNPACK_FAILURE);
      }
    }
  }

  /** A FENCENB's record: the last one's when {@code bytes} are its bytes in the same format. */
  private Request fence(byte[] bytes, WireFormat format, PmixReader r) {
    Request last = lastFence;
    if (last != null && format.equals(lastFenceFormat) && Arrays.equals(bytes, lastFenceBytes)) {
      return last;
    }
    Request q = io.pmix.common.internal.message.Requests.decodeFields(Command.FENCENB, r, true);
    lastFence = q;
    lastFenceBytes = bytes;
    lastFenceFormat = format;
    return q;
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
      ServerConnection ch, Namespace ns, RankInfo info, ServerSnapshot.Role role, WireFormat format,
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
