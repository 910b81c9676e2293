package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.BufferType;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.Tags;
import io.pmix.common.internal.wire.ToolReply;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The server's protocol state and logic, owned by the progress thread: the peer slot array, the
 * namespaces and their ranks, fence trackers, parked GETs and direct-modex requests, and the
 * command handlers. Every method must be called on {@link #loop()}; host upcalls leave through
 * {@link #callHost} and come back through the loop. Not thread-safe by design: confinement to one
 * thread is what keeps the lifecycle rules enforceable.
 */
public final class ServerCore {
  private static final System.Logger LOG = System.getLogger(ServerCore.class.getName());

  /** The GETNB wait for a local target's commit when the caller gave no timeout (as 4.2.2). */
  static final int DEFAULT_LOCAL_GET_TIMEOUT_SECONDS = 2;

  private static final int SCOPE_LOCAL = 1;
  private static final int SCOPE_REMOTE = 2;
  private static final int SCOPE_GLOBAL = 3;
  private static final int RANGE_LOCAL = 2;
  private static final int RANGE_NAMESPACE = 3;
  private static final int RANGE_CUSTOM = 6;
  private static final int RANGE_PROC_LOCAL = 7;
  /** {@code PMIX_EVENT_CUSTOM_RANGE}: the target procs of a {@code PMIX_RANGE_CUSTOM} event. */
  private static final String EVENT_CUSTOM_RANGE = "pmix.evrange";
  /** At most this many events are kept for late targets (OpenPMIx's default max_events). */
  static final int MAX_CACHED_NOTIFICATIONS = 512;

  private final EventLoop loop;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final ServerOptions options;
  private final CodecLimits limits;

  /** Slot array: a peer's index is its position; null marks a free slot. */
  private final List<@Nullable Peer> peers = new ArrayList<>();

  private final Map<String, Namespace> namespaces = new LinkedHashMap<>();
  private final List<FenceTracker> trackers = new ArrayList<>();
  /** GETs waiting for a local target's commit (or registration), by target. */
  private final Map<Proc, List<PendingGet>> localWaits = new HashMap<>();
  /** GETs waiting for the host's direct modex, by target; a key exists while the upcall runs. */
  private final Map<Proc, List<PendingGet>> dmodexWaits = new HashMap<>();
  /** Targeted events kept for targets that had not registered for them, oldest first. */
  private final ArrayDeque<CachedNotification> cachedNotifications = new ArrayDeque<>();
  /** I/O-forwarding requests of connected peers. */
  private final List<IofRequest> iofRequests = new ArrayList<>();

  private boolean stopping;

  /** Tool and launcher handshakes and the namespaces made for tools. */
  private final ToolSupport tools;
  /** QUERY answers from the server's own knowledge. */
  private final QueryResponder queryResponder;

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
    this.host = requireNonNull(host, "host");
    this.hostCalls = new HostCalls(loop, hostExecutor);
    this.options = requireNonNull(options, "options");
    this.limits = CodecLimits.DEFAULT.withMaxStringBytes(options.maxMessageSize());
    this.tools = new ToolSupport(this, host, hostCalls, options, limits);
    this.queryResponder = new QueryResponder(this, host, hostCalls, options);
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

  /** The namespaces by name (for {@link ToolSupport} and {@link QueryResponder}). */
  Map<String, Namespace> namespaceMap() {
    return namespaces;
  }

  /** The peer in slot {@code index}, or null. */
  @Nullable Peer peerAt(int index) {
    return index >= 0 && index < peers.size() ? peers.get(index) : null;
  }

  /** Whether shutdown has begun. */
  boolean isStopping() {
    return stopping;
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

  // ============================================================================================
  // Host-facing API (called on the progress thread by PMIxServer)
  // ============================================================================================

  /** Registers (or re-registers) a namespace; SUCCESS or the reason it was refused. */
  public Status registerNspace(String nspace, int nlocalprocs, List<Info> infos) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    Namespace ns = namespaces.get(nspace);
    boolean created = ns == null;
    if (created) {
      ns = new Namespace(nspace);
    }
    Namespace target = ns;
    int oldLocal = target.nlocalprocs;
    boolean oldRegistered = target.registered;
    List<Info> oldInfos = target.infos;
    target.registered = true;
    target.nlocalprocs = nlocalprocs;
    target.registeredNlocalprocs = nlocalprocs;
    target.infos = List.copyOf(infos);
    target.invalidate();
    try {
      // Build now so a malformed registration is refused here, not at the first client's REQ.
      JobData unused = target.jobData(options.hostname());
    } catch (PmixException e) {
      target.registered = oldRegistered;
      target.nlocalprocs = oldLocal;
      target.registeredNlocalprocs = oldLocal;
      target.infos = oldInfos;
      target.invalidate();
      return e.status();
    } catch (RuntimeException e) {
      target.registered = oldRegistered;
      target.nlocalprocs = oldLocal;
      target.registeredNlocalprocs = oldLocal;
      target.infos = oldInfos;
      target.invalidate();
      return Status.ERR_BAD_PARAM;
    }
    if (created) {
      namespaces.put(nspace, target);
    }
    // The host's count is authoritative again: nothing is subtracted from it any more.
    target.departedRanks.clear();
    registrationChanged(target);
    return Status.SUCCESS;
  }

  /** Registers a local client; creates a placeholder namespace if needed (register-nspace NOTES). */
  public Status registerClient(Proc proc, int uid, int gid, @Nullable Object hostObject) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    if (proc.isSpecialRank()) {
      return Status.ERR_BAD_PARAM;
    }
    Namespace ns = namespaces.computeIfAbsent(proc.nspace(), Namespace::new);
    RankInfo info = ns.ranks.get(proc.rank());
    if (info == null) {
      info = new RankInfo(proc.rank(), uid, gid, hostObject);
      ns.ranks.put(proc.rank(), info);
    } else {
      // Re-registration updates the registration in place: its live peers keep pointing at it.
      info.uid = uid;
      info.gid = gid;
      info.hostObject = hostObject;
    }
    info.hostRegistered = true;
    // A rank the host deregistered, or whose process died, is a local process again: the host
    // registers it before it starts it anew.
    rankReturned(ns, proc.rank());
    ns.invalidate();
    registrationChanged(ns);
    return Status.SUCCESS;
  }

  /**
   * Deregisters a client (init-finalize-lifecycle.txt section 6.2.5): every peer of the rank
   * (live ones closed, the tombstone of a finalized cycle, clones) is released and its slot
   * nulled, the registration removed, requests waiting on the rank answered NOT_FOUND, fences
   * told it departed. Job data stays. Then the "all local processes finalized" check (once per
   * namespace) and the rank's epilogs.
   */
  public Status deregisterClient(Proc proc) {
    checkLoop();
    Namespace ns = namespaces.get(proc.nspace());
    RankInfo info = ns == null ? null : ns.ranks.get(proc.rank());
    if (ns == null || info == null) {
      return Status.ERR_NOT_FOUND;
    }
    removeRank(ns, info);
    if (allLocalFinalized(ns)) {
      fireLocalAppFinalized(ns);
    }
    hostCalls.runEpilogs(List.copyOf(info.epilogs));
    return Status.SUCCESS;
  }

  /** Releases a rank for good: its peers, its registration and whatever waits on it. */
  private void removeRank(Namespace ns, RankInfo info) {
    for (Peer p : peersOf(ns)) {
      if (p.info == info) {
        releasePeer(p);
      }
    }
    Proc proc = Proc.of(ns.name, info.rank);
    rankDeparted(proc);
    failWaitsFor(proc, Status.ERR_NOT_FOUND);
    pruneCachedTargets(proc);
    ns.ranks.remove(info.rank);
    info.peerIndex = -1;
    info.procCount = 0;
    // The host says this local process is gone: it no longer counts in nlocalprocs.
    if (!ns.departedRanks.contains(info.rank) && ns.nlocalprocs > 0) {
      ns.departedRanks.add(info.rank);
      ns.nlocalprocs--;
    }
  }

  /**
   * Deregisters a namespace (section 6.2.6): every peer and rank released, job and modex data
   * dropped, and every registration, request, cached notification and fence naming it purged, so
   * that nothing names it afterwards. Then the "all local processes finalized" notification if it
   * did not fire yet, and the epilogs of its ranks and of the namespace.
   */
  public Status deregisterNspace(String nspace) {
    checkLoop();
    Namespace ns = namespaces.get(nspace);
    if (ns == null) {
      return Status.ERR_NOT_FOUND;
    }
    boolean hadLocal = !ns.ranks.isEmpty() || !ns.departedRanks.isEmpty();
    List<RankInfo> ranks = new ArrayList<>(ns.ranks.values());
    for (Peer p : peersOf(ns)) {
      releasePeer(p);
    }
    for (RankInfo r : ranks) {
      r.peerIndex = -1;
      r.procCount = 0;
    }
    ns.ranks.clear();
    // Fences naming the namespace cannot complete as asked any more: answer whoever still waits.
    for (FenceTracker t : new ArrayList<>(trackers)) {
      if (t.namesNamespace(nspace)) {
        completeFence(t, Status.ERR_LOST_CONNECTION);
      }
    }
    // Requests waiting on this namespace's processes can no longer be satisfied.
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (Iterator<Map.Entry<Proc, List<PendingGet>>> it = waits.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<Proc, List<PendingGet>> e = it.next();
        if (e.getKey().nspace().equals(nspace)) {
          for (PendingGet g : e.getValue()) {
            finishGet(g, Status.ERR_NOT_FOUND);
          }
          it.remove();
        }
      }
    }
    // Cached events from or for its processes, forwarding from them.
    cachedNotifications.removeIf(n -> n.source.nspace().equals(nspace));
    for (CachedNotification n : cachedNotifications) {
      n.pending.removeIf(t -> t.nspace().equals(nspace));
    }
    cachedNotifications.removeIf(n -> n.pending.isEmpty());
    for (IofRequest r : iofRequests) {
      r.sources.removeIf(src -> src.nspace().equals(nspace));
    }
    iofRequests.removeIf(r -> r.sources.isEmpty() || r.requester.ns == ns);
    namespaces.remove(nspace);
    if (hadLocal) {
      // The whole job is gone: every local process counts as done (C reaches nlocalprocs ==
      // nfinalized while it walks the ranks); the latch keeps it to one notification.
      fireLocalAppFinalized(ns);
    }
    List<Runnable> epilogs = new ArrayList<>();
    for (RankInfo r : ranks) {
      epilogs.addAll(r.epilogs);
    }
    epilogs.addAll(ns.epilogs);
    hostCalls.runEpilogs(epilogs);
    return Status.SUCCESS;
  }

  /** Registers cleanup for a rank (run at its deregistration) or a namespace (wildcard rank). */
  public Status registerEpilog(Proc proc, Runnable epilog) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    Namespace ns = namespaces.get(proc.nspace());
    if (ns == null) {
      return Status.ERR_NOT_FOUND;
    }
    if (proc.rank() == Proc.RANK_WILDCARD) {
      ns.epilogs.add(epilog);
      return Status.SUCCESS;
    }
    RankInfo info = ns.ranks.get(proc.rank());
    if (info == null) {
      return Status.ERR_NOT_FOUND;
    }
    info.epilogs.add(epilog);
    return Status.SUCCESS;
  }

  /**
   * The "all local processes finalized" condition ({@code nlocalprocs == nfinalized}) counted by
   * rank rather than by connection, so clones cannot count twice: every rank still counted in
   * nlocalprocs has a finalized peer and no active one.
   */
  private boolean allLocalFinalized(Namespace ns) {
    if (ns.nlocalprocs < 0) {
      return false;
    }
    int done = 0;
    for (RankInfo r : ns.ranks.values()) {
      if (ns.departedRanks.contains(r.rank)) {
        continue;
      }
      boolean finalized = false;
      boolean active = false;
      for (Peer p : peers) {
        if (p != null && p.info == r) {
          finalized |= p.finalized();
          active |= p.state == ServerSnapshot.PeerState.ACTIVE;
        }
      }
      if (finalized && !active) {
        done++;
      }
    }
    return done >= ns.nlocalprocs;
  }

  /** Tells the host, once per namespace, that all of its local processes finalized. */
  private void fireLocalAppFinalized(Namespace ns) {
    if (ns.localAppFiniFired) {
      return;
    }
    ns.localAppFiniFired = true;
    String name = ns.name;
    hostCalls.call(() -> host.localAppFinalized(name), (v, failure) -> {});
  }

  /** A copy of the bookkeeping. */
  public ServerSnapshot snapshot() {
    checkLoop();
    List<ServerSnapshot.PeerView> pv = new ArrayList<>();
    List<ServerSnapshot.Reference> refs = new ArrayList<>();
    for (Peer p : peers) {
      if (p != null) {
        pv.add(new ServerSnapshot.PeerView(p.index, p.ns.name, p.info.rank, p.role, p.state));
        if (p.defaultEvents || !p.eventCodes.isEmpty()) {
          refs.add(
              new ServerSnapshot.Reference(
                  ServerSnapshot.ReferenceKind.EVENT_REGISTRATION, p.index, p.ns.name, p.info.rank));
        }
      }
    }
    Map<String, ServerSnapshot.NamespaceView> nv = new LinkedHashMap<>();
    for (Namespace ns : namespaces.values()) {
      Map<Integer, ServerSnapshot.RankView> rv = new LinkedHashMap<>();
      for (RankInfo r : ns.ranks.values()) {
        rv.put(r.rank, new ServerSnapshot.RankView(r.rank, r.uid, r.gid, r.procCount, r.peerIndex));
      }
      nv.put(
          ns.name,
          new ServerSnapshot.NamespaceView(
              ns.name, ns.registered, ns.nlocalprocs, ns.nfinalized, ns.localAppFiniFired, rv));
    }
    for (IofRequest r : iofRequests) {
      for (Proc src : r.sources) {
        refs.add(
            new ServerSnapshot.Reference(
                ServerSnapshot.ReferenceKind.IOF_REQUEST, slotOf(r.requester), src.nspace(),
                src.rank()));
      }
    }
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (List<PendingGet> l : waits.values()) {
        for (PendingGet g : l) {
          if (g.done) {
            continue;
          }
          Peer requester = g.requester();
          refs.add(
              requester == null
                  ? new ServerSnapshot.Reference(
                      ServerSnapshot.ReferenceKind.DMODEX_REQUEST, -1, g.target.nspace(),
                      g.target.rank())
                  : new ServerSnapshot.Reference(
                      ServerSnapshot.ReferenceKind.PENDING_GET, slotOf(requester),
                      g.target.nspace(), g.target.rank()));
        }
      }
    }
    for (CachedNotification n : cachedNotifications) {
      refs.add(
          new ServerSnapshot.Reference(
              ServerSnapshot.ReferenceKind.CACHED_NOTIFICATION, -1, n.source.nspace(),
              n.source.rank()));
      for (Proc t : n.pending) {
        refs.add(
            new ServerSnapshot.Reference(
                ServerSnapshot.ReferenceKind.CACHED_NOTIFICATION, -1, t.nspace(), t.rank()));
      }
    }
    for (FenceTracker t : trackers) {
      for (Proc q : t.procs) {
        refs.add(
            new ServerSnapshot.Reference(
                ServerSnapshot.ReferenceKind.COLLECTIVE, -1, q.nspace(), q.rank()));
      }
    }
    return new ServerSnapshot(pv, nv, refs);
  }

  /** The peer's slot while it occupies one, else -1 (a released peer). */
  private int slotOf(Peer p) {
    return p.index < peers.size() && peers.get(p.index) == p ? p.index : -1;
  }

  /**
   * Pushes an event to the local clients registered for it (tag-0 NOTIFY), as the host's {@code
   * PMIx_Notify_event} does for local delivery. A {@code PMIX_RANGE_CUSTOM} event goes only to
   * the procs its {@code pmix.evrange} names; those of them that are registered local ranks
   * without a registration for the code yet get it when they register, unless they finalize,
   * die or are deregistered first (the notification cache).
   */
  public Status notifyLocal(Status code, Proc source, int range, List<Info> info, @Nullable Peer except) {
    checkLoop();
    if (stopping) {
      return Status.ERR_NOT_AVAILABLE;
    }
    List<Proc> targets = range == RANGE_CUSTOM ? customTargets(info) : null;
    Set<Proc> delivered = new HashSet<>();
    if (except != null) {
      delivered.add(except.proc);
    }
    for (Peer p : peers) {
      if (p == null || p == except || !p.active()) {
        continue;
      }
      if (targets != null && !names(targets, p.proc)) {
        continue;
      }
      if (!registeredFor(p, code)) {
        continue;
      }
      if (range == RANGE_NAMESPACE && !p.ns.name.equals(source.nspace())) {
        continue;
      }
      sendNotify(p, code, source, range, info);
      delivered.add(p.proc);
    }
    if (targets != null) {
      cacheForLateTargets(new CachedNotification(code, source, range, info), targets, delivered);
    }
    return Status.SUCCESS;
  }

  private static boolean registeredFor(Peer p, Status code) {
    return p.defaultEvents || p.eventCodes.contains(code.code());
  }

  private static boolean names(List<Proc> procs, Proc p) {
    for (Proc q : procs) {
      if (q.nspace().equals(p.nspace())
          && (q.rank() == Proc.RANK_WILDCARD || q.rank() == p.rank())) {
        return true;
      }
    }
    return false;
  }

  /** The procs of a {@code pmix.evrange} info: one PROC or an array of them. */
  private static List<Proc> customTargets(List<Info> info) {
    List<Proc> out = new ArrayList<>();
    for (Info i : info) {
      if (!i.key().equals(EVENT_CUSTOM_RANGE)) {
        continue;
      }
      if (i.value() instanceof Proc p) {
        out.add(p);
      } else if (i.value() instanceof DataArray a) {
        for (Value v : a.items()) {
          if (v instanceof Proc p) {
            out.add(p);
          }
        }
      }
    }
    return out;
  }

  /** Keeps a targeted event for the registered local targets it did not reach. */
  private void cacheForLateTargets(CachedNotification n, List<Proc> targets, Set<Proc> delivered) {
    for (Proc t : targets) {
      Namespace ns = namespaces.get(t.nspace());
      if (ns == null) {
        continue;
      }
      if (t.rank() == Proc.RANK_WILDCARD) {
        for (int r : ns.ranks.keySet()) {
          Proc q = Proc.of(ns.name, r);
          if (!delivered.contains(q)) {
            n.pending.add(q);
          }
        }
      } else if (ns.ranks.containsKey(t.rank()) && !delivered.contains(t)) {
        n.pending.add(t);
      }
    }
    if (n.pending.isEmpty()) {
      return;
    }
    cachedNotifications.addLast(n);
    while (cachedNotifications.size() > MAX_CACHED_NOTIFICATIONS) {
      cachedNotifications.removeFirst();
    }
  }

  /** Delivers the cached events that wait for this peer's rank and the codes it registered. */
  private void deliverCached(Peer peer) {
    for (Iterator<CachedNotification> it = cachedNotifications.iterator(); it.hasNext(); ) {
      CachedNotification n = it.next();
      if (!n.pending.contains(peer.proc) || !registeredFor(peer, n.code)) {
        continue;
      }
      sendNotify(peer, n.code, n.source, n.range, n.info);
      n.pending.remove(peer.proc);
      if (n.pending.isEmpty()) {
        it.remove();
      }
    }
  }

  /** Forgets a target in every cached event (it finalized, died or was deregistered). */
  private void pruneCachedTargets(Proc target) {
    for (CachedNotification n : cachedNotifications) {
      n.pending.remove(target);
    }
    cachedNotifications.removeIf(n -> n.pending.isEmpty());
  }

  private void sendNotify(Peer p, Status code, Proc source, int range, List<Info> info) {
    Replies.send(
        p,
        Tags.NOTIFY,
        w -> {
          w.packByteEnum(DataType.COMMAND, Command.NOTIFY.code());
          w.packStatus(code);
          w.packProc(source);
          w.packSize(info.size());
          if (!info.isEmpty()) {
            w.packInfos(info);
          }
          w.packByteEnum(DataType.DATA_RANGE, range);
        });
  }

  /**
   * Records an I/O-forwarding request of a connected peer (for the IOF handler). Pruned with the
   * peer's other client-scoped registrations.
   */
  void addIofRequest(Peer requester, List<Proc> sources, int channels) {
    checkLoop();
    if (requester.active()) {
      iofRequests.add(new IofRequest(requester, sources, channels));
    }
  }

  /**
   * Stops serving: pending requests are answered with {@code status}, trackers and parked GETs
   * are dropped, and every connection is closed. The listener is the caller's to close first.
   */
  public List<ChannelFuture> shutdown(Status status) {
    checkLoop();
    stopping = true;
    for (FenceTracker t : new ArrayList<>(trackers)) {
      completeFence(t, status);
    }
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (List<PendingGet> l : waits.values()) {
        for (PendingGet g : l) {
          finishGet(g, status);
        }
      }
      waits.clear();
    }
    List<ChannelFuture> closes = new ArrayList<>();
    for (Peer p : peers) {
      if (p != null && !p.closed) {
        p.closed = true;
        closes.add(p.channel.close());
      }
    }
    return closes;
  }

  // ============================================================================================
  // Connection handling
  // ============================================================================================

  /**
   * Decides a connect request. Accepts by writing the reply and handing {@code done} the new
   * peer; rejects by handing it empty, after which the caller closes the socket without a byte
   * (the only rejection every C connector understands, transport.md section 7.1). Clients and
   * singletons are decided at once; a tool or launcher (with tool support on) once the host's
   * {@code toolConnected} answered ({@link ToolSupport}), always on the progress thread.
   *
   * @param kernelUid the uid owning the connector's socket, if known
   */
  public void accept(
      Channel ch, ConnectRequest req, OptionalInt kernelUid, Consumer<Optional<Object>> done) {
    checkLoop();
    if (!stopping && ToolSupport.isTool(req) && options.acceptsTools()) {
      // The host decides a tool's identity: the answer may come later.
      tools.accept(ch, req, kernelUid, done);
      return;
    }
    done.accept(accept(ch, req, kernelUid));
  }

  /**
   * Decides a client's or singleton's connect request at once; tools and launchers are refused
   * here (with tool support on, the asynchronous form hands them to {@link ToolSupport}).
   *
   * @param kernelUid the uid owning the client's socket, if known
   */
  public Optional<Object> accept(Channel ch, ConnectRequest req, OptionalInt kernelUid) {
    checkLoop();
    if (stopping) {
      return reject(req, "server is stopping");
    }
    int[] claimed;
    if (req.psecModule().equals(NativeCredential.MODULE)) {
      NativeCredential cred;
      try {
        cred = NativeCredential.fromBytes(req.credential());
      } catch (PmixException e) {
        return reject(req, e.getMessage());
      }
      claimed = new int[] {cred.uid(), cred.gid()};
    } else if (req.psecModule().equals("none") && options.allowNoneSecurity()) {
      claimed = null;
    } else {
      return reject(req, "security module " + req.psecModule() + " not offered");
    }
    if (!req.bfropsModule().equals("v41") && !req.bfropsModule().equals("v4")) {
      return reject(req, "bfrops module " + req.bfropsModule() + " not supported");
    }
    BufferType bt;
    try {
      bt = BufferType.fromCode(req.bufferType());
    } catch (PmixException e) {
      return reject(req, "buffer type " + req.bufferType());
    }
    WireFormat format = WireFormat.of(bt);
    if (req.kind() == ConnectorKind.SIMPLE_CLIENT) {
      if (!req.gdsModule().equals("hash")) {
        return reject(req, "gds module " + req.gdsModule() + " (only hash is served)");
      }
      return acceptClient(ch, req, claimed, kernelUid, format, ServerSnapshot.Role.CLIENT, true);
    }
    if (req.kind() == ConnectorKind.SINGLETON_CLIENT) {
      if (ReplyLayout.forConnector(req.kind(), req.version()) == ReplyLayout.CLIENT) {
        return acceptClient(ch, req, claimed, kernelUid, format, ServerSnapshot.Role.SINGLETON, true);
      }
      return acceptSingletonToolLayout(ch, req, claimed, kernelUid, format);
    }
    return reject(req, "tools and launchers are not supported yet");
  }

  private Optional<Object> reject(ConnectRequest req, String why) {
    LOG.log(Level.INFO, "refusing connection {0}: {1}", req, why);
    return Optional.empty();
  }

  /** major.minor.release as C reads them (strtoul, skipping one character after each). */
  static int[] parseVersion(String version) {
    int[] out = new int[3];
    int i = 0;
    for (int part = 0; part < 3 && i < version.length(); part++) {
      int start = i;
      while (i < version.length() && Character.isDigit(version.charAt(i))) {
        i++;
      }
      if (i == start) {
        break;
      }
      try {
        out[part] = Integer.parseInt(version.substring(start, i));
      } catch (NumberFormatException e) {
        break;
      }
      i++;
    }
    return out;
  }

  private Optional<Object> acceptClient(
      Channel ch,
      ConnectRequest req,
      int @Nullable [] claimed,
      OptionalInt kernelUid,
      WireFormat format,
      ServerSnapshot.Role role,
      boolean clientReply) {
    String nspace = req.nspace().orElseThrow();
    int rank = req.rank().orElseThrow();
    Namespace ns = namespaces.get(nspace);
    if (ns == null) {
      return reject(req, "namespace " + nspace + " is not registered");
    }
    RankInfo info = ns.ranks.get(rank);
    if (info == null) {
      return reject(req, "rank " + Integer.toUnsignedString(rank) + " of " + nspace + " is not registered");
    }
    if (claimed != null && (claimed[0] != info.uid || claimed[1] != info.gid)) {
      return reject(
          req,
          "credential uid/gid "
              + Integer.toUnsignedString(claimed[0])
              + "/"
              + Integer.toUnsignedString(claimed[1])
              + " differ from the registration "
              + Integer.toUnsignedString(info.uid)
              + "/"
              + Integer.toUnsignedString(info.gid));
    }
    if (req.euid().isPresent()
        && (req.euid().getAsInt() != info.uid || req.egid().getAsInt() != info.gid)) {
      return reject(req, "identity block uid/gid differ from the registration");
    }
    if (!options.trustClaimedCredentials()) {
      if (kernelUid.isEmpty()) {
        return reject(req, "the owner of the client's socket could not be determined");
      }
      if (kernelUid.getAsInt() != info.uid) {
        return reject(
            req,
            "the client's socket belongs to uid "
                + Integer.toUnsignedString(kernelUid.getAsInt())
                + ", registered uid is "
                + Integer.toUnsignedString(info.uid));
      }
    }
    Peer peer = attach(ch, ns, info, role, format, req.version());
    ByteBuf reply = ch.alloc().buffer(ClientReply.LENGTH);
    if (clientReply) {
      ClientReply.accepted(peer.index).encode(reply);
    }
    ChannelFuture unused = ch.writeAndFlush(reply);
    if (role == ServerSnapshot.Role.CLIENT) {
      Object hostObject = info.hostObject;
      hostCalls.call(
          () -> host.clientConnected(peer.proc, hostObject),
          (v, failure) -> {
            if (failure != null && !failure.equals(Status.ERR_NOT_SUPPORTED) && !peer.closed) {
              LOG.log(Level.INFO, "host refused {0}: {1}", peer, failure);
              ChannelFuture unused2 = peer.channel.close();
            }
          });
    }
    return Optional.of(peer);
  }

  private Optional<Object> acceptSingletonToolLayout(
      Channel ch, ConnectRequest req, int @Nullable [] claimed, OptionalInt kernelUid,
      WireFormat format) {
    int euid = req.euid().orElseThrow();
    int egid = req.egid().orElseThrow();
    if (claimed != null && (claimed[0] != euid || claimed[1] != egid)) {
      // A 4.2.2 singleton ignores a bad validation status and then hangs: close instead.
      return reject(req, "credential differs from the identity block");
    }
    if (!options.trustClaimedCredentials()
        && (kernelUid.isEmpty() || kernelUid.getAsInt() != euid)) {
      return reject(req, "the singleton's socket is not owned by its claimed uid");
    }
    String nspace = req.nspace().orElseThrow();
    int rank = req.rank().orElseThrow();
    Namespace ns = namespaces.computeIfAbsent(nspace, Namespace::new);
    RankInfo info = ns.ranks.get(rank);
    if (info == null) {
      info = new RankInfo(rank, euid, egid, null);
      ns.ranks.put(rank, info);
    } else if (info.uid != euid) {
      return reject(req, "singleton uid differs from its registration");
    }
    Peer peer = attach(ch, ns, info, ServerSnapshot.Role.SINGLETON, format, req.version());
    ByteBuf reply = ch.alloc().buffer(268);
    new ToolReply.Full(
            Optional.empty(),
            new PeerId(options.serverNspace(), options.serverRank()),
            Status.SUCCESS)
        .encode(reply);
    ChannelFuture unused = ch.writeAndFlush(reply);
    return Optional.of(peer);
  }

  /**
   * The one connection assignment for every role (client, singleton, tool, launcher): reclaims
   * what the rank's previous cycle left at its index (a tombstone or a lost peer: its socket is
   * closed, so that cycle is over and this is a quiescent point), takes the lowest free slot and
   * points the rank at the new peer. A peer still open at the index (a running clone, or a
   * finalizing one whose close is not processed yet) is left alone: it is freed when its own
   * close arrives, as a stranded peer.
   */
  Peer attach(
      Channel ch, Namespace ns, RankInfo info, ServerSnapshot.Role role, WireFormat format,
      String version) {
    if (info.peerIndex >= 0 && info.peerIndex < peers.size()) {
      Peer old = peers.get(info.peerIndex);
      if (old != null && old.info == info && old.closed) {
        // Reclaim on reconnect: slot nulled, its finalized count dropped, object released.
        free(old);
      }
    }
    if (ns.ranks.get(info.rank) == info) {
      // A rank whose last process died unfinalized is a local process again.
      rankReturned(ns, info.rank);
    }
    int index = peers.indexOf(null);
    if (index < 0) {
      index = peers.size();
      peers.add(null);
    }
    Peer peer = new Peer(index, ch, ns, info, role, format, version);
    peers.set(index, peer);
    info.peerIndex = index;
    info.procCount++;
    LOG.log(Level.DEBUG, "accepted {0}", peer);
    return peer;
  }

  /**
   * The peer's socket closed (lost_connection). Only the rank's live count changes for a peer
   * the rank's index still names: a finalized client becomes a tombstone, one that died becomes
   * a lost peer, both kept inert at their slot, so a collective or GET resolving the rank
   * concurrently sees nothing move. A peer no index names (displaced by a clone or a fast
   * re-init) and a pure tool are freed at once.
   */
  public void closed(Object peerHandle) {
    checkLoop();
    Peer peer = (Peer) peerHandle;
    if (peer.closed) {
      return; // the server closed it itself (deregistration, shutdown) and accounted for it
    }
    peer.closed = true;
    if (stopping || peer.index >= peers.size() || peers.get(peer.index) != peer) {
      return;
    }
    RankInfo info = peer.info;
    info.procCount = Math.max(0, info.procCount - 1);
    boolean referenced = info.peerIndex == peer.index;
    if (peer.finalized()) {
      peerFinalized(peer, referenced);
    } else {
      lostConnection(peer, referenced);
    }
    if (!peer.clientSemantics()) {
      tools.peerGone(peer);
    }
  }

  /** A finalized peer's socket dropped (pmix_server_peer_finalized). */
  private void peerFinalized(Peer peer, boolean referenced) {
    prunePeer(peer);
    if (!peer.clientSemantics()) {
      freeToolPeer(peer, referenced);
    } else if (referenced) {
      // The tombstone: nothing else is touched here.
      peer.state = ServerSnapshot.PeerState.TOMBSTONE;
    } else {
      // Stranded: a newer peer owns the rank's index. Only its own slot is nulled.
      free(peer);
    }
  }

  /**
   * An unfinalized peer's socket dropped: an abnormal termination. Collectives, parked GETs and
   * cached events stop waiting for the rank once its last process is gone (4.2.2's status);
   * nlocalprocs drops as in OpenPMIx. The peer itself is kept like a tombstone if the rank's
   * index names it.
   */
  private void lostConnection(Peer peer, boolean referenced) {
    LOG.log(Level.INFO, "lost connection to {0} before it finalized", peer);
    prunePeer(peer);
    RankInfo info = peer.info;
    Namespace ns = peer.ns;
    if (info.procCount == 0) {
      rankDeparted(peer.proc);
      failWaitsFor(peer.proc, Status.ERR_LOST_CONNECTION);
      pruneCachedTargets(peer.proc);
      if (peer.clientSemantics()
          && ns.ranks.get(info.rank) == info
          && ns.nlocalprocs > 0
          && !ns.departedRanks.contains(info.rank)) {
        // 4.2.2: a client that died without finalizing no longer counts as a local process.
        ns.departedRanks.add(info.rank);
        ns.nlocalprocs--;
      }
    }
    peer.state = ServerSnapshot.PeerState.LOST;
    if (!peer.clientSemantics()) {
      freeToolPeer(peer, referenced);
    } else if (!referenced) {
      free(peer); // stranded: only its own slot is nulled
    }
  }

  /**
   * Frees a pure tool at close and repoints its rank's index to a live sibling, or unsets it:
   * nothing resolves a tool through the index, and a finalized tool never reconnects onto its
   * rank, so it needs no tombstone.
   */
  private void freeToolPeer(Peer peer, boolean referenced) {
    free(peer);
    if (referenced) {
      RankInfo info = peer.info;
      info.peerIndex = -1;
      for (Peer sib : peers) {
        if (sib != null && sib.info == info && !sib.closed) {
          info.peerIndex = sib.index;
          break;
        }
      }
    }
  }

  /** Nulls the peer's own slot and drops the finalized count it held; idempotent. */
  private void free(Peer p) {
    if (p.index >= peers.size() || peers.get(p.index) != p) {
      return;
    }
    peers.set(p.index, null);
    if (p.countedFinalized) {
      p.countedFinalized = false;
      p.ns.nfinalized--;
    }
  }

  /** Removes a peer for good (deregistration): pruned, slot freed, socket closed. */
  private void releasePeer(Peer p) {
    prunePeer(p);
    free(p);
    if (p.info.peerIndex == p.index) {
      p.info.peerIndex = -1;
    }
    if (!p.closed) {
      p.info.procCount = Math.max(0, p.info.procCount - 1);
      p.closed = true;
      ChannelFuture unused = p.channel.close();
    }
  }

  /** Drops the client-scoped registrations a peer holds: events, forwarding, its parked GETs. */
  private void prunePeer(Peer p) {
    p.eventCodes.clear();
    p.defaultEvents = false;
    iofRequests.removeIf(r -> r.requester == p);
    dropGetsOf(p);
  }

  /** Whether another process of the peer's rank is connected and not finalized. */
  private boolean rankHasOtherActive(Peer peer) {
    for (Peer p : peers) {
      if (p != null && p != peer && p.info == peer.info && p.active()) {
        return true;
      }
    }
    return false;
  }

  private List<Peer> peersOf(Namespace ns) {
    List<Peer> out = new ArrayList<>();
    for (Peer p : peers) {
      if (p != null && p.ns == ns) {
        out.add(p);
      }
    }
    return out;
  }

  // ============================================================================================
  // Steady state
  // ============================================================================================

  /** A frame from a connected peer; the frame is released here. */
  public void frame(Object peerHandle, Frame frame) {
    checkLoop();
    Peer peer = (Peer) peerHandle;
    try {
      if (peer.closed || stopping) {
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

  private void dispatch(Peer peer, int tag, ByteBuf payload) {
    PmixReader r = new PmixReader(payload, peer.format, limits);
    int code = -1;
    try {
      code = r.unpackByteEnum(DataType.COMMAND);
      Optional<Command> cmd = Command.fromCode(code);
      if (cmd.isEmpty()) {
        Replies.status(peer, tag, Status.ERR_NOT_SUPPORTED);
        return;
      }
      switch (cmd.get()) {
        case REQ:
          handleReq(peer, tag);
          break;
        case ABORT:
          handleAbort(peer, tag, r);
          break;
        case COMMIT:
          handleCommit(peer, tag, r);
          break;
        case FENCENB:
          handleFence(peer, tag, r);
          break;
        case GETNB:
          handleGet(peer, tag, r);
          break;
        case FINALIZE:
          handleFinalize(peer, tag);
          break;
        case PUBLISHNB:
          handlePublish(peer, tag, r);
          break;
        case LOOKUPNB:
          handleLookup(peer, tag, r, true);
          break;
        case UNPUBLISHNB:
          handleLookup(peer, tag, r, false);
          break;
        case NOTIFY:
          handleNotify(peer, tag, r);
          break;
        case REGEVENTS:
          handleRegEvents(peer, tag, r);
          break;
        case DEREGEVENTS:
          handleDeregEvents(peer, r);
          break;
        case QUERY:
          handleQuery(peer, tag, r);
          break;
        case LOG:
          handleLog(peer, tag, r);
          break;
        case SPAWNNB:
          handleSpawn(peer, tag, r);
          break;
        case CONNECTNB:
        case DISCONNECTNB:
          handleConnect(peer, tag, r, cmd.get());
          break;
        default:
          Replies.status(peer, tag, Status.ERR_NOT_SUPPORTED);
          break;
      }
    } catch (PmixException e) {
      LOG.log(Level.INFO, "malformed request (command {0}) from {1}: {2}", code, peer, e.getMessage());
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

  // ---- REQ ----

  private void handleReq(Peer peer, int tag) {
    if (tools.answerReq(peer, tag)) {
      return;
    }
    Namespace ns = peer.ns;
    if (ns.bfropsVersion == null && ns.registered) {
      // 4.2.2 stores the first client's version string in the job data as pmix.bfrops.mod.
      ns.bfropsVersion = peer.version;
      ns.invalidate();
    }
    JobData jd;
    try {
      jd = ns.jobData(options.hostname());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "job data of " + ns.name + " could not be built", e);
      jd = JobData.empty(ns.nlocalprocs);
    }
    JobData data = jd;
    // The REQ reply has no status unit: the namespace, then the job data (commands.md 3.1).
    Replies.send(
        peer,
        tag,
        w -> {
          w.packString(ns.name);
          data.writeReplyBody(w, peer.channel.alloc());
        });
  }

  // ---- ABORT ----

  private void handleAbort(Peer peer, int tag, PmixReader r) {
    Status status = r.unpackStatus();
    String msg = r.unpackString();
    long n = r.unpackSize();
    List<Proc> procs = new ArrayList<>();
    if (n > 0) {
      for (Value v : r.unpack(DataType.PROC, Requests.count(n, limits))) {
        procs.add((Proc) v);
      }
    }
    Object hostObject = peer.info.hostObject;
    hostCalls.call(
        () -> host.abort(peer.proc, hostObject, status, msg, List.copyOf(procs)),
        (v, failure) -> Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure));
  }

  // ---- COMMIT ----

  private void handleCommit(Peer peer, int tag, PmixReader r) {
    List<Map.Entry<Integer, List<Value.KVal>>> sections = new ArrayList<>();
    while (r.hasRemaining()) {
      int scope = r.unpackByteEnum(DataType.SCOPE);
      Value.Buffer blob = (Value.Buffer) r.unpackOne(DataType.BUFFER);
      PmixReader inner =
          new PmixReader(
              Unpooled.wrappedBuffer(blob.bytes()),
              WireFormat.of(BufferType.fromCode(blob.bufferType())),
              limits);
      List<Value.KVal> kvs = new ArrayList<>();
      while (inner.hasRemaining()) {
        kvs.add((Value.KVal) inner.unpackOne(DataType.KVAL));
      }
      sections.add(Map.entry(scope, kvs));
    }
    ProcData d = peer.ns.data(peer.info.rank);
    for (Map.Entry<Integer, List<Value.KVal>> s : sections) {
      int scope = s.getKey();
      for (Value.KVal kv : s.getValue()) {
        if (kv.key() == null) {
          continue;
        }
        if (scope != SCOPE_REMOTE) {
          d.local.put(kv.key(), kv.value());
        }
        if (scope == SCOPE_REMOTE || scope == SCOPE_GLOBAL) {
          d.remote.put(kv.key(), kv.value());
        }
      }
    }
    d.committed = true;
    Replies.status(peer, tag, Status.SUCCESS);
    resolveLocalWaits(peer.proc, true);
  }

  // ---- FENCE ----

  private void handleFence(Peer peer, int tag, PmixReader r) {
    List<Proc> procs = readCollectiveProcs(r, Command.FENCENB);
    long ninfo = r.unpackSize();
    List<Info> info = ninfo > 0 ? r.unpackInfos(Requests.count(ninfo, limits)) : List.of();
    boolean collect = false;
    long timeout = 0;
    for (Info i : info) {
      if (i.key().equals(Keys.COLLECT_DATA.name())) {
        collect = Requests.isTrue(i.value());
      } else if (i.key().equals(Keys.TIMEOUT.name())) {
        timeout = i.value().asLong();
      }
    }
    arrive(Command.FENCENB, procs, info, collect, timeout, peer, tag);
  }

  /** The sorted participant array that FENCENB, CONNECTNB and DISCONNECTNB start with. */
  private List<Proc> readCollectiveProcs(PmixReader r, Command type) {
    long n = r.unpackSize();
    if (n < 1) {
      throw new PmixException(Status.ERR_BAD_PARAM, type + " needs at least one proc");
    }
    List<Proc> procs = new ArrayList<>();
    for (Value v : r.unpack(DataType.PROC, Requests.count(n, limits))) {
      procs.add((Proc) v);
    }
    procs.sort(PROC_ORDER);
    return procs;
  }

  /**
   * Counts {@code peer}'s arrival at the collective of {@code type} over {@code procs}, opening
   * its tracker if it is the first, then checks whether the collective can go on. A fence's
   * timeout stops mattering once the host has it; a connect's runs until the end, as in C.
   */
  private void arrive(
      Command type,
      List<Proc> procs,
      List<Info> info,
      boolean collect,
      long timeout,
      Peer peer,
      int tag) {
    FenceTracker t = null;
    for (FenceTracker x : trackers) {
      if (x.type == type && x.procs.equals(procs)) {
        t = x;
        break;
      }
    }
    if (t == null) {
      t = new FenceTracker(procs, type);
      t.collect = collect;
      computeTracker(t);
      trackers.add(t);
    } else if (t.collect != collect) {
      t.collectMismatch = true;
    }
    if (t.info == null) {
      t.info = List.copyOf(info);
    }
    t.arrived.add(new FenceTracker.Arrival(peer, tag));
    // Counted by identity: a clone, or the same rank in a later cycle, contributes once.
    if (t.excluded.remove(peer.proc)) {
      t.nlocal++;
    }
    if (t.departed.remove(peer.proc)) {
      t.localStatus = t.statusAfterDepartures();
    }
    t.contributed.add(peer.proc);
    boolean stopsAtHost = type == Command.FENCENB;
    if (timeout > 0 && t.timer == null && !(stopsAtHost && t.hostCalled)) {
      FenceTracker tt = t;
      t.timer =
          loop.schedule(
              () -> {
                tt.timer = null;
                if (trackers.contains(tt) && !(stopsAtHost && tt.hostCalled)) {
                  completeFence(tt, Status.ERR_TIMEOUT);
                }
              },
              timeout,
              TimeUnit.SECONDS);
    }
    checkFence(t);
  }

  /** Sorted as 4.2.2 sorts fence participants: nspace, then rank read unsigned. */
  private static final Comparator<Proc> PROC_ORDER =
      Comparator.comparing(Proc::nspace).thenComparing((a, b) -> Integer.compareUnsigned(a.rank(), b.rank()));

  /** Counts the local participants and decides whether the fence is purely local. */
  private void computeTracker(FenceTracker t) {
    t.local = true;
    t.nlocal = 0;
    t.nslist.clear();
    t.excluded.clear();
    boolean allDef = true;
    for (Proc p : t.procs) {
      Namespace ns = namespaces.get(p.nspace());
      if (ns == null || (!ns.registered && ns.ranks.isEmpty())) {
        t.local = false; // a namespace with no local processes that we know of
        continue;
      }
      if (!ns.registered) {
        allDef = false; // clients registered before their namespace: wait for it
        continue;
      }
      if (ns.nlocalprocs == 0 && ns.registeredNlocalprocs == 0) {
        t.local = false;
        continue;
      }
      if (!t.nslist.contains(ns)) {
        t.nslist.add(ns);
      }
      if (p.rank() == Proc.RANK_WILDCARD) {
        // nlocalprocs already leaves out the departed ranks: remember them in case they return.
        t.nlocal += Math.max(ns.nlocalprocs, 0);
        for (int r : ns.departedRanks) {
          t.excluded.add(Proc.of(ns.name, r));
        }
        if (ns.jobData(options.hostname()).nprocs != ns.registeredNlocalprocs) {
          t.local = false;
        }
        continue;
      }
      if (!ns.allRegistered()) {
        allDef = false;
        continue;
      }
      if (ns.departedRanks.contains(p.rank())) {
        t.excluded.add(p); // a local rank that is gone for now
      } else if (ns.ranks.containsKey(p.rank())) {
        t.nlocal++;
      } else {
        t.local = false;
      }
    }
    t.departed.removeAll(t.excluded);
    t.defComplete = allDef;
  }

  private void checkFence(FenceTracker t) {
    if (!t.locallyComplete() || t.hostCalled || !trackers.contains(t)) {
      return;
    }
    if (t.timer != null && t.type == Command.FENCENB) {
      // Only local completion is timed here; once the host has it, the host owns the timeout.
      boolean unused = t.timer.cancel(false);
      t.timer = null;
    }
    if (t.type != Command.FENCENB) {
      checkConnect(t);
      return;
    }
    if (t.collectMismatch) {
      completeFence(t, Status.ERR_INVALID_ARG);
      return;
    }
    if (t.local) {
      completeFence(t, t.localStatus);
      return;
    }
    t.hostCalled = true;
    byte[] data = t.collect ? collectFenceData(t) : new byte[0];
    List<Info> info = new ArrayList<>(t.info == null ? List.of() : t.info);
    info.add(Info.of(Keys.SORTED_PROC_ARRAY, Value.of(true)));
    info.add(Info.of(Keys.LOCAL_COLLECTIVE_STATUS, Value.status(t.localStatus)));
    List<Proc> procs = t.procs;
    List<Info> hostInfo = List.copyOf(info);
    hostCalls.call(
        () -> host.fenceNb(procs, hostInfo, data.clone()),
        (bytes, failure) -> {
          if (!trackers.contains(t)) {
            return;
          }
          if (failure != null) {
            completeFence(t, failure);
            return;
          }
          try {
            if (bytes != null && bytes.length > 0) {
              storeFenceData(t, bytes);
            }
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "host returned unusable fence data", e);
            completeFence(t, Status.ERR_UNPACK_FAILURE);
            return;
          }
          completeFence(t, Status.SUCCESS);
        });
  }

  private void completeFence(FenceTracker t, Status status) {
    trackers.remove(t);
    if (t.timer != null) {
      boolean unused = t.timer.cancel(false);
      t.timer = null;
    }
    if (t.type == Command.CONNECTNB && status.isSuccess()) {
      replyConnected(t);
      return;
    }
    for (FenceTracker.Arrival a : t.arrived) {
      Replies.status(a.peer(), a.tag(), status);
    }
  }

  // ---- CONNECT / DISCONNECT ----

  /**
   * CONNECTNB and DISCONNECTNB (commands.md section 4; {@code pmix_server_connect} and {@code
   * pmix_server_disconnect} at v4.2.2): the fence's collective over the local participants, in a
   * tracker of their own type. At least one proc is required (C: BAD_PARAM); {@code pmix.timeout}
   * (connect only, as in C) answers ERR_TIMEOUT to every caller if the whole operation, host part
   * included, has not completed by then.
   */
  private void handleConnect(Peer peer, int tag, PmixReader r, Command type) {
    List<Proc> procs = readCollectiveProcs(r, type);
    long ninfo = r.unpackSize();
    List<Info> info = ninfo > 0 ? r.unpackInfos(Requests.count(ninfo, limits)) : List.of();
    long timeout = 0;
    if (type == Command.CONNECTNB) {
      for (Info i : info) {
        if (i.key().equals(Keys.TIMEOUT.name())) {
          timeout = i.value().asLong();
          break;
        }
      }
    }
    arrive(type, procs, info, false, timeout, peer, tag);
  }

  /**
   * A connect or disconnect whose local participants have all arrived: done at once when every
   * participant is local (4.2.2 does not involve the host then), else handed to the host's {@code
   * connect}/{@code disconnect} with the fence's two appended infos. A host without the upcall
   * answers NOT_SUPPORTED, which every local caller gets (4.2.2 answers only the last caller and
   * leaves the others waiting forever; we do not copy that).
   */
  private void checkConnect(FenceTracker t) {
    if (t.local) {
      completeFence(t, t.localStatus);
      return;
    }
    t.hostCalled = true;
    List<Info> info = new ArrayList<>(t.info == null ? List.of() : t.info);
    info.add(Info.of(Keys.SORTED_PROC_ARRAY, Value.of(true)));
    info.add(Info.of(Keys.LOCAL_COLLECTIVE_STATUS, Value.status(t.localStatus)));
    List<Proc> procs = t.procs;
    List<Info> hostInfo = List.copyOf(info);
    boolean connect = t.type == Command.CONNECTNB;
    hostCalls.call(
        () -> connect ? host.connect(procs, hostInfo) : host.disconnect(procs, hostInfo),
        (x, failure) -> {
          if (trackers.contains(t)) {
            completeFence(t, failure == null ? Status.SUCCESS : failure);
          }
        });
  }

  /**
   * The successful CONNECTNB reply (4.2.2's {@code _cnct}): to each local caller its status, then
   * one BYTE_OBJECT per distinct namespace among the local callers other than the caller's own,
   * holding the namespace's name and its job data as KVAL units (what a REQ reply carries after
   * the name). A namespace this server holds no job data for (a tool's) gets no blob.
   */
  private void replyConnected(FenceTracker t) {
    List<String> nspaces = new ArrayList<>();
    for (FenceTracker.Arrival a : t.arrived) {
      if (!nspaces.contains(a.peer().proc.nspace())) {
        nspaces.add(a.peer().proc.nspace());
      }
    }
    for (FenceTracker.Arrival a : t.arrived) {
      Peer peer = a.peer();
      Replies.send(
          peer,
          a.tag(),
          w -> {
            w.packStatus(Status.SUCCESS);
            for (String other : nspaces) {
              if (other.equals(peer.proc.nspace())) {
                continue;
              }
              Namespace ns = namespaces.get(other);
              if (ns == null || !ns.registered) {
                continue;
              }
              JobData jd = ns.jobData(options.hostname());
              ByteBuf blob = peer.channel.alloc().buffer();
              try {
                PmixWriter bw = new PmixWriter(blob, w.format());
                bw.packString(other);
                jd.writeReplyBody(bw, peer.channel.alloc());
                w.pack(Value.of(ByteBufUtil.getBytes(blob)));
              } finally {
                blob.release();
              }
            }
          });
    }
  }

  /**
   * A rank will not contribute any more: its last process died unfinalized, or the host
   * deregistered it. Every fence counting it that it has not contributed to stops waiting for it
   * and reports the 4.2.2 local status (PARTIAL_SUCCESS while other counted ranks remain, else
   * LOST_CONNECTION). A rank that already contributed (through any of its processes) stays
   * contributed, as OpenPMIx master has it. An orderly finalize never comes here.
   */
  private void rankDeparted(Proc p) {
    for (FenceTracker t : new ArrayList<>(trackers)) {
      if (!t.includes(p) || t.contributed.contains(p) || t.excluded.contains(p)) {
        continue;
      }
      if (!t.departed.add(p)) {
        continue;
      }
      t.localStatus = t.statusAfterDepartures();
      if (t.hostCalled) {
        continue; // the host owns it now; wait for its answer
      }
      if (t.locallyComplete()) {
        if (t.arrived.isEmpty()) {
          trackers.remove(t);
          if (t.timer != null) {
            boolean unused = t.timer.cancel(false);
            t.timer = null;
          }
        } else if (t.local) {
          completeFence(t, t.localStatus);
        } else {
          checkFence(t);
        }
      }
    }
  }

  /**
   * A rank is a local process again (the host registered it again, or it reconnected after its
   * last process died): it counts in nlocalprocs, and fences still collecting wait for it again.
   * A contribution only dead processes of the rank made is void: the rank's new process starts
   * over and will contribute itself, so keeping the old one would count the rank twice and mix
   * the two incarnations' fences.
   */
  private void rankReturned(Namespace ns, int rank) {
    if (ns.departedRanks.remove(rank)) {
      ns.nlocalprocs++;
    }
    Proc p = Proc.of(ns.name, rank);
    for (FenceTracker t : trackers) {
      if (t.hostCalled) {
        continue;
      }
      if (t.excluded.remove(p)) {
        t.nlocal++;
      } else if (t.departed.remove(p)) {
        t.localStatus = t.statusAfterDepartures();
      } else if (t.contributed.contains(p)
          && t.arrived.stream().noneMatch(a -> a.peer().proc.equals(p) && !a.peer().closed)
          && t.arrived.stream()
              .anyMatch(a -> a.peer().proc.equals(p)
                  && a.peer().state == ServerSnapshot.PeerState.LOST)) {
        t.arrived.removeIf(a -> a.peer().proc.equals(p));
        t.contributed.remove(p);
      }
    }
  }

  /** This node's fence contribution (commands.md section 7.1), native (non-key-map) layout. */
  private byte[] collectFenceData(FenceTracker t) {
    ByteBuf node = Unpooled.buffer();
    ByteBuf out = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(node, WireFormat.DEFAULT);
      w.packByteEnum(DataType.BYTE, 0x01);
      List<Proc> contributors = new ArrayList<>();
      for (FenceTracker.Arrival a : t.arrived) {
        if (!contributors.contains(a.peer().proc)) {
          contributors.add(a.peer().proc);
        }
      }
      for (Proc p : contributors) {
        Namespace ns = namespaces.get(p.nspace());
        ProcData d = ns == null ? null : ns.procData.get(p.rank());
        if (d == null || d.remote.isEmpty()) {
          continue;
        }
        ByteBuf rb = Unpooled.buffer();
        try {
          PmixWriter rw = new PmixWriter(rb, WireFormat.DEFAULT);
          rw.packRank(relativeRank(t, p));
          d.remote.forEach((k, v) -> rw.pack(new Value.KVal(k, v)));
          w.pack(Value.of(ByteBufUtil.getBytes(rb)));
        } finally {
          rb.release();
        }
      }
      new PmixWriter(out, WireFormat.DEFAULT).pack(Value.of(ByteBufUtil.getBytes(node)));
      return ByteBufUtil.getBytes(out);
    } finally {
      node.release();
      out.release();
    }
  }

  /** The namespaces of a fence in relative-rank order, with their sizes. */
  private List<Map.Entry<String, Integer>> rankSpace(FenceTracker t) {
    List<Map.Entry<String, Integer>> out = new ArrayList<>();
    for (Proc p : t.procs) {
      if (out.stream().anyMatch(e -> e.getKey().equals(p.nspace()))) {
        continue;
      }
      Namespace ns = namespaces.get(p.nspace());
      int size = ns != null && ns.registered ? ns.jobData(options.hostname()).nprocs : -1;
      out.add(Map.entry(p.nspace(), size));
    }
    return out;
  }

  private int relativeRank(FenceTracker t, Proc p) {
    int offset = 0;
    for (Map.Entry<String, Integer> e : rankSpace(t)) {
      if (e.getKey().equals(p.nspace())) {
        return offset + p.rank();
      }
      offset += Math.max(e.getValue(), 0);
    }
    return p.rank();
  }

  private Proc absoluteProc(FenceTracker t, int rel) {
    List<Map.Entry<String, Integer>> space = rankSpace(t);
    int r = rel;
    for (int i = 0; i < space.size(); i++) {
      Map.Entry<String, Integer> e = space.get(i);
      if (e.getValue() < 0 || r < e.getValue() || i == space.size() - 1) {
        return Proc.of(e.getKey(), r);
      }
      r -= e.getValue();
    }
    throw new PmixException(Status.ERR_BAD_PARAM, "fence data for an unknown rank " + rel);
  }

  /** Parses what the host's fence returned: node BYTE_OBJECTs, each native or key-map. */
  private void storeFenceData(FenceTracker t, byte[] bytes) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(bytes), WireFormat.DEFAULT, limits);
    Map<Proc, List<Value.KVal>> parsed = new LinkedHashMap<>();
    while (r.hasRemaining()) {
      byte[] nodeBlob = r.unpackOne(DataType.BYTE_OBJECT).asBytes();
      PmixReader nr = new PmixReader(Unpooled.wrappedBuffer(nodeBlob), WireFormat.DEFAULT, limits);
      if (!nr.hasRemaining()) {
        continue;
      }
      int flags = nr.unpackByteEnum(DataType.BYTE);
      List<String> keys = new ArrayList<>();
      boolean keyMap = (flags & 0x02) != 0;
      if (keyMap) {
        int nkeys = nr.unpackUInt32();
        for (Value v : nr.unpack(DataType.STRING, Requests.count(Integer.toUnsignedLong(nkeys), limits))) {
          keys.add(v.asString());
        }
      }
      while (nr.hasRemaining()) {
        byte[] rankBlob = nr.unpackOne(DataType.BYTE_OBJECT).asBytes();
        PmixReader rr = new PmixReader(Unpooled.wrappedBuffer(rankBlob), WireFormat.DEFAULT, limits);
        int rel = rr.unpackRank();
        Proc p = absoluteProc(t, rel);
        List<Value.KVal> kvs = parsed.computeIfAbsent(p, x -> new ArrayList<>());
        while (rr.hasRemaining()) {
          if (keyMap) {
            int idx = rr.unpackUInt32();
            Value v = rr.unpackValue();
            if (idx < 0 || idx >= keys.size()) {
              throw new PmixException(Status.ERR_BAD_PARAM, "key index " + idx + " out of range");
            }
            kvs.add(new Value.KVal(keys.get(idx), v));
          } else {
            kvs.add((Value.KVal) rr.unpackOne(DataType.KVAL));
          }
        }
      }
    }
    for (Map.Entry<Proc, List<Value.KVal>> e : parsed.entrySet()) {
      Namespace ns = namespaces.computeIfAbsent(e.getKey().nspace(), Namespace::new);
      ProcData d = ns.data(e.getKey().rank());
      for (Value.KVal kv : e.getValue()) {
        if (kv.key() != null) {
          d.remote.put(kv.key(), kv.value());
        }
      }
      d.committed = true;
    }
  }

  // ---- GET ----

  private void handleGet(Peer peer, int tag, PmixReader r) {
    String nspace = r.unpackString();
    int rank = r.unpackRank();
    long ninfo = r.unpackSize();
    List<Info> info = ninfo > 0 ? r.unpackInfos(Requests.count(ninfo, limits)) : List.of();
    String key = r.hasRemaining() ? r.unpackString() : null;
    if (nspace == null) {
      throw new PmixException(Status.ERR_BAD_PARAM, "GETNB without a namespace");
    }
    boolean immediate = false;
    boolean refresh = false;
    long timeout = 0;
    int scope = 0;
    for (Info i : info) {
      String k = i.key();
      if (k.equals(Keys.IMMEDIATE.name())) {
        immediate = Requests.isTrue(i.value());
      } else if (k.equals(Keys.TIMEOUT.name())) {
        timeout = i.value().asLong();
      } else if (k.equals(Keys.GET_REFRESH_CACHE.name())) {
        refresh = Requests.isTrue(i.value());
      } else if (k.equals(Keys.DATA_SCOPE.name())) {
        scope = (int) i.value().asLong();
      }
    }
    Proc target = Proc.of(nspace, rank);
    PendingGet g = new PendingGet(new PendingGet.ToClient(peer, tag), target, key, scope);
    Namespace ns = namespaces.get(nspace);
    boolean foreign = ns == null || (!ns.registered && ns.ranks.isEmpty());

    if (!foreign && rank == Proc.RANK_WILDCARD) {
      answerJobLevel(g, ns);
      return;
    }
    if (foreign) {
      if (key != null && ns != null) {
        ProcData d = ns.procData.get(rank);
        if (!refresh && d != null && d.remote.containsKey(key)) {
          satisfy(g, false);
          return;
        }
      }
      if (immediate) {
        Replies.status(peer, tag, Status.ERR_NOT_FOUND);
        return;
      }
      requestDmodex(g, info);
      return;
    }
    if (!ns.allRegistered()) {
      if (immediate) {
        Replies.status(peer, tag, Status.ERR_NOT_FOUND);
      } else {
        park(g, timeout);
      }
      return;
    }
    boolean local;
    JobData jd = ns.jobData(options.hostname());
    if (rank == Proc.RANK_UNDEF) {
      answerAllRanks(g, ns);
      return;
    }
    RankInfo ri = ns.ranks.get(rank);
    if (ri != null) {
      if (ri.peerIndex < 0 && !ns.procData.containsKey(rank)) {
        // A local rank that has not connected yet: hold the request.
        if (immediate) {
          Replies.status(peer, tag, Status.ERR_NOT_FOUND);
        } else {
          park(g, timeout);
        }
        return;
      }
      local = true;
    } else {
      local = jd.nprocs == ns.registeredNlocalprocs && ns.registeredNlocalprocs > 0;
    }
    if (refresh) {
      if (local) {
        Replies.status(peer, tag, Status.SUCCESS);
      } else {
        requestDmodex(g, info);
      }
      return;
    }
    ProcData d = ns.procData.get(rank);
    boolean useLocal = scope == SCOPE_LOCAL || (scope == 0 && local);
    if (key != null) {
      boolean inScope =
          d != null
              && (scope == SCOPE_GLOBAL
                  ? d.local.containsKey(key) || d.remote.containsKey(key)
                  : d.scope(useLocal).containsKey(key));
      if (inScope) {
        satisfy(g, local);
        return;
      }
      if (d != null && d.scope(!useLocal).containsKey(key) && scope != SCOPE_GLOBAL) {
        Replies.status(peer, tag, Status.ERR_NOT_FOUND);
        return;
      }
    } else if (d != null && d.committed) {
      satisfy(g, local);
      return;
    }
    if (immediate) {
      Replies.status(peer, tag, Status.ERR_NOT_FOUND);
      return;
    }
    if (local) {
      park(g, timeout > 0 ? timeout : DEFAULT_LOCAL_GET_TIMEOUT_SECONDS);
    } else {
      requestDmodex(g, info);
    }
  }

  /**
   * The host asks for a local process's data for another node ({@code
   * PMIx_server_dmodex_request}): {@code result} completes with the REMOTE-scope data {@code
   * proc} committed (REMOTE and GLOBAL puts), as bare KVAL units in the native format, which is
   * what {@link io.pmix.server.HostModule#directModex} returns on the asking node (commands.md
   * 7.2). For rank WILDCARD, the namespace's job-level data.
   *
   * <p>Not committed yet, or a namespace or rank this server does not know yet (4.2.2 allows
   * for the request arriving before the registration): the request waits, like a client's GETNB
   * for a local target, until the process commits, the directives' {@code pmix.timeout} passes
   * ({@code ERR_TIMEOUT}; none given: no limit, as in 4.2.2), its last process dies
   * unfinalized ({@code ERR_LOST_CONNECTION}), it or its namespace is deregistered ({@code
   * ERR_NOT_FOUND}) or the server shuts down. A rank the fully registered namespace does not
   * have here, and the WILDCARD of an unknown namespace, fail at once with {@code ERR_NOT_FOUND}
   * (4.2.2 never answers those). Completes on the progress thread.
   */
  public void dmodexRequest(Proc proc, List<Info> directives, CompletableFuture<byte[]> result) {
    checkLoop();
    long timeout = 0;
    for (Info i : directives) {
      if (i.key().equals(Keys.TIMEOUT.name())) {
        timeout = Math.max(0, i.value().asLong());
      }
    }
    PendingGet.ToHost to = new PendingGet.ToHost(result);
    PendingGet g = new PendingGet(to, proc, null, SCOPE_REMOTE);
    if (stopping) {
      finishGet(g, Status.ERR_NOT_AVAILABLE);
      return;
    }
    Namespace ns = namespaces.get(proc.nspace());
    // A namespace known only from fence or direct-modex data is not served here (yet).
    boolean hosted = ns != null && (ns.registered || !ns.ranks.isEmpty());
    if (proc.rank() == Proc.RANK_WILDCARD) {
      if (ns == null) {
        finishGet(g, Status.ERR_NOT_FOUND);
      } else {
        g.done = true;
        completeForHost(to, jobLevelOf(ns));
      }
      return;
    }
    if (hosted && ns.ranks.containsKey(proc.rank())) {
      ProcData d = ns.procData.get(proc.rank());
      if (d != null && d.committed) {
        satisfy(g, true);
        return;
      }
    } else if (hosted && ns.allRegistered()) {
      // Every local rank is registered and this is not one: it will never commit here.
      finishGet(g, Status.ERR_NOT_FOUND);
      return;
    }
    park(g, timeout);
  }

  /** Completes a host's request with {@code values} as bare native KVAL units. */
  private static void completeForHost(PendingGet.ToHost to, Map<String, Value> values) {
    ByteBuf b = Unpooled.buffer();
    byte[] bytes;
    try {
      PmixWriter w = new PmixWriter(b, WireFormat.DEFAULT);
      values.forEach((k, v) -> w.pack(new Value.KVal(k, v)));
      bytes = ByteBufUtil.getBytes(b);
    } catch (RuntimeException e) {
      to.result().completeExceptionally(
          new PmixException(Status.ERR_PACK_FAILURE, "cannot pack direct-modex data", e));
      return;
    } finally {
      b.release();
    }
    to.result().complete(bytes);
  }

  private void park(PendingGet g, long timeoutSeconds) {
    localWaits.computeIfAbsent(g.target, x -> new ArrayList<>()).add(g);
    if (timeoutSeconds > 0) {
      g.timer =
          loop.schedule(
              () -> {
                g.timer = null;
                List<PendingGet> l = localWaits.get(g.target);
                if (l != null && l.remove(g)) {
                  if (l.isEmpty()) {
                    localWaits.remove(g.target);
                  }
                  finishGet(g, Status.ERR_TIMEOUT);
                }
              },
              timeoutSeconds,
              TimeUnit.SECONDS);
    }
  }

  /** The target committed (or its namespace completed registration): answer who waited. */
  private void resolveLocalWaits(Proc target, boolean local) {
    List<PendingGet> waiting = localWaits.remove(target);
    if (waiting == null) {
      return;
    }
    for (PendingGet g : waiting) {
      if (g.timer != null) {
        boolean unused = g.timer.cancel(false);
        g.timer = null;
      }
      satisfy(g, local);
    }
  }

  private void requestDmodex(PendingGet g, List<Info> clientInfo) {
    boolean inFlight = dmodexWaits.containsKey(g.target);
    dmodexWaits.computeIfAbsent(g.target, x -> new ArrayList<>()).add(g);
    if (inFlight) {
      return;
    }
    List<Info> info = new ArrayList<>(clientInfo);
    if (g.key != null) {
      info.add(Info.of(Keys.REQUIRED_KEY, Value.of(g.key)));
    }
    Proc target = g.target;
    List<Info> hostInfo = List.copyOf(info);
    hostCalls.call(
        () -> host.directModex(target, hostInfo),
        (bytes, failure) -> {
          List<PendingGet> waiting = dmodexWaits.remove(target);
          if (waiting == null) {
            return;
          }
          Status st = failure;
          if (st == null) {
            try {
              storeDmodex(target, bytes == null ? new byte[0] : bytes);
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "host returned unusable direct-modex data", e);
              st = Status.ERR_UNPACK_FAILURE;
            }
          }
          for (PendingGet w : waiting) {
            if (st != null) {
              finishGet(w, st);
            } else if (target.rank() == Proc.RANK_WILDCARD) {
              Namespace ns = namespaces.get(target.nspace());
              if (ns != null) {
                answerJobLevel(w, ns);
              } else {
                finishGet(w, Status.ERR_NOT_FOUND);
              }
            } else {
              satisfy(w, false);
            }
          }
        });
  }

  private void storeDmodex(Proc target, byte[] bytes) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(bytes), WireFormat.DEFAULT, limits);
    List<Value.KVal> kvs = new ArrayList<>();
    while (r.hasRemaining()) {
      kvs.add((Value.KVal) r.unpackOne(DataType.KVAL));
    }
    Namespace ns = namespaces.computeIfAbsent(target.nspace(), Namespace::new);
    if (target.rank() == Proc.RANK_WILDCARD) {
      for (Value.KVal kv : kvs) {
        if (kv.key() != null) {
          ns.extraJobLevel.put(kv.key(), kv.value());
        }
      }
      return;
    }
    ProcData d = ns.data(target.rank());
    for (Value.KVal kv : kvs) {
      if (kv.key() != null) {
        d.remote.put(kv.key(), kv.value());
      }
    }
    d.committed = true;
  }

  /** Answers with status 0 and the target's data blob (plus job data for another namespace). */
  private void satisfy(PendingGet g, boolean local) {
    if (g.done) {
      return;
    }
    g.done = true;
    Namespace ns = namespaces.get(g.target.nspace());
    ProcData d = ns == null ? null : ns.procData.get(g.target.rank());
    Map<String, Value> values = new LinkedHashMap<>();
    if (d != null) {
      if (g.scope == SCOPE_GLOBAL) {
        values.putAll(d.local);
        values.putAll(d.remote);
      } else {
        boolean useLocal = g.scope == SCOPE_LOCAL || (g.scope == 0 && local);
        values.putAll(d.scope(useLocal));
      }
    }
    if (g.to instanceof PendingGet.ToHost h) {
      completeForHost(h, values);
      return;
    }
    PendingGet.ToClient c = g.client();
    Peer peer = c.peer();
    boolean diffNs = ns != null && !peer.ns.name.equals(ns.name);
    Replies.send(
        peer,
        c.tag(),
        w -> {
          w.packStatus(Status.SUCCESS);
          if (diffNs) {
            w.pack(Value.of(blob(peer, Proc.wildcard(ns.name), jobLevelOf(ns))));
          }
          w.pack(Value.of(blob(peer, g.target, values)));
        });
  }

  private void answerJobLevel(PendingGet g, Namespace ns) {
    Map<String, Value> all = jobLevelOf(ns);
    Map<String, Value> values;
    if (g.key != null) {
      if (!all.containsKey(g.key)) {
        finishGet(g, Status.ERR_NOT_FOUND);
        return;
      }
      values = Map.of(g.key, all.get(g.key));
    } else {
      values = all;
    }
    g.done = true;
    PendingGet.ToClient c = g.client();
    Replies.send(
        c.peer(),
        c.tag(),
        w -> {
          w.packStatus(Status.SUCCESS);
          w.pack(Value.of(blob(c.peer(), Proc.wildcard(ns.name), values)));
        });
  }

  /** Rank UNDEF: every rank's data in the scope natural for it. */
  private void answerAllRanks(PendingGet g, Namespace ns) {
    PendingGet.ToClient c = g.client();
    List<byte[]> blobs = new ArrayList<>();
    for (Map.Entry<Integer, ProcData> e : new java.util.TreeMap<>(ns.procData).entrySet()) {
      boolean local = ns.ranks.containsKey(e.getKey());
      Map<String, Value> values = e.getValue().scope(local);
      if (g.key != null && !values.containsKey(g.key)) {
        continue;
      }
      blobs.add(blob(c.peer(), Proc.of(ns.name, e.getKey()), values));
    }
    if (blobs.isEmpty()) {
      finishGet(g, Status.ERR_NOT_FOUND);
      return;
    }
    g.done = true;
    Replies.send(
        c.peer(),
        c.tag(),
        w -> {
          w.packStatus(Status.SUCCESS);
          for (byte[] b : blobs) {
            w.pack(Value.of(b));
          }
        });
  }

  private Map<String, Value> jobLevelOf(Namespace ns) {
    Map<String, Value> all = new LinkedHashMap<>();
    if (ns.registered) {
      all.putAll(ns.jobData(options.hostname()).jobLevel);
    }
    all.putAll(ns.extraJobLevel);
    return all;
  }

  /** A GETNB reply blob: PROC, then KVAL units, packed in the requester's format. */
  private static byte[] blob(Peer peer, Proc p, Map<String, Value> values) {
    ByteBuf b = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(b, peer.format);
      w.packProc(p);
      values.forEach((k, v) -> w.pack(new Value.KVal(k, v)));
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private void finishGet(PendingGet g, Status status) {
    if (g.done) {
      return;
    }
    g.done = true;
    if (g.timer != null) {
      boolean unused = g.timer.cancel(false);
      g.timer = null;
    }
    if (g.to instanceof PendingGet.ToHost h) {
      h.result().completeExceptionally(
          new PmixException(status, "direct-modex request for " + g.target));
    } else {
      PendingGet.ToClient c = g.client();
      Replies.status(c.peer(), c.tag(), status);
    }
  }

  /** Answers every GET parked until {@code target} commits: its data is not coming. */
  private void failWaitsFor(Proc target, Status status) {
    List<PendingGet> waiting = localWaits.remove(target);
    if (waiting != null) {
      for (PendingGet g : waiting) {
        finishGet(g, status);
      }
    }
  }

  private void dropGetsOf(Peer peer) {
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (List<PendingGet> l : waits.values()) {
        for (PendingGet g : l) {
          if (g.requester() == peer) {
            g.done = true;
            if (g.timer != null) {
              boolean unused = g.timer.cancel(false);
              g.timer = null;
            }
          }
        }
        l.removeIf(g -> g.requester() == peer);
      }
      // Keep dmodex keys (an upcall may still be running); drop empty local-wait lists.
      if (waits == localWaits) {
        waits.values().removeIf(List::isEmpty);
      }
    }
  }

  /** Registration changed: re-evaluate parked GETs and fences that waited for it. */
  private void registrationChanged(Namespace ns) {
    if (ns.allRegistered()) {
      List<Proc> targets = new ArrayList<>();
      for (Proc p : localWaits.keySet()) {
        if (p.nspace().equals(ns.name)) {
          targets.add(p);
        }
      }
      for (Proc p : targets) {
        ProcData d = ns.procData.get(p.rank());
        if (d != null && d.committed) {
          resolveLocalWaits(p, ns.ranks.containsKey(p.rank()));
        }
      }
    }
    for (FenceTracker t : new ArrayList<>(trackers)) {
      if (!t.defComplete && !t.hostCalled) {
        computeTracker(t);
        checkFence(t);
      }
    }
  }

  // ---- FINALIZE ----

  private void handleFinalize(Peer peer, int tag) {
    if (peer.state == ServerSnapshot.PeerState.ACTIVE) {
      peer.state = ServerSnapshot.PeerState.FINALIZING;
      if (peer.clientSemantics()) {
        peer.ns.nfinalized++;
        peer.countedFinalized = true;
      }
    }
    // Client-scoped registrations do not outlive the cycle. The peer's fence contributions stay:
    // an orderly finalize is not a lost participant.
    prunePeer(peer);
    if (!rankHasOtherActive(peer)) {
      // Nothing of this rank will commit in this cycle: whoever waits for its data is told so
      // (OpenPMIx master answers NOT_FOUND), and events kept for it are dropped.
      failWaitsFor(peer.proc, Status.ERR_NOT_FOUND);
      pruneCachedTargets(peer.proc);
    }
    if (peer.role == ServerSnapshot.Role.CLIENT) {
      Object hostObject = peer.info.hostObject;
      hostCalls.call(
          () -> host.clientFinalized(peer.proc, hostObject),
          (v, failure) ->
              Replies.finalizeReply(
                  peer,
                  tag,
                  failure == null || failure.equals(Status.ERR_NOT_SUPPORTED)
                      ? Status.SUCCESS
                      : failure));
    } else {
      Replies.finalizeReply(peer, tag, Status.SUCCESS);
    }
  }

  // ---- PUBLISH / LOOKUP / UNPUBLISH ----

  private void handlePublish(Peer peer, int tag, PmixReader r) {
    int unusedClaimedUid = r.unpackUInt32();
    long n = r.unpackSize();
    List<Info> hostInfo =
        withAuthenticatedIdentity(peer, n > 0 ? r.unpackInfos(Requests.count(n, limits)) : List.of());
    hostCalls.call(
        () -> host.publish(peer.proc, hostInfo),
        (v, failure) -> Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure));
  }

  private void handleLookup(Peer peer, int tag, PmixReader r, boolean lookup) {
    int unusedClaimedUid = r.unpackUInt32();
    long nkeys = r.unpackSize();
    List<String> keys = new ArrayList<>();
    for (long i = 0; i < Requests.count(nkeys, limits); i++) {
      keys.add(r.unpackString());
    }
    long n = r.unpackSize();
    List<Info> hostInfo =
        withAuthenticatedIdentity(peer, n > 0 ? r.unpackInfos(Requests.count(n, limits)) : List.of());
    List<String> hostKeys = List.copyOf(keys);
    if (!lookup) {
      hostCalls.call(
          () -> host.unpublish(peer.proc, hostKeys, hostInfo),
          (v, failure) -> Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure));
      return;
    }
    hostCalls.call(
        () -> host.lookup(peer.proc, hostKeys, hostInfo),
        (data, failure) -> {
          if (failure != null) {
            Replies.status(peer, tag, failure);
          } else if (data == null || data.isEmpty()) {
            Replies.status(peer, tag, Status.ERR_NOT_FOUND);
          } else {
            Replies.send(
                peer,
                tag,
                w -> {
                  w.packStatus(Status.SUCCESS);
                  w.packSize(data.size());
                  w.pack(DataType.PDATA, data);
                });
          }
        });
  }

  /**
   * The client's directives for a publish, lookup or unpublish, with the uid and gid this server
   * authenticated at connect appended as {@code pmix.euid}/{@code pmix.egid}. The uid inside the
   * message is only what the client claims (4.2.2 forwards that one), and a client could also put
   * its own {@code pmix.euid} among the directives; both are dropped so the host sees one identity,
   * the authenticated one, which is what the data-server rules of ownership and access rely on.
   */
  private static List<Info> withAuthenticatedIdentity(Peer peer, List<Info> directives) {
    List<Info> info = new ArrayList<>(directives.size() + 2);
    for (Info i : directives) {
      if (!i.key().equals(Keys.USERID.name()) && !i.key().equals(Keys.GRPID.name())) {
        info.add(i);
      }
    }
    info.add(Info.of(Keys.USERID, Value.uint32(Integer.toUnsignedLong(peer.info.uid))));
    info.add(Info.of(Keys.GRPID, Value.uint32(Integer.toUnsignedLong(peer.info.gid))));
    return List.copyOf(info);
  }

  // ---- EVENTS ----

  private void handleRegEvents(Peer peer, int tag, PmixReader r) {
    long ncodes = r.unpackSize();
    List<Integer> codes = new ArrayList<>();
    if (ncodes > 0) {
      for (Value v : r.unpack(DataType.STATUS, Requests.count(ncodes, limits))) {
        codes.add(((Value.StatusValue) v).status().code());
      }
    }
    long ninfo = r.unpackSize();
    if (ninfo > 0) {
      List<Info> unused = r.unpackInfos(Requests.count(ninfo, limits));
    }
    if (codes.isEmpty()) {
      peer.defaultEvents = true;
    } else {
      peer.eventCodes.addAll(codes);
    }
    Replies.status(peer, tag, Status.SUCCESS);
    deliverCached(peer);
  }

  private void handleDeregEvents(Peer peer, PmixReader r) {
    // No reply: the client posts no receive for this request (commands.md section 3.8).
    while (r.hasRemaining()) {
      int code = r.unpackStatus().code();
      if (code == Integer.MIN_VALUE) {
        peer.defaultEvents = false;
      } else {
        peer.eventCodes.remove(code);
      }
    }
  }

  private void handleNotify(Peer peer, int tag, PmixReader r) {
    Status code = r.unpackStatus();
    int range = r.unpackByteEnum(DataType.DATA_RANGE);
    long ninfo = r.unpackSize();
    List<Info> info = ninfo > 0 ? r.unpackInfos(Requests.count(ninfo, limits)) : List.of();
    Status unused = notifyLocal(code, peer.proc, range, info, peer);
    Replies.status(peer, tag, Status.SUCCESS);
    if (range != RANGE_LOCAL && range != RANGE_PROC_LOCAL) {
      List<Info> hostInfo = new ArrayList<>(info);
      hostInfo.add(Info.of("pmix.srvr.internal.notify", true));
      List<Info> copy = List.copyOf(hostInfo);
      hostCalls.call(() -> host.notifyEvent(code, peer.proc, range, copy), (v, failure) -> {});
    }
  }

  // ---- QUERY / LOG / SPAWN ----

  private void handleQuery(Peer peer, int tag, PmixReader r) {
    long n = r.unpackSize();
    List<Value.Query> queries = new ArrayList<>();
    if (n > 0) {
      for (Value v : r.unpack(DataType.QUERY, Requests.count(n, limits))) {
        queries.add((Value.Query) v);
      }
    }
    queryResponder.handle(peer, tag, List.copyOf(queries));
  }

  private void handleLog(Peer peer, int tag, PmixReader r) {
    int[] v = parseVersion(peer.version);
    if (v[0] >= 3) {
      Value unused = r.unpackOne(DataType.TIME);
    }
    long ndata = r.unpackSize();
    List<Info> data = ndata > 0 ? r.unpackInfos(Requests.count(ndata, limits)) : List.of();
    long ndirs = r.unpackSize();
    List<Info> dirs = new ArrayList<>(ndirs > 0 ? r.unpackInfos(Requests.count(ndirs, limits)) : List.of());
    dirs.add(Info.of("pmix.log.source", peer.proc));
    List<Info> d1 = List.copyOf(data);
    List<Info> d2 = List.copyOf(dirs);
    hostCalls.call(
        () -> host.log(peer.proc, d1, d2),
        (x, failure) -> Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure));
  }

  private void handleSpawn(Peer peer, int tag, PmixReader r) {
    long ninfo = r.unpackSize();
    List<Info> jobInfo = ninfo > 0 ? r.unpackInfos(Requests.count(ninfo, limits)) : List.of();
    long napps = r.unpackSize();
    List<Value.App> apps = new ArrayList<>();
    if (napps > 0) {
      for (Value v : r.unpack(DataType.APP, Requests.count(napps, limits))) {
        apps.add((Value.App) v);
      }
    }
    List<Info> ji = List.copyOf(jobInfo);
    List<Value.App> ap = List.copyOf(apps);
    hostCalls.call(
        () -> host.spawn(peer.proc, ji, ap),
        (nspace, failure) -> {
          if (failure != null || nspace == null) {
            Replies.status(peer, tag, failure != null ? failure : Status.ERROR);
            return;
          }
          Namespace ns = namespaces.get(nspace);
          JobData jd = ns != null && ns.registered ? ns.jobData(options.hostname()) : null;
          Replies.send(
              peer,
              tag,
              w -> {
                w.packStatus(Status.SUCCESS);
                w.packString(nspace);
                if (jd != null) {
                  jd.writeReplyBody(w, peer.channel.alloc());
                }
              });
        });
  }

  /** For tests: the number of fences in progress. */
  int activeFences() {
    return trackers.size();
  }

}
