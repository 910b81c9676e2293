package io.pmix.server.internal.modex;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.server.HostModule;
import io.pmix.server.internal.HostCalls;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import io.pmix.server.internal.ProgressExecutor;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The requests that wait: parked until a local target commits (or its namespace is fully
 * registered), or waiting for the host's direct modex, one upcall per target however many
 * wait for it. Each is answered exactly once: satisfied, timed out, failed because its target
 * will not commit (finalized, lost, deregistered), or dropped with its requester's cycle
 * (docs/lifecycle.md §6.2.4: in-flight direct-modex requests are pruned). Progress thread only.
 */
final class PendingGets {
  private static final System.Logger LOG = LazyLogger.of(PendingGets.class);

  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final ProgressExecutor loop;
  private final CodecLimits limits;
  private final GetAnswers answers;
  /** GETs waiting for a local target's commit (or registration), by target. */
  private final Map<Proc, List<PendingGet>> localWaits = new HashMap<>();
  /** GETs waiting for the host's direct modex, by target; a key exists while the upcall runs. */
  private final Map<Proc, List<PendingGet>> dmodexWaits = new HashMap<>();

  PendingGets(
      Registry registry, HostModule host, HostCalls hostCalls, ProgressExecutor loop, CodecLimits limits,
      GetAnswers answers) {
    this.registry = registry;
    this.host = host;
    this.hostCalls = hostCalls;
    this.loop = loop;
    this.limits = limits;
    this.answers = answers;
  }

  /** Waits for the target's commit, at most {@code timeoutSeconds} (0: no limit). */
  void park(PendingGet g, long timeoutSeconds) {
    // A loop and a class, not computeIfAbsent and a lambda: a get that waits for a peer's commit
    // is on a client's first cycle (docs/architecture.md, "First requests").
    List<PendingGet> l = localWaits.get(g.target);
    if (l == null) {
      l = new ArrayList<>();
      localWaits.put(g.target, l);
    }
    l.add(g);
    if (timeoutSeconds > 0) {
      g.timer = loop.schedule(new LocalWaitExpiry(g), timeoutSeconds, TimeUnit.SECONDS);
    }
  }

  /** A parked get's time is up: answered ERR_TIMEOUT unless answered already. */
  private final class LocalWaitExpiry implements Runnable {
    private final PendingGet g;

    LocalWaitExpiry(PendingGet g) {
      this.g = g;
    }

    @Override
    public void run() {
      g.timer = null;
      List<PendingGet> l = localWaits.get(g.target);
      if (l != null && l.remove(g)) {
        if (l.isEmpty()) {
          localWaits.remove(g.target);
        }
        answers.fail(g, Status.ERR_TIMEOUT);
      }
    }
  }

  /** The target committed (or its namespace completed registration): answer who waited. */
  void resolve(Proc target, boolean local) {
    List<PendingGet> waiting = localWaits.remove(target);
    if (waiting == null) {
      return;
    }
    for (PendingGet g : waiting) {
      g.cancelTimer();
      answers.satisfy(g, local);
    }
  }

  /**
   * A process of {@code ns} committed: GETs of a key with rank UNDEF (parked under the
   * namespace's UNDEF proc) that some rank now holds are answered; the others wait on.
   */
  void resolveAnyRank(Namespace ns) {
    Proc any = Proc.of(ns.name(), Proc.RANK_UNDEF);
    List<PendingGet> waiting = localWaits.get(any);
    if (waiting == null) {
      return;
    }
    for (java.util.Iterator<PendingGet> it = waiting.iterator(); it.hasNext(); ) {
      PendingGet g = it.next();
      if (g.key == null || answers.anyRankHas(ns, g.key)) {
        it.remove();
        g.cancelTimer();
        answers.answerAllRanks(g, ns);
      }
    }
    if (waiting.isEmpty()) {
      localWaits.remove(any);
    }
  }

