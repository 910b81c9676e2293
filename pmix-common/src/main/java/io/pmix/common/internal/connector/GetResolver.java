package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.gds.GdsModule;
import io.pmix.common.internal.message.GetNbReply;
import io.pmix.common.internal.message.GetNbRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The local data store of a cycle and the gets resolved against it: what the store holds is
 * answered at once; what it cannot hold is refused at once (our own unposted keys, a non-reserved
 * miss with {@code pmix.optional}, anything when standalone); the rest is asked of the server with
 * one GETNB per proc at a time, the gets of the same proc queued behind it and resolved against
 * the store once its answer is in (docs/commands.md §6.3).
 *
 * <p>A client that chose a shared-memory store ({@link GdsAccess}, docs/gds.md) reads what the
 * server keeps there as a libpmix client does: the job-level data once, when the job data comes
 * at init; a rank's job-level keys once, at the first get about that rank (unless the job data
 * already described it); and every other key of its namespace afresh at each get that the local
 * store does not answer, before the server is asked. A miss there (no such key, or no data of the
 * rank yet) asks the server; its answer for a dstore namespace may carry the data, part of it
 * (the keys the server's own hash store has), or nothing (libpmix's server finds the data in the
 * store and says so with an empty success), so after it the store is read again. The reads run
 * here when they need not wait for the store's lock, else on the reader thread; what they find
 * is used here, on the progress thread ({@link GdsAccess#read}).
 *
 * <p>Confined to the progress thread.
 */
final class GetResolver implements SessionPart {
  /** A get waiting for the server, and the gets of the same proc queued behind it. */
  private static final class GetQueue {
    final List<GetRequest> waiting = new ArrayList<>();
  }

  private record GetRequest(
      Proc proc, String key, List<Info> directives, CompletableFuture<Value> future) {}

  private final LibraryThreads threads;
  private final Connection connection;
  private final GdsAccess gds;

  /** Written on the progress thread; read on callers' threads for published job answers only. */
  @Bookkept("session.peerStore")
  private volatile @Nullable DataStore store;

  @Bookkept("session.queuedGets")
  private final Map<Proc, GetQueue> gets = new HashMap<>();

  GetResolver(LibraryThreads threads, Connection connection, GdsAccess gds) {
    this.threads = requireNonNull(threads, "threads");
    this.connection = requireNonNull(connection, "connection");
    this.gds = requireNonNull(gds, "gds");
  }

  /** Installs the cycle's store once the job data (or the standalone description) is in. */
  void install(DataStore s) {
    store = requireNonNull(s, "store");
  }

  /**
   * The local data store.
   *
   * @throws IllegalStateException before the session is open
   */
  DataStore store() {
    DataStore s = store;
    if (s == null) {
      throw new IllegalStateException("no data store before the session is open");
    }
    return s;
  }

  /**
   * Completes the job data of {@code self}'s namespace from the shared-memory store, if one is
   * attached: its job-level records and this process's own rank-level keys, which a dstore
   * client's REQ reply leaves out (docs/gds.md section 3). {@code done} runs on the progress
   * thread, with null or the failure; at once when no store is attached. If the cycle ends
   * meanwhile, {@code owner} fails instead.
   */
  void completeJobData(
      Proc self, CompletableFuture<?> owner, Consumer<@Nullable PmixException> done) {
    DataStore st = store();
    if (!gds.attached()) {
      st.publishOwnJobAnswers();
      done.accept(null);
      return;
    }
    Proc wildcard = Proc.wildcard(self.nspace());
    // Anonymous classes, not lambdas: every first init on ds21/ds12 runs this
    // (docs/architecture.md, "First requests").
    Consumer<List<Optional<List<Info>>>> ingest =
        new Consumer<List<Optional<List<Info>>>>() {
          @Override
          public void accept(List<Optional<List<Info>>> found) {
            // No records yet is no failure: a server that has not written them answers a get.
            Optional<List<Info>> job = found.get(0);
            if (job.isPresent()) {
              st.ingestJobRecords(self.nspace(), job.get());
            }
            if (!st.hasRankData(self)) {
              Optional<List<Info>> own = found.get(1);
              st.ingestRankData(self, own.isPresent() ? own.get() : List.of());
            }
            st.publishOwnJobAnswers();
            done.accept(null);
          }
        };
    // Read here when the store is free (the usual case): no reader thread to start and hand
    // back from at every init (issue 15); else on the reader thread, which may wait for the lock.
    gds.read(
        owner,
        new Function<GdsModule, List<Optional<List<Info>>>>() {
          @Override
          public List<Optional<List<Info>>> apply(GdsModule m) {
            return List.of(m.fetchRecords(wildcard), m.fetchRecords(self));
          }
        },
        ingest,
        done);
  }

  /**
   * Gets {@code key} of {@code proc}: from the local store when it can, else from the server. Job
   * information of our own namespace (rank WILDCARD, no directives) is answered on the calling
   * thread from the answers published at init ({@link DataStore#publishOwnJobAnswers}), another
   * process's key asked again without directives from the answer given the first time ({@link
   * DataStore#peerAnswer}; not with a shared-memory store), and a
   * peer's modex key in a shared-memory store is read on the calling thread first, as libpmix's
   * client does ({@code _getfn_fastpath}): found, the future returned is complete already.
   */
  CompletableFuture<Value> get(Proc asked, String key, List<Info> directives) {
    requireNonNull(asked, "proc");
    requireNonNull(key, "key");
    Proc proc = ownIfEmpty(asked);
    List<Info> ds = List.copyOf(directives);
    if (ds.isEmpty() && proc.rank() == Proc.RANK_WILDCARD) {
      // Job information of our own namespace: answered here, from what the progress thread
      // computed from the job data (DataStore#publishOwnJobAnswers), as the local store would.
      DataStore st = store;
      if (st != null && proc.nspace().equals(st.me().nspace())) {
        Value v = st.ownJobAnswer(key);
        if (v != null) {
          return CompletableFuture.completedFuture(v);
        }
      }
    }
    if (ds.isEmpty() && !proc.isSpecialRank() && !gds.attached()) {
      // Asked before, and nothing written since: what the progress thread answered then
      // (DataStore#peerAnswer). A shared-memory store is read on the caller below instead.
      DataStore st = store;
      if (st != null) {
        Value v = st.peerAnswer(proc, key);
        if (v != null) {
          return CompletableFuture.completedFuture(v);
        }
      }
    }
    if (gds.attached() && fastPath(proc, key, ds)) {
      Value v = gds.readOnCaller(proc, key);
      if (v != null) {
        try {
          return CompletableFuture.completedFuture(CompressedStrings.expand(v));
        } catch (PmixException e) {
          return CompletableFuture.failedFuture(e);
        }
      }
    }
    // An anonymous class, not a lambda: a first get runs this (docs/architecture.md, "First
    // requests").
    return threads.call(
        new Consumer<CompletableFuture<Value>>() {
          @Override
          public void accept(CompletableFuture<Value> f) {
            resolve(new GetRequest(proc, key, ds, f));
          }
        });
  }

  /**
   * An empty namespace is this process's own, as libpmix's {@code PMIx_Get} (4.2.2 to 6.1) reads
   * it; sent as is, a server would wait for a namespace nobody can register (or refuse it). Before
   * the connection knows its name, the proc is left as it is.
   */
  private Proc ownIfEmpty(Proc p) {
    if (!p.nspace().isEmpty()) {
      return p;
    }
    try {
      return Proc.of(connection.me().nspace(), p.rank());
    } catch (IllegalStateException e) {
      return p;
    }
  }

  /**
   * Whether a get may read the store before the local one is asked: a peer's (another rank of
   * our namespace) non-reserved key, without qualifiers. The local store holds such a key only
   * from an earlier answer of the server, which the store has as well, and fresher; our own keys,
   * job-level data and realms keep their order of lookup.
   */
  private boolean fastPath(Proc proc, String key, List<Info> directives) {
    if (proc.isSpecialRank() || DataStore.isReserved(key) || connection.isStandalone()) {
      return false;
    }
    Proc self;
    try {
      self = connection.me();
    } catch (IllegalStateException e) {
      return false;
    }
    if (!proc.nspace().equals(self.nspace()) || proc.rank() == self.rank()) {
      return false;
    }
    for (Info i : directives) {
      if ((i.flags() & Info.QUALIFIER) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether {@code g} may be read from the shared-memory store: one is attached, the proc is of
   * our namespace (a libpmix client reads no other from it) and a rank or WILDCARD, and no
   * qualifier asks for a value only the hash rules select.
   */
  private boolean readsShared(GetRequest g) {
    if (!gds.attached() || !g.proc().nspace().equals(connection.me().nspace())) {
      return false;
    }
    int rank = g.proc().rank();
    if (g.proc().isSpecialRank() && rank != Proc.RANK_WILDCARD) {
      return false;
    }
    for (Info i : g.directives()) {
      if ((i.flags() & Info.QUALIFIER) != 0) {
        return false;
      }
    }
    return true;
  }

  private void resolve(GetRequest g) {
    DataStore st = store();
    Proc self = connection.me();
    boolean shared = readsShared(g);
    if (shared && !g.proc().isSpecialRank() && !st.hasRankData(g.proc())) {
      // The rank's job-level keys (host, node, app, local rank...) once, so that the realm rules
      // of the local store work for it as with hash; then the get proper.
      gds.read(
          g.future(),
          m -> m.fetchRecords(g.proc()),
          records -> {
            st.ingestRankData(g.proc(), records.orElse(List.of()));
            resolve(g);
          },
          e -> threads.fail(g.future(), e));
      return;
    }
    DataStore.Lookup l = st.lookup(g.proc(), g.key(), g.directives());
    if (l instanceof DataStore.Lookup.Found found) {
      completeGet(g, found.value());
      return;
    }
    if (l instanceof DataStore.Lookup.Absent || connection.isStandalone()) {
      threads.fail(g.future(), DataStore.notFound(g.proc(), g.key()));
      return;
    }
    boolean ownNspace = g.proc().nspace().equals(self.nspace());
    boolean reserved = DataStore.isReserved(g.key());
    if (ownNspace && g.proc().rank() == self.rank() && !reserved) {
      // Our own data is all here: asking the server would only wait for a commit of ourselves.
      threads.fail(g.future(), DataStore.notFound(g.proc(), g.key()));
      return;
    }
    if (shared) {
      readShared(
          g,
          found -> {
            if (found != null) {
              completeGet(g, found);
            } else {
              askServer(g);
            }
          });
      return;
    }
    askServer(g);
  }

  /**
   * Reads {@code g}'s key from the shared-memory store, then gives {@code then} the value, or null
   * if the store has none. A reserved key a rank lacks is looked for in the job-level data too,
   * as the local store does.
   */
  private void readShared(GetRequest g, Consumer<@Nullable Value> then) {
    Proc p = g.proc();
    String key = g.key();
    gds.read(
        g.future(),
        m -> {
          GdsModule.Fetched f = m.fetch(p, key);
          if (!(f instanceof GdsModule.Fetched.Found)
              && !p.isSpecialRank()
              && DataStore.isReserved(key)) {
            f = m.fetch(Proc.wildcard(p.nspace()), key);
          }
          return f instanceof GdsModule.Fetched.Found found ? Optional.of(found.value())
              : Optional.<Value>empty();
        },
        v -> then.accept(v.orElse(null)),
        e -> threads.fail(g.future(), e));
  }

  /** Asks the server for {@code g}'s proc, or queues behind the request already asking. */
  private void askServer(GetRequest g) {
    if (DataStore.flag(g.directives(), "pmix.optional")) {
      threads.fail(g.future(), DataStore.notFound(g.proc(), g.key()));
      return;
    }
    DataStore st = store();
    Proc self = connection.me();
    boolean ownNspace = g.proc().nspace().equals(self.nspace());
    boolean reserved = DataStore.isReserved(g.key());
    GetQueue q = gets.get(g.proc());
    if (q != null) {
      q.waiting.add(g);
      return;
    }
    q = new GetQueue();
    gets.put(g.proc(), q);
    List<Info> ds = g.directives();
    if (reserved && ownNspace && !DataStore.flag(ds, "pmix.immediate")) {
      // What the job data lacks the server answers at once or not at all (docs/commands.md §6.3
      // step 5).
      List<Info> more = new ArrayList<>(ds);
      more.add(Info.of("pmix.immediate", true));
      ds = List.copyOf(more);
    }
    GetQueue queue = q;
    connection.send(
        new GetNbRequest(g.proc(), ds, g.key()),
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            // The blobs as views of the frame: each is stored before this returns.
            List<WireBuffer> blobs = new ArrayList<>(1);
            Status s = GetNbReply.decodeInPlace(r, blobs);
            // Nothing logged here, not even asked whether to: the first question to a System.Logger
            // starts the logging backend, 10-30 ms of a fresh JVM, in a first remote get.
            for (WireBuffer blob : blobs) {
              // A dstore namespace's data found only in the store comes back as an empty blob
              // (libpmix's dstore modules assemble nothing): it is read from the store below.
              if (blob.writerIndex() > 0) {
                st.ingestGetBlob(blob, g.proc());
              }
            }
            finishGet(
                g,
                queue,
                s.isSuccess() ? null : new PmixException(s, "get " + g.key() + " of " + g.proc()));
          }

          @Override
          public void onFailure(PmixException e) {
            finishGet(g, queue, e);
          }
        });
  }

  /**
   * Hands a found value to the caller, a compressed string expanded as C's get does; without
   * directives and a shared-memory store, the answer is kept for the same get asked again
   * ({@link DataStore#peerAnswer}).
   */
  private void completeGet(GetRequest g, Value value) {
    Value v;
    try {
      v = CompressedStrings.expand(value);
    } catch (PmixException e) {
      threads.fail(g.future(), e);
      return;
    }
    if (g.directives().isEmpty() && !gds.attached()) {
      store().rememberPeerAnswer(g.proc(), g.key(), v);
    }
    threads.complete(g.future(), v);
  }

  private void finishGet(GetRequest leader, GetQueue queue, @Nullable PmixException failure) {
    gets.remove(leader.proc(), queue);
    DataStore st = store;
    if (failure != null) {
      threads.fail(leader.future(), failure);
    } else if (st != null
        && st.lookup(leader.proc(), leader.key(), leader.directives())
            instanceof DataStore.Lookup.Found found) {
      completeGet(leader, found.value());
    } else if (st != null && readsShared(leader)) {
      // The server stored the data in the shared-memory store before answering: read it there.
      readShared(
          leader,
          v -> {
            if (v != null) {
              completeGet(leader, v);
            } else {
              threads.fail(leader.future(), DataStore.notFound(leader.proc(), leader.key()));
            }
          });
    } else {
      threads.fail(leader.future(), DataStore.notFound(leader.proc(), leader.key()));
    }
    for (GetRequest g : queue.waiting) {
      if (failure != null
          && (failure.status().equals(Status.ERR_LOST_CONNECTION)
              || failure.status().equals(Status.ERR_INIT))) {
        threads.fail(g.future(), failure);
      } else {
        resolve(g);
      }
    }
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("session.queuedGets", (long) gets.size());
    DataStore s = store;
    m.put("session.peerStore", s == null ? 0L : 1L + s.size());
    return m;
  }

  @Override
  public Map<String, Object> resources() {
    DataStore s = store;
    return s == null ? Map.of() : Map.of("dataStore", s);
  }

  @Override
  public void release() {
    gets.clear();
    DataStore s = store;
    store = null;
    if (s != null) {
      s.clear();
    }
  }
}
