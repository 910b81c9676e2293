package io.pmix.server.internal.modex;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.GetNbReply;
import io.pmix.server.internal.Replies;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link PendingGet} is answered, at once or after waiting: a {@link GetNbReply} (status,
 * then blobs of PROC and KVAL units in the requester's format; docs/commands.md §3.5) or the
 * host's direct-modex result (bare native KVAL units; docs/commands.md §7.2). Each request is
 * answered once. Progress thread only.
 */
final class GetAnswers {
  private final Registry registry;
  private final String hostname;

  GetAnswers(Registry registry, String hostname) {
    this.registry = registry;
    this.hostname = hostname;
  }

  /** Answers with status 0 and the target's data blob (plus job data for another namespace). */
  void satisfy(PendingGet g, boolean local) {
    if (g.done) {
      return;
    }
    g.done = true;
    Namespace ns = registry.namespace(g.target.nspace());
    ProcData d = ns == null ? null : ns.data().proc(g.target.rank());
    Map<String, Value> values = new LinkedHashMap<>();
    if (d != null) {
      if (g.scope == Scope.GLOBAL) {
        values.putAll(d.local());
        values.putAll(d.remote());
      } else {
        values.putAll(d.scope(useLocal(g.scope, local)));
      }
    }
    if (g.to instanceof PendingGet.ToHost h) {
      completeForHost(h, values);
      return;
    }
    PendingGet.ToClient c = g.client();
    Peer peer = c.peer();
    boolean diffNs = ns != null && !peer.ns().name().equals(ns.name());
    Replies.send(peer, c.tag(), new Answer(peer, diffNs ? ns : null, g.target, values));
  }

  /**
   * A GETNB answer, made when sent: the job-level data of {@code otherNs} first when the
   * requester is of another namespace, then the target's values. A class, not a lambda: a hash
   * client's first get of a peer's key runs this path once, and a lambda's first call costs a
   * fresh server 0.1-0.2 ms, more with its first method handles (docs/architecture.md, "First
   * requests").
   */
  private final class Answer implements Supplier<GetNbReply> {
    private final Peer peer;
    private final @Nullable Namespace otherNs;
    private final Proc target;
    private final Map<String, Value> values;

    Answer(Peer peer, @Nullable Namespace otherNs, Proc target, Map<String, Value> values) {
      this.peer = peer;
      this.otherNs = otherNs;
      this.target = target;
      this.values = values;
    }

    @Override
    public GetNbReply get() {
      List<byte[]> blobs = new ArrayList<>(2);
      if (otherNs != null) {
        blobs.add(blob(peer, Proc.wildcard(otherNs.name()), jobLevelOf(otherNs)));
      }
      blobs.add(blob(peer, target, values));
      return new GetNbReply(Status.SUCCESS, blobs);
    }
  }

  /** Whether a request of {@code scope} reads local data: LOCAL, or none named for a local one. */
  static boolean useLocal(Scope scope, boolean local) {
    return scope == Scope.LOCAL || (scope == Scope.UNDEF && local);
  }

  /** Rank WILDCARD: the job-level values (the one asked for, if a key was given). */
  void answerJobLevel(PendingGet g, Namespace ns) {
    Map<String, Value> all = jobLevelOf(ns);
    Map<String, Value> values;
    if (g.key != null) {
      if (!all.containsKey(g.key)) {
        fail(g, Status.ERR_NOT_FOUND);
        return;
      }
      values = Map.of(g.key, all.get(g.key));
    } else {
      values = all;
    }
    g.done = true;
    PendingGet.ToClient c = g.client();
    Replies.send(c.peer(), c.tag(), new Answer(c.peer(), null, Proc.wildcard(ns.name()), values));
  }

  /**
   * A rank's registered rank-level values ({@code rankLevel}, which hold the key asked for): what
   * libpmix's server answers from its hash, where a rank's job-level keys live beside its
   * commits. A hash client has them from its job data and never asks; a store reader asks when
   * the store lacks them (a rank hidden after a failed write, docs/gds.md §10).
   */
  void answerRankLevel(PendingGet g, Namespace ns, Map<String, Value> rankLevel) {
    g.done = true;
    PendingGet.ToClient c = g.client();
    Peer peer = c.peer();
    boolean diffNs = !peer.ns().name().equals(ns.name());
    Replies.send(peer, c.tag(), new Answer(peer, diffNs ? ns : null, g.target, rankLevel));
  }

  /** Whether some rank of {@code ns} holds {@code key} in the scope natural for it. */
  boolean anyRankHas(Namespace ns, String key) {
    for (Map.Entry<Integer, ProcData> e : ns.data().byRank().entrySet()) {
      if (ProcData.holds(e.getValue().scope(ns.hasRank(e.getKey())), key)) {
        return true;
      }
    }
    return false;
  }

  /** Rank UNDEF: every rank's data in the scope natural for it. */
  void answerAllRanks(PendingGet g, Namespace ns) {
    PendingGet.ToClient c = g.client();
    List<byte[]> blobs = new ArrayList<>();
    for (Map.Entry<Integer, ProcData> e : ns.data().byRank().entrySet()) {
      boolean local = ns.hasRank(e.getKey());
      Map<String, Value> values = e.getValue().scope(local);
      if (g.key != null && !ProcData.holds(values, g.key)) {
        continue;
      }
      blobs.add(blob(c.peer(), Proc.of(ns.name(), e.getKey()), values));
    }
    if (blobs.isEmpty()) {
      fail(g, Status.ERR_NOT_FOUND);
      return;
    }
    g.done = true;
    Replies.send(c.peer(), c.tag(), () -> new GetNbReply(Status.SUCCESS, blobs));
  }

  /** Answers with {@code status} (a GETNB's status reply, or the host's failed result). */
  void fail(PendingGet g, Status status) {
    if (g.done) {
      return;
    }
    g.done = true;
    g.cancelTimer();
    if (g.to instanceof PendingGet.ToHost h) {
      h.result().completeExceptionally(
          new PmixException(status, "direct-modex request for " + g.target));
    } else {
      PendingGet.ToClient c = g.client();
      Replies.status(c.peer(), c.tag(), status);
    }
  }

  /** The namespace's job-level values: its registration's, then what the host delivered. */
  Map<String, Value> jobLevelOf(Namespace ns) {
    Map<String, Value> all = new LinkedHashMap<>();
    if (ns.registered()) {
      all.putAll(ns.jobData(hostname).jobLevel());
    }
    all.putAll(ns.data().extraJobLevel());
    return all;
  }

  /** Completes a host's request with {@code values} as bare native KVAL units. */
  static void completeForHost(PendingGet.ToHost to, Map<String, Value> values) {
    WireBuffer b = WireBuffer.allocate();
    byte[] bytes;
    try {
      PmixWriter w = new PmixWriter(b, WireFormat.DEFAULT);
      packValues(w, values);
      bytes = b.toByteArray();
    } catch (RuntimeException e) {
      to.result().completeExceptionally(
          new PmixException(Status.ERR_PACK_FAILURE, "cannot pack direct-modex data", e));
      return;
    }
    to.result().complete(bytes);
  }

  /** A GETNB reply blob: PROC, then KVAL units, packed in the requester's format. */
  private static byte[] blob(Peer peer, Proc p, Map<String, Value> values) {
    // An array, not a ByteBuf: a fresh server runs this interpreted (see Replies.frame).
    WireBuffer b = WireBuffer.allocate();
    PmixWriter w = new PmixWriter(b, peer.format());
    w.packProc(p);
    packValues(w, values);
    return b.toByteArray();
  }

  /** Each value as a KVAL unit under its wire key (a loop: see {@link Answer}). */
  private static void packValues(PmixWriter w, Map<String, Value> values) {
    for (Map.Entry<String, Value> e : values.entrySet()) {
      w.pack(new Value.KVal(ProcData.wireKey(e.getKey()), e.getValue()));
    }
  }
}