  /**
   * Asks the host's {@code directModex} for the target (with {@code pmix.req.key} when a key was
   * asked), unless an upcall for it already runs; its answer is stored and answers every request
   * that waited for it.
   */
  void requestDmodex(PendingGet g, List<Info> clientInfo) {
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
              answers.fail(w, st);
            } else if (target.rank() == Proc.RANK_WILDCARD) {
              Namespace ns = registry.namespace(target.nspace());
              if (ns != null) {
                answers.answerJobLevel(w, ns);
              } else {
                answers.fail(w, Status.ERR_NOT_FOUND);
              }
            } else {
              answers.satisfy(w, false);
            }
          }
        });
  }

  /** Stores the host's direct-modex answer: bare KVAL units (docs/commands.md §7.2). */
  private void storeDmodex(Proc target, byte[] bytes) {
    PmixReader r = new PmixReader(WireBuffer.wrap(bytes), WireFormat.DEFAULT, limits);
    List<Value.KVal> kvs = new ArrayList<>();
    while (r.hasRemaining()) {
      kvs.add((Value.KVal) r.unpackOne(DataType.KVAL));
    }
    NamespaceData data = registry.placeholder(target.nspace()).data();
    if (target.rank() == Proc.RANK_WILDCARD) {
      data.storeJobLevel(kvs);
    } else {
      data.storeRemote(target.rank(), kvs);
      registry.delivered(target);
    }
  }

  /** Answers every GET parked until {@code target} commits: its data is not coming. */
  void failWaitsFor(Proc target, Status status) {
    List<PendingGet> waiting = localWaits.remove(target);
    if (waiting != null) {
      for (PendingGet g : waiting) {
        answers.fail(g, status);
      }
    }
  }

  /** Drops the requests of a peer whose cycle ended, unanswered: nobody is left to read them. */
  void dropGetsOf(Peer peer) {
    // Loops, not removeIf with lambdas: this runs at every finalize (docs/architecture.md,
    // "First requests").
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (Iterator<List<PendingGet>> lists = waits.values().iterator(); lists.hasNext(); ) {
        List<PendingGet> l = lists.next();
        for (Iterator<PendingGet> it = l.iterator(); it.hasNext(); ) {
          PendingGet g = it.next();
          if (g.requester() == peer) {
            g.done = true;
            g.cancelTimer();
            it.remove();
          }
        }
        // Keep dmodex keys (an upcall may still be running); drop empty local-wait lists.
        if (waits == localWaits && l.isEmpty()) {
          lists.remove();
        }
      }
    }
  }

  /** Registration changed: answer the parked GETs whose committed target is now fully known. */
  void registrationChanged(Namespace ns) {
    if (!ns.allRegistered()) {
      return;
    }
    List<Proc> targets = new ArrayList<>();
    for (Proc p : localWaits.keySet()) {
      if (p.nspace().equals(ns.name())) {
        targets.add(p);
      }
    }
    for (Proc p : targets) {
      ProcData d = ns.data().proc(p.rank());
      if (d != null && d.committed()) {
        resolve(p, ns.hasRank(p.rank()));
      }
    }
  }

  /** The namespace is deregistered: requests waiting on its processes get NOT_FOUND. */
  void namespaceGone(String nspace) {
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (Iterator<Map.Entry<Proc, List<PendingGet>>> it = waits.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<Proc, List<PendingGet>> e = it.next();
        if (e.getKey().nspace().equals(nspace)) {
          for (PendingGet g : e.getValue()) {
            answers.fail(g, Status.ERR_NOT_FOUND);
          }
          it.remove();
        }
      }
    }
  }

  /** Shutdown: every waiting request is answered with {@code status}. */
  void shutdown(Status status) {
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (List<PendingGet> l : waits.values()) {
        for (PendingGet g : l) {
          answers.fail(g, status);
        }
      }
      waits.clear();
    }
  }

  /** Each unanswered request: its requester (null for the host's) and target. */
  void forEachWaiting(BiConsumer<@Nullable Peer, Proc> action) {
    for (Map<Proc, List<PendingGet>> waits : List.of(localWaits, dmodexWaits)) {
      for (List<PendingGet> l : waits.values()) {
        for (PendingGet g : l) {
          if (!g.done) {
            action.accept(g.requester(), g.target);
          }
        }
      }
    }
  }
}
