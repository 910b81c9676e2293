package io.pmix.server.internal.modex;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.PmixException;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.server.HostModule;
import io.pmix.server.internal.HostCalls;
import io.pmix.server.internal.JobData;
import io.pmix.server.internal.Replies;
import io.pmix.server.internal.Requests;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.RankInfo;
import io.pmix.server.internal.lifecycle.Registry;
import io.pmix.server.internal.ProgressExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The modex: COMMIT (docs/commands.md §3.3) stores a process's data by scope; GETNB (§3.5)
 * answers from it at once, waits for a local target's commit, or asks the host's {@code
 * directModex} for another node's process; the host's own {@code PMIx_server_dmodex_request}
 * (§7.2) waits the same way. The waiting and the answers are {@link PendingGets} and {@link GetAnswers}; the data is
 * each namespace's {@link NamespaceData}.
 *
 * <p>Lifecycle (docs/lifecycle.md §6.2.4, §6.2.6): a peer's own parked requests go with its cycle
 * ({@link #dropGetsOf}); requests waiting for a rank that finalized, died or was deregistered are
 * answered ({@link #failWaitsFor}); a deregistered namespace's are answered NOT_FOUND. Progress
 * thread only.
 */
public final class Modex {
  /** The GETNB wait for a local target's commit when the caller gave no timeout (as 4.2.2). */
  static final int DEFAULT_LOCAL_GET_TIMEOUT_SECONDS = 2;

  private final Registry registry;
  private final String hostname;
  private final BooleanSupplier stopping;
  private final GetAnswers answers;
  private final PendingGets pending;

  /**
   * The modex of one server.
   *
   * @param loop the progress thread (request timeouts run on it)
   * @param stopping whether the server is shutting down (new host requests are refused)
   */
  public Modex(
      Registry registry, HostModule host, HostCalls hostCalls, ProgressExecutor loop, CodecLimits limits,
      String hostname, BooleanSupplier stopping) {
    this.registry = requireNonNull(registry, "registry");
    this.hostname = requireNonNull(hostname, "hostname");
    this.stopping = requireNonNull(stopping, "stopping");
    this.answers = new GetAnswers(registry, hostname);
    this.pending =
        new PendingGets(
            registry, host, hostCalls, loop, requireNonNull(limits, "limits"), answers);
  }

  /**
   * The scope a wire code names. A code 4.2.2 does not define reads as INTERNAL, a scope no
   * lookup shares: stored as local data only, and never the locality default of a GET.
   */
  static Scope scopeOf(int code) {
    return Scope.fromCode(code).orElse(Scope.INTERNAL);
  }

  /**
   * COMMIT: sections of (scope, buffer of KVALs). Everything but REMOTE-only data is readable on
   * this node; REMOTE and GLOBAL data goes to other nodes. The commit answers who waited.
   */
  public void handleCommit(Peer peer, int tag, CommitRequest q) {
    ProcData d = peer.ns().data().procOrCreate(peer.info().rank());
    for (CommitRequest.Section s : q.sections()) {
      Scope scope = scopeOf(s.scope());
      for (Value.KVal kv : s.kvals()) {
        if (kv.key() == null) {
          continue;
        }
        if (scope != Scope.REMOTE) {
          d.putLocal(kv.key(), kv.value());
        }
        if (scope.reachesRemote()) {
          d.putRemote(kv.key(), kv.value());
        }
      }
    }
    d.markCommitted();
    Replies.status(peer, tag, Status.SUCCESS);
    pending.resolve(peer.proc(), true);
    pending.resolveAnyRank(peer.ns());
  }

  /**
   * GETNB: job-level data for rank WILDCARD, every rank's for UNDEF; a rank's {@code pmix} key of
   * its registered rank-level data at once (libpmix's server answers those from its hash; a store
   * reader asks when its store lacks them); a local rank's committed
   * data at once or after waiting for its commit (default {@value
   * #DEFAULT_LOCAL_GET_TIMEOUT_SECONDS} s); another node's process through the host's direct
   * modex, unless its data came with a fence. {@code pmix.immediate} answers NOT_FOUND instead of
   * waiting; {@code pmix.get.refresh} goes to the host again. An empty namespace is refused at
   * once ({@code PMIX_ERR_BAD_PARAM}): no process has one, so nothing could ever answer (libpmix's
   * clients send their own namespace instead; a 4.2.2 server would wait for its registration).
   */
  public void handleGet(Peer peer, int tag, GetNbRequest q) {
    String nspace = q.proc().nspace();
    if (nspace.isEmpty()) {
      Replies.status(peer, tag, Status.ERR_BAD_PARAM);
      return;
    }
    int rank = q.proc().rank();
    List<Info> info = q.directives();
    String key = q.key();
    boolean immediate = false;
    boolean refresh = false;
    long timeout = 0;
    Scope scope = Scope.UNDEF;
    for (Info i : info) {
      String k = i.key();
      if (k.equals(Keys.IMMEDIATE.name())) {
        immediate = Requests.isTrue(i.value());
      } else if (k.equals(Keys.TIMEOUT.name())) {
        timeout = i.value().asLong();
      } else if (k.equals(Keys.GET_REFRESH_CACHE.name())) {
        refresh = Requests.isTrue(i.value());
      } else if (k.equals(Keys.DATA_SCOPE.name())) {
        scope = scopeOf((int) i.value().asLong());
      }
    }
    Proc target = q.proc();
    PendingGet g = new PendingGet(new PendingGet.ToClient(peer, tag), target, key, scope);
    Namespace ns = registry.namespace(nspace);
    boolean foreign = ns == null || !ns.hosted();

    if (!foreign && rank == Proc.RANK_WILDCARD) {
      answers.answerJobLevel(g, ns);
      return;
    }
    if (foreign) {
      if (key != null && ns != null) {
        ProcData d = ns.data().proc(rank);
        if (!refresh && d != null && ProcData.holds(d.remote(), key)) {
          answers.satisfy(g, false);
          return;
        }
      }
      if (immediate) {
        Replies.status(peer, tag, Status.ERR_NOT_FOUND);
        return;
      }
      pending.requestDmodex(g, info);
      return;
    }
    if (!ns.allRegistered()) {
      waitUnlessImmediate(g, immediate, timeout);
      return;
    }
    boolean local;
    JobData jd = ns.jobData(hostname);
    if (rank == Proc.RANK_UNDEF) {
      // 5.x+ servers hold a get of a key no rank has yet until some rank commits it.
      if (key == null || answers.anyRankHas(ns, key) || immediate) {
        answers.answerAllRanks(g, ns);
      } else {
        pending.park(g, timeout > 0 ? timeout : DEFAULT_LOCAL_GET_TIMEOUT_SECONDS);
      }
      return;
    }
    if (key != null && !refresh && key.startsWith("pmix") && g.to instanceof PendingGet.ToClient) {
      // A rank's registered job data (no process commits pmix keys): at once, whether it has
      // connected or not.
      Map<String, Value> rankLevel = jd.rankLevel(rank);
      if (rankLevel.containsKey(key)) {
        answers.answerRankLevel(g, ns, rankLevel);
        return;
      }
    }
    RankInfo ri = ns.rank(rank);
    if (ri != null) {
      if (ri.peerIndex() < 0 && !ns.data().has(rank)) {
        // A local rank that has not connected yet: hold the request.
        waitUnlessImmediate(g, immediate, timeout);
        return;
      }
      local = true;
    } else {
      local = jd.nprocs() == ns.registeredNlocalprocs() && ns.registeredNlocalprocs() > 0;
    }
    if (refresh) {
      if (local) {
        Replies.status(peer, tag, Status.SUCCESS);
      } else {
        pending.requestDmodex(g, info);
      }
      return;
    }
    ProcData d = ns.data().proc(rank);
    boolean useLocal = GetAnswers.useLocal(scope, local);
    if (key != null) {
      boolean inScope =
          d != null
              && (scope == Scope.GLOBAL
                  ? ProcData.holds(d.local(), key) || ProcData.holds(d.remote(), key)
                  : ProcData.holds(d.scope(useLocal), key));
      if (inScope) {
        answers.satisfy(g, local);
        return;
      }
      if (d != null && ProcData.holds(d.scope(!useLocal), key) && scope != Scope.GLOBAL) {
        Replies.status(peer, tag, Status.ERR_NOT_FOUND);
        return;
      }
    } else if (d != null && d.committed()) {
      answers.satisfy(g, local);
      return;
    }
    if (immediate) {
      Replies.status(peer, tag, Status.ERR_NOT_FOUND);
      return;
    }
    if (local) {
      pending.park(g, timeout > 0 ? timeout : defaultLocalWait(peer));
    } else {
      pending.requestDmodex(g, info);
    }
  }

  /**
   * The wait for a local target's commit when the caller gave no timeout: 4.2.2's 2 s for a 4.x
   * client; none for a 5.x+ one, whose servers set no timer (the get is answered when the target
   * commits or is gone). simpdmodex's rank 0 sleeps exactly 2 s before it commits.
   */
  private static long defaultLocalWait(Peer peer) {
    String v = peer.version();
    int i = 0;
    while (i < v.length() && !Character.isDigit(v.charAt(i))) {
      i++;
    }
    int major = 0;
    for (; i < v.length() && Character.isDigit(v.charAt(i)); i++) {
      major = major * 10 + (v.charAt(i) - '0');
      if (major > 1000) {
        break;
      }
    }
    return major >= 5 ? 0 : DEFAULT_LOCAL_GET_TIMEOUT_SECONDS;
  }

  /**
   * REFRESH_CACHE (PMIx 5+, command 33; what {@code pmix.get.refresh} makes a 5.x client send
   * before its get): the status, then the process's remote-scope data (what it put REMOTE or
   * GLOBAL, as 5.x's server fetches it) as KVALs, which the client stores over its cached copy.
   * NOT_FOUND, with no data, when the server holds nothing for the process.
   */
  public void handleRefresh(Peer peer, int tag, PmixReader r) {
    String nspace = r.unpackString();
    int rank = r.unpackRank();
    if (nspace == null) {
      throw new PmixException(Status.ERR_BAD_PARAM, "REFRESH_CACHE without a namespace");
    }
    Namespace ns = registry.namespace(nspace);
    ProcData d = ns == null ? null : ns.data().proc(rank);
    if (d == null) {
      Replies.status(peer, tag, Status.ERR_NOT_FOUND);
      return;
    }
    List<Value.KVal> kvs = new ArrayList<>();
    d.remote().forEach((k, v) -> kvs.add(new Value.KVal(ProcData.wireKey(k), v)));
    Replies.send(
        peer,
        tag,
        () ->
            w -> {
              w.packStatus(Status.SUCCESS);
              kvs.forEach(w::pack);
            });
  }

  private void waitUnlessImmediate(PendingGet g, boolean immediate, long timeout) {
    if (immediate) {
      PendingGet.ToClient c = g.client();
      Replies.status(c.peer(), c.tag(), Status.ERR_NOT_FOUND);
    } else {
      pending.park(g, timeout);
    }
  }

  /**
   * The host asks for a local process's data for another node ({@code
   * PMIx_server_dmodex_request}): {@code result} completes with the REMOTE-scope data {@code
   * proc} committed (REMOTE and GLOBAL puts), as bare KVAL units in the native format, which is
   * what {@link io.pmix.server.HostModule#directModex} returns on the asking node
   * (docs/commands.md §7.2). For rank WILDCARD, the namespace's job-level data.
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
    long timeout = 0;
    for (Info i : directives) {
      if (i.key().equals(Keys.TIMEOUT.name())) {
        timeout = Math.max(0, i.value().asLong());
      }
    }
    PendingGet.ToHost to = new PendingGet.ToHost(result);
    PendingGet g = new PendingGet(to, proc, null, Scope.REMOTE);
    if (stopping.getAsBoolean()) {
      answers.fail(g, Status.ERR_NOT_AVAILABLE);
      return;
    }
    Namespace ns = registry.namespace(proc.nspace());
    // A namespace known only from fence or direct-modex data is not served here (yet).
    boolean hosted = ns != null && ns.hosted();
    if (proc.rank() == Proc.RANK_WILDCARD) {
      if (ns == null) {
        answers.fail(g, Status.ERR_NOT_FOUND);
      } else {
        g.done = true;
        GetAnswers.completeForHost(to, answers.jobLevelOf(ns));
      }
      return;
    }
    if (hosted && ns.hasRank(proc.rank())) {
      ProcData d = ns.data().proc(proc.rank());
      if (d != null && d.committed()) {
        answers.satisfy(g, true);
        return;
      }
    } else if (hosted && ns.allRegistered()) {
      // Every local rank is registered and this is not one: it will never commit here.
      answers.fail(g, Status.ERR_NOT_FOUND);
      return;
    }
    pending.park(g, timeout);
  }

  /**
   * A new init/finalize cycle of {@code proc} begins: what it committed before is dropped, so
   * GETs wait for this cycle's commit rather than take (and re-send) the old cycle's keys.
   */
  public void cycleBegins(Proc proc) {
    Namespace ns = registry.namespace(proc.nspace());
    if (ns != null) {
      ns.data().forget(proc.rank());
    }
  }

  /** Registration changed: parked GETs whose target committed and is now fully known go. */
  public void registrationChanged(Namespace ns) {
    pending.registrationChanged(ns);
  }

  /** Answers every GET parked until {@code target} commits: its data is not coming. */
  public void failWaitsFor(Proc target, Status status) {
    pending.failWaitsFor(target, status);
  }

  /** Drops the peer's own parked requests (its cycle ended). */
  public void dropGetsOf(Peer peer) {
    pending.dropGetsOf(peer);
  }

  /** The namespace is deregistered: whatever waits on its processes gets NOT_FOUND. */
  public void namespaceGone(String nspace) {
    pending.namespaceGone(nspace);
  }

  /** Shutdown: every waiting request is answered with {@code status}. */
  public void shutdown(Status status) {
    pending.shutdown(status);
  }

  /** Each unanswered request: its requester (null for the host's) and target (for the snapshot). */
  public void forEachWaiting(BiConsumer<@Nullable Peer, Proc> action) {
    pending.forEachWaiting(action);
  }
}
