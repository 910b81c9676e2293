package io.pmix.server.internal.gds;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.pmix.common.PmixException;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.DstoreWriter;
import io.pmix.common.internal.gds.GdsKind;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.Rendezvous;
import io.pmix.server.internal.modex.ProcData;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The libpmix 4.2.2 shared-memory stores (ds21, ds12) this server writes for its clients
 * (docs/gds.md sections 1, 2 and 10): one {@link DstoreWriter} per module in {@code <session
 * tmpdir>/pmix_dstor_<module>_<pid>}, made at server init after {@link StaleStores} removed the
 * directories of dead servers; what {@code setupFork} exports; a namespace's lock segment at its
 * registration, its job-level data at its first client's REQ, each commit's locally visible keys,
 * and its removal at deregistration; everything at shutdown.
 *
 * <p>Every namespace is written to every store, so clients of one namespace may announce
 * different modules (a C client that found no free ds21 slot falls back to ds12, a client forced
 * to hash) and all see every commit, unlike libpmix, which keeps one module per namespace. A
 * failed write is logged and leaves that data to the socket: a reader that misses a key asks the
 * server, which answers from its own data.
 *
 * <p>The writes run on the stores' own thread ({@link StoreWrites}), in the order this class
 * receives them, with copies of the values, consecutive data writes in one batch under one
 * taking of each store's lock; what store readers are told after a write passes
 * {@link #gate}. Progress thread only, except {@link #environment}, {@link #environmentFor},
 * {@link #serves} and {@link #directories}.
 */
public final class SharedStores implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(SharedStores.class.getName());

  /** The gds module a client's handshake announced, kept on its channel by {@code Admission}. */
  public static final AttributeKey<String> ANNOUNCED = AttributeKey.valueOf("pmix.gds.announced");

  /**
   * The gate of the stores a client on this channel reads ({@link StoreWrites#afterWrites}):
   * every reply to it passes it. Set by {@code Admission}; absent for clients of hash.
   */
  public static final AttributeKey<StoreWrites> GATE = AttributeKey.valueOf("pmix.gds.gate");

  /** Whether the client on {@code ch} reads a shared-memory store (announced ds21 or ds12). */
  public static boolean readsStore(Channel ch) {
    String g = ch.attr(ANNOUNCED).get();
    return g != null && !g.equals(GdsKind.HASH.libpmixName());
  }

  private final List<DstoreWriter> writers;
  /** The writer thread; null when no store is served. */
  private final @Nullable StoreWrites writes;

  private @Nullable CompletableFuture<Void> closed;
  /** The uid whose processes can read the stores (their owner). */
  private final int readerUid;
  /** What setupFork exports: the stores not retired (DstoreWriter#retired), then hash. */
  private volatile Map<String, String> environment;
  /** How many retired stores {@link #environment} leaves out. Writer thread. */
  private int retiredOffered;
  /** What a client that cannot read the stores is told. */
  private final Map<String, String> hashOnly;
  /** The job data written per namespace: its generation, and the bfrops version it carried. */
  private final Map<String, JobDataWritten> jobDataWritten = new HashMap<>();

  private record JobDataWritten(long generation, @Nullable Value bfropsVersion) {}

  /** The tmpdir levels this object created (outermost first), removed at close when empty. */
  private final List<Path> createdDirs;

  private SharedStores(
      List<DstoreWriter> writers, List<Path> createdDirs, int readerUid, Executor loop) {
    this.writers = writers;
    this.writes = writers.isEmpty() ? null : new StoreWrites(loop);
    this.readerUid = readerUid;
    this.hashOnly = Map.of("PMIX_GDS_MODULE", GdsKind.HASH.libpmixName());
    this.createdDirs = new ArrayList<>(createdDirs);
    this.environment = exports(writers);
  }

  /** {@code PMIX_GDS_MODULE} naming the stores not retired, best first, and their base paths. */
  private static Map<String, String> exports(List<DstoreWriter> writers) {
    Map<String, String> env = new LinkedHashMap<>();
    List<String> names = new ArrayList<>();
    List<DstoreWriter> offered = new ArrayList<>();
    for (DstoreWriter w : writers) {
      if (!w.retired()) {
        offered.add(w);
        names.add(w.kind().libpmixName());
      }
    }
    names.add(GdsKind.HASH.libpmixName());
    // A 5.x client scores hash above its unnamed shmem2, as before (docs/transport.md §9.3).
    env.put("PMIX_GDS_MODULE", String.join(",", names));
    for (DstoreWriter w : offered) {
      // libpmix's names: ds21 its own variable, ds12 the old generic one.
      env.put(
          w.kind() == GdsKind.DS21 ? "PMIX_DSTORE_21_BASE_PATH" : GdsKind.ESH_BASE_PATH,
          w.directory().toString());
    }
    return Collections.unmodifiableMap(env);
  }

  /**
   * Writer thread, after writes: a store retired by them (its lock lost) is no longer offered to
   * the processes set up from now on; those already told of it go on reading it, and its hidden
   * ranks send them to the server.
   */
  private void offerOnlyLiveStores() {
    int n = 0;
    for (DstoreWriter w : writers) {
      n += w.retired() ? 1 : 0;
    }
    if (n != retiredOffered) { // rare: not remade after every batch
      retiredOffered = n;
      environment = exports(writers);
    }
  }

  /**
   * The stores {@code options} asks for ({@link ServerOptions#sharedMemoryStores}), in the
   * session tmpdir, owned by {@link ServerOptions#jobUser} if it is set and not this process's
   * user. A store that cannot be made (no native locks, no room, an owner that cannot be set) is
   * logged and not offered: its clients take the next module. {@code loop} is the progress
   * thread, which is told when writes end.
   */
  public static SharedStores open(ServerOptions options, Executor loop) {
    requireNonNull(options, "options");
    int me = Rendezvous.effectiveIds()[0];
    int readerUid = options.jobUser().orElse(me);
    OptionalInt owner = readerUid == me ? OptionalInt.empty() : OptionalInt.of(readerUid);
    if (options.sharedMemoryStores().isEmpty()) {
      return new SharedStores(List.of(), List.of(), readerUid, loop);
    }
    Path base = options.tmpdir();
    long pid = ProcessHandle.current().pid();
    List<DstoreWriter> ws = new ArrayList<>();
    List<Path> created = new ArrayList<>();
    try {
      // Like the rendezvous files: missing levels are made, and removed again at close.
      List<Path> missing = new ArrayList<>();
      for (Path p = base.toAbsolutePath().normalize(); p != null && !Files.isDirectory(p);
          p = p.getParent()) {
        missing.add(0, p);
      }
      for (Path p : missing) {
        Files.createDirectory(p);
        created.add(p);
      }
      int stale = StaleStores.clean(base);
      if (stale > 0) {
        LOG.log(Level.INFO, "removed {0} store directories of dead servers in {1}", stale, base);
      }
    } catch (java.io.IOException | RuntimeException e) {
      LOG.log(Level.WARNING, "cannot prepare " + base + " for the shared-memory stores", e);
    }
    WireFormat format = WireFormat.of(options.childBufferType());
    for (String name : options.sharedMemoryStores()) {
      GdsKind kind = name.equals("ds21") ? GdsKind.DS21 : GdsKind.DS12;
      try {
        ws.add(
            DstoreWriter.create(
                kind, freeDirectory(base, name, pid), format, options.storeLockTimeout(),
                System.getenv(), owner));
      } catch (PmixException | LinkageError e) {
        LOG.log(Level.WARNING, "gds " + name + " is not offered: " + e.getMessage(), e);
      }
    }
    return new SharedStores(List.copyOf(ws), created, readerUid, loop);
  }

  /**
   * {@code pmix_dstor_<module>_<pid>} as libpmix names it, or with {@code .<n>} appended when
   * another server of this process has it already.
   */
  private static Path freeDirectory(Path base, String module, long pid) {
    Path p = base.resolve(StaleStores.PREFIX + module + "_" + pid);
    for (int n = 1; Files.exists(p); n++) {
      p = base.resolve(StaleStores.PREFIX + module + "_" + pid + "." + n);
    }
    return p;
  }

  /**
   * What {@code setupFork} exports: {@code PMIX_GDS_MODULE} (the modules served, best first, hash
   * last) and each store's base path. Thread-safe.
   */
  public Map<String, String> environment() {
    return environment;
  }

  /**
   * What {@code setupFork} exports for a process of user {@code uid}: {@link #environment}, or
   * {@code PMIX_GDS_MODULE=hash} alone when that user cannot read the stores (files of another
   * user, mode 0600): a libpmix client pointed at them would log errors and fall back anyway.
   * Thread-safe.
   */
  public Map<String, String> environmentFor(int uid) {
    return uid == readerUid || uid == 0 ? environment : hashOnly;
  }

  /** Whether a client announcing {@code module} in its handshake is served. Thread-safe. */
  public boolean serves(String module) {
    if (module.equals(GdsKind.HASH.libpmixName())) {
      return true;
    }
    for (DstoreWriter w : writers) {
      if (w.kind().libpmixName().equals(module)) {
        return true;
      }
    }
    return false;
  }

  /** The store directories, best first. */
  public List<Path> directories() {
    List<Path> out = new ArrayList<>();
    for (DstoreWriter w : writers) {
      out.add(w.directory());
    }
    return out;
  }

  /**
   * What store readers are told after a write must pass this gate ({@link
   * StoreWrites#afterWrites}); null when no store is served.
   */
  public @Nullable StoreWrites gate() {
    return writes;
  }

  /**
   * Completes on the progress thread once every write submitted so far has ended (at once when no
   * store is served).
   */
  public CompletableFuture<Void> written() {
    StoreWrites ws = writes;
    return ws == null ? CompletableFuture.completedFuture(null) : ws.written();
  }

  /**
   * A namespace was registered: its ds21 lock segment, so its clients can attach (the host learns
   * of the registration once it is written: {@link #written}).
   */
  public void namespaceRegistered(String nspace, int nlocalprocs) {
    write(
        () -> {
          for (DstoreWriter w : writers) {
            try {
              w.addNamespace(nspace, nlocalprocs);
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "gds " + w.kind().libpmixName() + ": namespace " + nspace, e);
            }
          }
        });
  }

  private void write(Runnable w) {
    enqueue(w);
  }

  /**
   * What the writer thread is to do, in order: a {@link DstoreWriter.Write} (run in batches of
   * consecutive ones, under one taking of each store's lock) or another task. Filled on the
   * progress thread, drained on the writer thread.
   */
  private final ConcurrentLinkedQueue<Object> ops = new ConcurrentLinkedQueue<>();

  /** Whether a drain is submitted that has not started yet (it will take what is queued). */
  private final AtomicBoolean drainQueued = new AtomicBoolean();

  private void enqueue(Object op) {
    StoreWrites ws = writes;
    if (ws == null || closed != null) {
      return;
    }
    ops.add(op);
    // One drain per burst: what a busy writer thread finds queued goes in one batch. A reply
    // gated after this op waits for the drain submitted here, or for the one not yet started.
    if (drainQueued.compareAndSet(false, true)) {
      ws.submit(this::drain);
    }
  }

  /** Writer thread. */
  private void drain() {
    drainQueued.set(false);
    List<DstoreWriter.Write> batch = new ArrayList<>();
    for (Object op = ops.poll(); op != null; op = ops.poll()) {
      if (op instanceof DstoreWriter.Write w) {
        batch.add(w);
        continue;
      }
      storeBatch(batch);
      ((Runnable) op).run();
    }
    storeBatch(batch);
  }

  private void storeBatch(List<DstoreWriter.Write> batch) {
    if (batch.isEmpty()) {
      return;
    }
    for (DstoreWriter w : writers) {
      w.storeAll(
          batch,
          (x, e) -> {
            String what =
                "gds " + w.kind().libpmixName() + ": data of " + x.nspace() + ":" + x.rank()
                    + " not stored; hidden from its readers, who ask the server";
            if (e instanceof PmixException) {
              LOG.log(Level.WARNING, what + ": " + e.getMessage()); // a stated cause: no trace
            } else {
              LOG.log(Level.WARNING, what, e);
            }
          });
    }
    batch.clear();
    offerOnlyLiveStores();
  }

  /**
   * The namespace's job-level data: its loose job-level values under WILDCARD, each rank's
   * rank-level values; written once per {@code generation} (the namespace's count of changes to
   * its job data). The server writes it as soon as every local client of the namespace is
   * registered, while the processes start, and again at the first client's REQ (libpmix's one
   * moment), when only that client's {@code pmix.bfrops.mod} is new: then that value alone is
   * appended. Readers take a key's first record, so what was written stays what they read.
   */
  public void jobData(
      String nspace, long generation, Map<String, Value> jobLevel,
      Map<Integer, List<Value.KVal>> perRank) {
    if (writers.isEmpty()) {
      return;
    }
    String versionKey = Keys.BFROPS_MODULE.name();
    Value version = jobLevel.get(versionKey);
    JobDataWritten was = jobDataWritten.get(nspace);
    jobDataWritten.put(nspace, new JobDataWritten(generation, version));
    if (was != null && was.generation() == generation) {
      if (version != null && was.bfropsVersion() == null) {
        store(nspace, Proc.RANK_WILDCARD, Map.of(versionKey, version));
      }
      return;
    }
    store(nspace, Proc.RANK_WILDCARD, jobLevel);
    for (Map.Entry<Integer, List<Value.KVal>> e : perRank.entrySet()) {
      Map<String, Value> m = new LinkedHashMap<>();
      for (Value.KVal kv : e.getValue()) {
        if (kv.key() != null) {
          m.putIfAbsent(kv.key(), kv.value());
        }
      }
      store(nspace, e.getKey(), m);
    }
  }

  /**
   * Values of {@code rank} readable on this node (a commit's LOCAL and GLOBAL keys; data the host
   * delivered for another node's process), appended to its records in every store.
   */
  public void store(String nspace, int rank, Map<String, Value> given) {
    // PMIx 5+ qualified values stay with the server (4.2.2's dstore layouts have no qualifiers):
    // such entries are served by the server only.
    // A copy: the writer thread reads it while the progress thread goes on changing the original.
    Map<String, Value> values = new LinkedHashMap<>();
    given.forEach(
        (k, v) -> {
          if (ProcData.wireKey(k).equals(k)) {
            values.put(k, v);
          }
        });
    if (values.isEmpty()) {
      return;
    }
    enqueue(new DstoreWriter.Write(nspace, rank, values));
  }

  /** A namespace was deregistered: every file naming it goes. */
  public void namespaceGone(String nspace) {
    jobDataWritten.remove(nspace);
    write(
        () -> {
          for (DstoreWriter w : writers) {
            try {
              w.removeNamespace(nspace);
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "gds " + w.kind().libpmixName() + ": removing " + nspace, e);
            }
          }
          offerOnlyLiveStores();
        });
  }

  /** Removes every store directory (shutdown) and waits until it is done. Idempotent. */
  @Override
  public void close() {
    closeAsync().join();
  }

  /**
   * Removes every store directory (shutdown) after the writes submitted before, then stops the
   * writer thread; the stage completes when that is done. Progress thread (or, for a server that
   * never served, the thread that made it). Idempotent.
   */
  public CompletableFuture<Void> closeAsync() {
    CompletableFuture<Void> c = closed;
    if (c != null) {
      return c;
    }
    jobDataWritten.clear();
    StoreWrites ws = writes;
    if (ws == null) {
      removeAll();
      c = CompletableFuture.completedFuture(null);
    } else {
      c = ws.close(this::removeAll);
    }
    closed = c;
    return c;
  }

  /** Writer thread (or the closing thread when there is none). */
  private void removeAll() {
    for (DstoreWriter w : writers) {
      try {
        w.close();
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "gds " + w.kind().libpmixName() + ": close", e);
      }
    }
    for (int i = createdDirs.size() - 1; i >= 0; i--) {
      try {
        Files.deleteIfExists(createdDirs.get(i));
      } catch (java.io.IOException e) {
        break; // not empty (someone else's files): it stays, and so do its parents
      }
    }
    createdDirs.clear();
  }
}
