package io.pmix.server.internal.collective;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.ConnectNbReply;
import io.pmix.common.internal.message.ConnectNbRequest;
import io.pmix.common.internal.message.DisconnectNbRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.GroupConstructReply;
import io.pmix.common.internal.message.GroupConstructRequest;
import io.pmix.common.internal.message.GroupDestructRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.server.HostModule;
import io.pmix.server.internal.HostCalls;
import io.pmix.server.internal.Replies;
import io.pmix.server.internal.Requests;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import io.pmix.server.internal.ProgressExecutor;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Fences (FENCENB, docs/commands.md §3.4), connect/disconnect (CONNECTNB, DISCONNECTNB,
 * docs/commands.md §4; {@code pmix_server_connect}/{@code pmix_server_disconnect} at v4.2.2) and
 * group construct/destruct (GROUP_CONSTRUCT, GROUP_DESTRUCT, docs/commands.md §4; {@code
 * pmix_server_grpconstruct} at v5.0.11): one arrival path into one {@link FenceTracker} per (type,
 * group id, sorted participants). When every local
 * participant has arrived or departed, a purely local collective completes here; otherwise the
 * host's {@code fenceNb}, {@code connect} or {@code disconnect} gets it, a fence with this node's
 * data ({@link FenceData}). Every local caller gets the outcome.
 *
 * <p>Lifecycle (docs/lifecycle.md §6.2.4, §6.2.6, §6.2.10): participants are counted by rank; a
 * rank that died or was deregistered {@linkplain #rankDeparted departs}, one that comes back is
 * {@linkplain #rankReturned waited for again}, an orderly finalize changes nothing, and a
 * deregistered namespace's collectives fail with LOST_CONNECTION. Progress thread only.
 */
public final class Collectives {
  private static final System.Logger LOG = LazyLogger.of(Collectives.class);

  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final ProgressExecutor loop;
  private final String hostname;
  private final FenceData fenceData;
  private final List<FenceTracker> trackers = new ArrayList<>();
  private final Groups groups = new Groups();

  /**
   * The collectives of one server.
   *
   * @param loop the progress thread (timeouts run on it)
   */
  public Collectives(
      Registry registry, HostModule host, HostCalls hostCalls, ProgressExecutor loop, CodecLimits limits,
      String hostname) {
    this.registry = requireNonNull(registry, "registry");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.loop = requireNonNull(loop, "loop");
    this.hostname = requireNonNull(hostname, "hostname");
    this.fenceData = new FenceData(registry, requireNonNull(limits, "limits"), hostname);
  }

  // ============================================================================================
  // Requests
  // ============================================================================================

  /** FENCENB: the sorted procs, directives ({@code pmix.collect}, {@code pmix.timeout}). */
  public void handleFence(Peer peer, int tag, FenceNbRequest q) {
    List<Info> info = q.directives();
    boolean collect = false;
    long timeout = 0;
    for (Info i : info) {
      if (i.key().equals(Keys.COLLECT_DATA.name())) {
        collect = Requests.isTrue(i.value());
      } else if (i.key().equals(Keys.TIMEOUT.name())) {
        timeout = i.value().asLong();
      }
    }
    arrive(Command.FENCENB, q.procs(), null, info, collect, timeout, peer, tag);
  }

  /**
   * CONNECTNB: the fence's collective over the local participants, in a tracker of its own type.
   * {@code pmix.timeout} answers ERR_TIMEOUT to every caller if the whole operation, host part
   * included, has not completed by then. The decoder has refused a request without a proc (C:
   * BAD_PARAM) and sorted the procs.
   */
  public void handleConnect(Peer peer, int tag, ConnectNbRequest q) {
    List<Info> info = q.directives();
    arrive(Command.CONNECTNB, q.procs(), null, info, false, timeoutOf(info), peer, tag);
  }

  /**
   * DISCONNECTNB: as {@link #handleConnect}, but {@code pmix.timeout} bounds only the local
   * collection, as a fence's does: OpenPMIx master times it (4.2.2 to 6.1 ignore it, so a
   * participant that never calls hung the others), and the host owns any timeout after that.
   */
  public void handleDisconnect(Peer peer, int tag, DisconnectNbRequest q) {
    List<Info> info = q.directives();
    arrive(Command.DISCONNECTNB, q.procs(), null, info, false, timeoutOf(info), peer, tag);
  }

  /**
   * GROUP_CONSTRUCT (docs/commands.md §4.3): a collective over the members like a connect, in a
   * tracker of the group's id. {@code pmix.timeout} bounds the whole operation, host part
   * included, as a connect's does (5.0.11 times only a purely local one and leaves the rest to
   * the host).
   */
  public void handleGroupConstruct(Peer peer, int tag, GroupConstructRequest q) {
    List<Info> info = q.directives();
    arrive(Command.GROUP_CONSTRUCT, q.procs(), q.groupId(), info, false, timeoutOf(info), peer,
        tag);
  }

  /**
   * GROUP_DESTRUCT: the members are the ones the request carries (5.0+) or, from a 4.2.2 client,
   * the ones this server recorded at the construct; a 4.2.2 destruct of a group the server does
   * not know is NOT_FOUND, as in 4.2.2. {@code pmix.timeout} bounds the local collection, as a
   * disconnect's does.
   */
  public void handleGroupDestruct(Peer peer, int tag, GroupDestructRequest q) {
    List<Proc> members = q.members();
    if (!q.carriesMembers()) {
      Groups.Group g = groups.get(q.groupId());
      if (g == null) {
        Replies.status(peer, tag, Status.ERR_NOT_FOUND);
        return;
      }
      members = sorted(g.members());
    }
    List<Info> info = q.directives();
    arrive(Command.GROUP_DESTRUCT, members, q.groupId(), info, false, timeoutOf(info), peer, tag);
  }

  private static List<Proc> sorted(List<Proc> procs) {
    List<Proc> out = new ArrayList<>(procs);
    out.sort(FenceNbRequest.PARTICIPANT_ORDER);
    return List.copyOf(out);
  }

  /** The first {@code pmix.timeout} among the directives, in seconds; 0 when none. */
  private static long timeoutOf(List<Info> info) {
    for (Info i : info) {
      if (i.key().equals(Keys.TIMEOUT.name())) {
        return i.value().asLong();
      }
    }
    return 0;
  }

  /**
   * Counts {@code peer}'s arrival at the collective of {@code type} over {@code procs}, opening
   * its tracker if it is the first, then checks whether the collective can go on. A fence's or
   * disconnect's timeout stops mattering once the host has it; a connect's runs until the end,
   * as in 4.2.2 to 6.1 (master stops it at the host too).
   */
  private void arrive(
      Command type,
      List<Proc> procs,
      @Nullable String groupId,
      List<Info> info,
      boolean collect,
      long timeout,
      Peer peer,
      int tag) {
    if (!canBeHad(type, procs, peer.proc())) {
      Replies.status(peer, tag, Status.ERR_BAD_PARAM);
      return;
    }
    FenceTracker t = null;
    for (FenceTracker x : trackers) {
      if (x.matches(type, procs, groupId)) {
        t = x;
        break;
      }
    }
    if (t == null) {
      t = new FenceTracker(procs, type, collect, groupId);
      t.recount(census(procs));
      trackers.add(t);
    }
    t.arrive(peer, tag, collect, info);
    check(t);
    // The timer after the check, for a collective still pending only: the last arrival (every
    // fence of a one-process job) would schedule one only for its completion to cancel it.
    boolean stopsAtHost = type != Command.CONNECTNB && type != Command.GROUP_CONSTRUCT;
    if (timeout > 0
        && trackers.contains(t)
        && !t.hasTimer()
        && !(stopsAtHost && t.hostCalled())) {
      t.timer(loop.schedule(new Timeout(t, stopsAtHost), timeout, TimeUnit.SECONDS));
    }
  }

  /**
   * Whether the collective can be had at all: no participant may have an empty namespace (no
   * process has one, so its tracker would wait for a registration that never comes), and a
   * fence's participants must name the caller (its rank or its namespace's wildcard): a fence of
   * others is meaningless, and refused rather than answered. A connect, disconnect or group
   * operation may come from a process it does not name: OpenPMIx's own {@code simpdyn} has the
   * parent connect naming only the job it spawned. Such a caller is answered with the others
   * but does not stand in for a participant ({@link FenceTracker#arrive}). libpmix 4.2.2 to 6.1
   * check neither rule; there a fence over the other rank alone returns success at once, and
   * one over ("", WILDCARD) waits until its timeout, or forever (docs/commands.md §3.4).
   */
  private static boolean canBeHad(Command type, List<Proc> procs, Proc caller) {
    boolean named = type != Command.FENCENB;
    for (Proc p : procs) {
      if (p.nspace().isEmpty()) {
        return false;
      }
      if (p.nspace().equals(caller.nspace())
          && (p.rank() == Proc.RANK_WILDCARD || p.rank() == caller.rank())) {
        named = true;
      }
    }
    return named;
  }

  /**
   * A collective's timeout. A class, not a lambda: a lambda's first call costs a fresh server
   * 0.1-0.2 ms, here in a job's first fence with a timeout (docs/architecture.md, "First
   * requests").
   */
  private final class Timeout implements Runnable {
    private final FenceTracker t;
    private final boolean stopsAtHost;

    Timeout(FenceTracker t, boolean stopsAtHost) {
      this.t = t;
      this.stopsAtHost = stopsAtHost;
    }

    @Override
    public void run() {
      t.timerFired();
      if (trackers.contains(t) && !(stopsAtHost && t.hostCalled())) {
        complete(t, Status.ERR_TIMEOUT);
      }
    }
  }

  /** Counts the local participants and decides whether the collective is purely local. */
  private FenceTracker.Census census(List<Proc> procs) {
    boolean local = true;
    int nlocal = 0;
    Set<Proc> excluded = new HashSet<>();
    boolean complete = true;
    for (Proc p : procs) {
      Namespace ns = registry.namespace(p.nspace());
      if (ns == null || !ns.hosted()) {
        local = false; // a namespace with no local processes that we know of
        continue;
      }
      if (!ns.registered()) {
        complete = false; // clients registered before their namespace: wait for it
        continue;
      }
      if (ns.nlocalprocs() == 0 && ns.registeredNlocalprocs() == 0) {
        local = false;
        continue;
      }
      if (p.rank() == Proc.RANK_WILDCARD) {
        // nlocalprocs already leaves out the departed ranks: remember them in case they return.
        nlocal += Math.max(ns.nlocalprocs(), 0);
        for (int r : ns.departedRanks()) {
          excluded.add(Proc.of(ns.name(), r));
        }
        if (ns.jobData(hostname).nprocs() != ns.registeredNlocalprocs()) {
          local = false;
        }
        continue;
      }
      if (!ns.allRegistered()) {
        complete = false;
        continue;
      }
      if (ns.departed(p.rank())) {
        excluded.add(p); // a local rank that is gone for now
      } else if (ns.hasRank(p.rank())) {
        nlocal++;
      } else {
        local = false;
      }
    }
    return new FenceTracker.Census(local, nlocal, excluded, complete);
  }

  /**
   * A collective whose local participants have all arrived or departed goes on: done here when
   * purely local, else handed to the host.
   */
  private void check(FenceTracker t) {
    if (!t.locallyComplete() || t.hostCalled() || !trackers.contains(t)) {
      return;
    }
    if (t.type() == Command.GROUP_CONSTRUCT || t.type() == Command.GROUP_DESTRUCT) {
      checkGroup(t);
      return;
    }
    if (t.type() != Command.FENCENB) {
      checkConnect(t);
      return;
    }
    // Only local completion is timed here; once the host has it, the host owns the timeout.
    t.cancelTimer();
    if (t.collectMismatch()) {
      complete(t, Status.ERR_INVALID_ARG);
      return;
    }
    if (t.isLocal()) {
      complete(t, t.localStatus());
      return;
    }
    t.markHostCalled();
    byte[] data = t.collect() ? fenceData.collect(t) : new byte[0];
    List<Proc> procs = t.procs();
    List<Info> hostInfo = t.hostInfo();
    hostCalls.call(
        () -> host.fenceNb(procs, hostInfo, data.clone()),
        (bytes, failure) -> {
          if (!trackers.contains(t)) {
            return;
          }
          if (failure != null) {
            complete(t, failure);
            return;
          }
          try {
            if (bytes != null && bytes.length > 0) {
              fenceData.store(t, bytes);
            }
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "host returned unusable fence data", e);
            complete(t, Status.ERR_UNPACK_FAILURE);
            return;
          }
          complete(t, Status.SUCCESS);
        });
  }

  /**
   * A connect or disconnect whose local participants have all arrived: done at once when every
   * participant is local (4.2.2 does not involve the host then), else handed to the host's {@code
   * connect}/{@code disconnect} with the fence's two appended infos. A host without the upcall
   * answers NOT_SUPPORTED, which every local caller gets (4.2.2 answers only the last caller and
   * leaves the others waiting forever; we do not copy that).
   */
  private void checkConnect(FenceTracker t) {
    if (t.isLocal()) {
      complete(t, t.localStatus());
      return;
    }
    boolean connect = t.type() == Command.CONNECTNB;
    if (!connect) {
      t.cancelTimer(); // the host owns a disconnect's timeout from here
    }
    t.markHostCalled();
    List<Proc> procs = t.procs();
    List<Info> hostInfo = t.hostInfo();
    hostCalls.call(
        () -> connect ? host.connect(procs, hostInfo) : host.disconnect(procs, hostInfo),
        (x, failure) -> {
          if (trackers.contains(t)) {
            complete(t, failure == null ? Status.SUCCESS : failure);
          }
        });
  }

  /**
   * A group construct or destruct whose local members have all arrived or departed.
   *
   * <p>A purely local construct that a member will never join (it died before arriving, or was
   * gone before the construct began) fails with PARTIAL_SUCCESS, the status a fence's survivors
   * get (5.0.11 leaves the others waiting for ever: docs/libpmix-facts.md); a non-local one goes
   * to the host with the local collective status, and the host decides. A construct that asks
   * for no context id ({@code pmix.grp.actxid}) and names local members only, or says {@code
   * pmix.grp.lcl} (PRRTE then assigns none either), completes here; any other goes to the host's
   * {@link HostModule#groupConstruct}, which assigns the context id. A destruct goes on without
   * the dead, and to the host only when some member is not local.
   */
  private void checkGroup(FenceTracker t) {
    boolean construct = t.type() == Command.GROUP_CONSTRUCT;
    boolean forceLocal = false;
    boolean wantsContextId = false;
    for (Info i : t.allDirectives()) {
      if (i.key().equals(Keys.GROUP_LOCAL_ONLY.name())) {
        forceLocal |= Requests.isTrue(i.value());
      } else if (i.key().equals(Keys.GROUP_ASSIGN_CONTEXT_ID.name())) {
        wantsContextId |= Requests.isTrue(i.value());
      }
    }
    String id = requireNonNull(t.groupId(), "groupId");
    List<Proc> procs = t.procs();
    if (!construct) {
      t.cancelTimer(); // the host owns a destruct's timeout from here, as a disconnect's
    }
    if (construct && t.isLocal() && t.missingMembers()) {
      // A local member died (or was gone before the construct): no group without it.
      complete(t, Status.ERR_PARTIAL_SUCCESS);
      return;
    }
    if (forceLocal || (t.isLocal() && (!construct || !wantsContextId))) {
      if (construct) {
        constructed(t, new Groups.Group(id, procs, OptionalLong.empty()));
      } else {
        groups.destructed(id);
        complete(t, Status.SUCCESS);
      }
      return;
    }
    t.markHostCalled();
    List<Info> hostInfo = t.groupHostInfo();
    if (!construct) {
      hostCalls.call(
          () -> host.groupDestruct(id, procs, hostInfo),
          (x, failure) -> {
            if (trackers.contains(t)) {
              if (failure == null) {
                groups.destructed(id);
              }
              complete(t, failure == null ? Status.SUCCESS : failure);
            }
          });
      return;
    }
    hostCalls.call(
        () -> host.groupConstruct(id, procs, hostInfo),
        (results, failure) -> {
          if (!trackers.contains(t)) {
            return;
          }
          if (failure != null) {
            complete(t, failure);
            return;
          }
          Groups.Group g;
          try {
            g = groupOf(id, procs, results == null ? List.of() : results);
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "host returned unusable group results", e);
            complete(t, Status.ERR_BAD_PARAM);
            return;
          }
          constructed(t, g);
        });
  }

  /** The group the host's results describe: its context id and, if given, its membership. */
  private static Groups.Group groupOf(String id, List<Proc> procs, List<Info> results) {
    OptionalLong ctx = OptionalLong.empty();
    List<Proc> members = procs;
    for (Info i : results) {
      if (i.key().equals(Keys.GROUP_CONTEXT_ID.name())) {
        ctx = OptionalLong.of(i.value().asLong());
      } else if (i.key().equals(Keys.GROUP_MEMBERSHIP.name())) {
        List<Proc> m = new ArrayList<>();
        for (Value v : ((DataArray) i.value()).items()) {
          m.add((Proc) v);
        }
        members = m;
      }
    }
    return new Groups.Group(id, members, ctx);
  }

  /**
   * A successful construct: the server records the group and every local member gets the
   * membership and context id in the layout its version reads (the members' {@code
   * pmix.grp.info} contributions too, for 6.0+ clients, which store them qualified by the context
   * id).
   */
  private void constructed(FenceTracker t, Groups.Group g) {
    trackers.remove(t);
    t.cancelTimer();
    groups.constructed(g);
    List<Info> groupInfo = new ArrayList<>();
    if (g.contextId().isPresent()) {
      for (Info i : t.allDirectives()) {
        if (i.key().equals(Keys.GROUP_INFO.name())) {
          groupInfo.add(i);
        }
      }
    }
    for (FenceTracker.Arrival a : t.arrivals()) {
      GroupConstructReply.Layout layout = layoutOf(a.peer());
      Replies.send(
          a.peer(),
          a.tag(),
          () -> new GroupConstructReply(
              layout, Status.SUCCESS, g.members(), g.contextId(),
              layout == GroupConstructReply.Layout.V6 ? groupInfo : List.of()));
    }
  }

  private static GroupConstructReply.Layout layoutOf(Peer peer) {
    return GroupConstructReply.Layout.forVersion(peer.majorVersion());
  }

  /** Ends the collective: every caller gets {@code status} (a successful connect, its data). */
  private void complete(FenceTracker t, Status status) {
    trackers.remove(t);
    t.cancelTimer();
    if (t.type() == Command.CONNECTNB && status.isSuccess()) {
      replyConnected(t);
      return;
    }
    if (t.type() == Command.GROUP_CONSTRUCT) {
      // A failed construct: 4.2.2's reply carries a context id even then.
      for (FenceTracker.Arrival a : t.arrivals()) {
        GroupConstructReply r = GroupConstructReply.failure(layoutOf(a.peer()), status);
        Replies.send(a.peer(), a.tag(), () -> r);
      }
      return;
    }
    for (FenceTracker.Arrival a : t.arrivals()) {
      Replies.status(a.peer(), a.tag(), status);
    }
  }

  /**
   * The successful CONNECTNB reply (4.2.2's {@code _cnct}), a {@link ConnectNbReply}: to each
   * local caller its status, then one BYTE_OBJECT per distinct namespace among the local callers
   * other than the caller's own, holding the namespace's name and its job data as KVAL units
   * (what a REQ reply carries). A namespace this server holds no job data for (a tool's) gets no
   * blob.
   */
  private void replyConnected(FenceTracker t) {
    List<String> nspaces = new ArrayList<>();
    for (Proc p : t.arrivedProcs()) {
      if (!nspaces.contains(p.nspace())) {
        nspaces.add(p.nspace());
      }
    }
    for (FenceTracker.Arrival a : t.arrivals()) {
      Peer peer = a.peer();
      Replies.send(
          peer,
          a.tag(),
          () -> {
            List<ReqReply> jobs = new ArrayList<>();
            for (String other : nspaces) {
              if (other.equals(peer.proc().nspace())) {
                continue;
              }
              Namespace ns = registry.namespace(other);
              if (ns == null || !ns.registered()) {
                continue;
              }
              jobs.add(new ReqReply(other, ns.jobData(hostname).replyBody(peer.format())));
            }
            return new ConnectNbReply(Status.SUCCESS, jobs);
          });
    }
  }

  // ============================================================================================
  // Lifecycle
  // ============================================================================================

  /**
   * A rank will not contribute any more: its last process died unfinalized, or the host
   * deregistered it. Every collective counting it that it has not contributed to stops waiting
   * for it and reports the 4.2.2 local status (PARTIAL_SUCCESS while other counted ranks remain,
   * else LOST_CONNECTION). An orderly finalize never comes here.
   */
  public void rankDeparted(Proc p) {
    for (FenceTracker t : new ArrayList<>(trackers)) {
      if (!t.depart(p) || t.hostCalled() || !t.locallyComplete()) {
        continue; // unchanged, or the host owns it now: wait for its answer
      }
      if (t.arrivals().isEmpty()) {
        trackers.remove(t);
        t.cancelTimer();
      } else if (t.isLocal()) {
        complete(t, t.localStatus());
      } else {
        check(t);
      }
    }
  }

  /** A rank is a local process again: collectives still collecting wait for it again. */
  public void rankReturned(Proc p) {
    for (FenceTracker t : trackers) {
      t.returned(p);
    }
  }

  /** Registration changed: collectives that could not count their participants count again. */
  public void registrationChanged() {
    for (FenceTracker t : new ArrayList<>(trackers)) {
      if (!t.countComplete() && !t.hostCalled()) {
        t.recount(census(t.procs()));
        check(t);
      }
    }
  }

  /**
   * Collectives naming a deregistered namespace cannot complete as asked: LOST_CONNECTION; the
   * groups it had members in are gone.
   */
  public void namespaceGone(String nspace) {
    groups.namespaceGone(nspace);
    for (FenceTracker t : new ArrayList<>(trackers)) {
      if (t.namesNamespace(nspace)) {
        complete(t, Status.ERR_LOST_CONNECTION);
      }
    }
  }

  /** Shutdown: every collective ends with {@code status}. */
  public void shutdown(Status status) {
    for (FenceTracker t : new ArrayList<>(trackers)) {
      complete(t, status);
    }
  }

  /** The number of groups constructed and not destructed. */
  public int groups() {
    return groups.all().size();
  }

  /** The number of collectives in progress. */
  public int active() {
    return trackers.size();
  }

  /** Each participant entry of each collective in progress (for the snapshot). */
  public void forEachParticipant(Consumer<Proc> action) {
    for (FenceTracker t : trackers) {
      t.procs().forEach(action);
    }
  }
}
