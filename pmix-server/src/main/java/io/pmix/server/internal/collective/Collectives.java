package io.pmix.server.internal.collective;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoop;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.internal.message.ConnectNbReply;
import io.pmix.common.internal.message.ConnectNbRequest;
import io.pmix.common.internal.message.DisconnectNbRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.server.HostModule;
import io.pmix.server.internal.HostCalls;
import io.pmix.server.internal.Replies;
import io.pmix.server.internal.Requests;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Fences (FENCENB, docs/commands.md §3.4) and connect/disconnect (CONNECTNB, DISCONNECTNB,
 * docs/commands.md §4; {@code pmix_server_connect}/{@code pmix_server_disconnect} at v4.2.2): one
 * arrival path into one {@link FenceTracker} per (type, sorted participants). When every local
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
  private static final System.Logger LOG = System.getLogger(Collectives.class.getName());

  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final EventLoop loop;
  private final String hostname;
  private final FenceData fenceData;
  private final List<FenceTracker> trackers = new ArrayList<>();

  /**
   * The collectives of one server.
   *
   * @param loop the progress thread (timeouts run on it)
   */
  public Collectives(
      Registry registry, HostModule host, HostCalls hostCalls, EventLoop loop, CodecLimits limits,
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
    arrive(Command.FENCENB, q.procs(), info, collect, timeout, peer, tag);
  }

  /**
   * CONNECTNB: the fence's collective over the local participants, in a tracker of its own type.
   * {@code pmix.timeout} answers ERR_TIMEOUT to every caller if the whole operation, host part
   * included, has not completed by then. The decoder has refused a request without a proc (C:
   * BAD_PARAM) and sorted the procs.
   */
  public void handleConnect(Peer peer, int tag, ConnectNbRequest q) {
    List<Info> info = q.directives();
    arrive(Command.CONNECTNB, q.procs(), info, false, timeoutOf(info), peer, tag);
  }

  /**
   * DISCONNECTNB: as {@link #handleConnect}, but {@code pmix.timeout} bounds only the local
   * collection, as a fence's does: OpenPMIx master times it (4.2.2 to 6.1 ignore it, so a
   * participant that never calls hung the others), and the host owns any timeout after that.
   */
  public void handleDisconnect(Peer peer, int tag, DisconnectNbRequest q) {
    List<Info> info = q.directives();
    arrive(Command.DISCONNECTNB, q.procs(), info, false, timeoutOf(info), peer, tag);
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
      List<Info> info,
      boolean collect,
      long timeout,
      Peer peer,
      int tag) {
    FenceTracker t = null;
    for (FenceTracker x : trackers) {
      if (x.matches(type, procs)) {
        t = x;
        break;
      }
    }
    if (t == null) {
      t = new FenceTracker(procs, type, collect);
      t.recount(census(procs));
      trackers.add(t);
    }
    t.arrive(peer, tag, collect, info);
    boolean stopsAtHost = type != Command.CONNECTNB;
    if (timeout > 0 && !t.hasTimer() && !(stopsAtHost && t.hostCalled())) {
      FenceTracker tt = t;
      t.timer(
          loop.schedule(
              () -> {
                tt.timerFired();
                if (trackers.contains(tt) && !(stopsAtHost && tt.hostCalled())) {
                  complete(tt, Status.ERR_TIMEOUT);
                }
              },
              timeout,
              TimeUnit.SECONDS));
    }
    check(t);
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

  /** Ends the collective: every caller gets {@code status} (a successful connect, its data). */
  private void complete(FenceTracker t, Status status) {
    trackers.remove(t);
    t.cancelTimer();
    if (t.type() == Command.CONNECTNB && status.isSuccess()) {
      replyConnected(t);
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

  /** Collectives naming a deregistered namespace cannot complete as asked: LOST_CONNECTION. */
  public void namespaceGone(String nspace) {
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
