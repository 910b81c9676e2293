package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.message.GetNbReply;
import io.pmix.common.internal.message.GetNbRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The local data store of a cycle and the gets resolved against it: what the store holds is
 * answered at once; what it cannot hold is refused at once (our own unposted keys, a non-reserved
 * miss with {@code pmix.optional}, anything when standalone); the rest is asked of the server with
 * one GETNB per proc at a time, the gets of the same proc queued behind it and resolved against
 * the store once its answer is in (docs/commands.md §6.3).
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

  @Bookkept("session.peerStore")
  private @Nullable DataStore store;

  @Bookkept("session.queuedGets")
  private final Map<Proc, GetQueue> gets = new HashMap<>();

  GetResolver(LibraryThreads threads, Connection connection) {
    this.threads = requireNonNull(threads, "threads");
    this.connection = requireNonNull(connection, "connection");
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

  /** Gets {@code key} of {@code proc}: from the local store when it can, else from the server. */
  CompletableFuture<Value> get(Proc proc, String key, List<Info> directives) {
    requireNonNull(proc, "proc");
    requireNonNull(key, "key");
    List<Info> ds = List.copyOf(directives);
    return threads.call(f -> resolve(new GetRequest(proc, key, ds, f)));
  }

  private void resolve(GetRequest g) {
    DataStore st = store();
    Proc self = connection.me();
    DataStore.Lookup l = st.lookup(g.proc(), g.key(), g.directives());
    if (l instanceof DataStore.Lookup.Found found) {
      completeGet(g.future(), found.value());
      return;
    }
    if (l instanceof DataStore.Lookup.Absent
        || DataStore.flag(g.directives(), "pmix.optional")
        || connection.isStandalone()) {
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
      ds = ImmutableList.<Info>builder().addAll(ds).add(Info.of("pmix.immediate", true)).build();
    }
    GetQueue queue = q;
    connection.send(
        new GetNbRequest(g.proc(), ds, g.key()),
        new ReplyHandler() {
          @Override
          public void onReply(PmixReader r) {
            GetNbReply reply = GetNbReply.decode(r);
            Status s = reply.status();
            for (byte[] blob : reply.blobs()) {
              st.ingestGetBlob(blob, g.proc());
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

  /** Hands a found value to the caller, a compressed string expanded as C's get does. */
  private void completeGet(CompletableFuture<Value> future, Value value) {
    Value v;
    try {
      v = CompressedStrings.expand(value);
    } catch (PmixException e) {
      threads.fail(future, e);
      return;
    }
    threads.complete(future, v);
  }

  private void finishGet(GetRequest leader, GetQueue queue, @Nullable PmixException failure) {
    gets.remove(leader.proc(), queue);
    DataStore st = store;
    if (failure != null) {
      threads.fail(leader.future(), failure);
    } else if (st != null
        && st.lookup(leader.proc(), leader.key(), leader.directives())
            instanceof DataStore.Lookup.Found found) {
      completeGet(leader.future(), found.value());
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
