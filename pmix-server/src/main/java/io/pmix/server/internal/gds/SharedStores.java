package io.pmix.server.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.gds.DstoreWriter;
import io.pmix.common.internal.gds.GdsKind;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.Rendezvous;
import io.pmix.server.internal.modex.ProcData;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
 * <p>A store whose lock was lost is retired ({@link DstoreWriter#retired}) and a fresh one of the
 * same module, in a directory of its own, takes its place for the namespaces registered after;
 * each namespace stays in the stores it was registered in (its home), and its processes are told
 * only of those not retired. A retired store is removed once its last namespace is gone, so one
 * reader lost inside a read costs its own jobs the shared-memory path, not every later job of a
 * long-lived server (docs/gds.md §10).
 *
 * <p>The writes run on the stores' own thread ({@link StoreWrites}), in the order this class
 * receives them, with copies of the values, consecutive data writes in one batch under one
 * taking of each store's lock; what store readers are told after a write passes
 * {@link #gate}. Progress thread only, except {@link #environment}, {@link #environmentFor},
 * {@link #readableBy} and {@link #directories}.
 */
public final class SharedStores implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(SharedStores.class);

  /** Opens a fresh store of a module in place of a retired one; null when no store is served. */
  private final @Nullable Opener opener;
  /** The stores new namespaces are registered in, best first: one per module. */
  private volatile List<DstoreWriter> current;
  /** Every store open: {@link #current} and the retired ones that still hold a namespace. */
  private volatile List<DstoreWriter> open;
  /**
   * Each namespace's stores: those current when it was registered (or first written), which
   * every write for it goes to. Changed on the writer thread (or on the progress thread while the
   * writer thread is idle: {@link #storeNow}); read anywhere ({@link #views}).
   */
  private final Map<String, List<DstoreWriter>> homes = new ConcurrentHashMap<>();
  /**
   * What setupFork exports for the processes of each namespace the stores know. Replaced whole on
   * the writer thread (copy on write), so that a retired store leaves every namespace's export at
   * once: a caller that sees one namespace told of it no more sees none told of it still
   * ({@code DstoreServerIT} caught the entry-by-entry update in between).
   */
  private volatile Map<String, Map<String, String>> nsEnvironment = Map.of();
  /** The writer thread; null when no store is served. */
  private final @Nullable StoreWrites writes;

  private @Nullable CompletableFuture<Void> closed;
  /** The uid whose processes can read the stores (their owner). */
  private final int readerUid;
  /** What setupFork exports for a namespace the stores do not know yet: the current stores. */
  private volatile Map<String, String> environment;
  /** What a client that cannot read the stores is told. */
  private final Map<String, String> hashOnly;
  /** The job data written per namespace: its generation, and the bfrops version it carried. */
  private final Map<String, JobDataWritten> jobDataWritten = new HashMap<>();

  private record JobDataWritten(long generation, @Nullable Value bfropsVersion) {}

  /** How a store of a module is made: the first ones at {@link #open}, a retired one's successor. */
  private record Opener(
      Path base, long pid, WireFormat format, Duration lockTimeout, OptionalInt owner) {
    DstoreWriter open(GdsKind kind) throws PmixException {
      return DstoreWriter.create(
          kind, freeDirectory(base, kind.libpmixName(), pid), format, lockTimeout,
          System.getenv(), owner);
    }
  }

  /** The tmpdir levels this object created (outermost first), removed at close when empty. */
  private final List<Path> createdDirs;

  private SharedStores(
      List<DstoreWriter> writers, @Nullable Opener opener, List<Path> createdDirs, int readerUid,
      Executor loop) {
    this.current = writers;
    this.open = writers;
    this.opener = opener;
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
   * Writer thread, after writes: a current store that they retired (its lock lost) gives its
   * place to a fresh one of its module for the namespaces registered from now on (none when that
   * cannot be made: the module is then offered no more); the processes of its namespaces set up
   * from now on are told of their other stores only (those told before go on reading it, and its
   * hidden ranks send them to the server). A retired store that holds no namespace is closed.
   */
  private void replaceRetiredStores() {
    List<DstoreWriter> now = current;
    boolean anyRetired = false;
    for (DstoreWriter w : now) {
      anyRetired |= w.retired();
    }
    if (!anyRetired) {
      return; // the usual case, after every batch
    }
    List<DstoreWriter> next = new ArrayList<>();
    for (DstoreWriter w : now) {
      if (!w.retired()) {
        next.add(w);
        continue;
      }
      try {
        DstoreWriter fresh = requireNonNull(opener).open(w.kind());
        next.add(fresh);
        LOG.log(
            Level.WARNING, "gds {0}: namespaces registered from now on are written to {1}",
            w.kind().libpmixName(), fresh.directory());
      } catch (LinkageError | RuntimeException e) {
        LOG.log(
            Level.WARNING, "gds " + w.kind().libpmixName() + " is offered no more: " + e.getMessage(),
            e);
      }
    }
    List<DstoreWriter> all = new ArrayList<>(next);
    for (DstoreWriter w : open) {
      if (w.retired()) {
        all.add(w);
      }
    }
    current = List.copyOf(next);
    open = List.copyOf(all);
    environment = exports(next);
    Map<String, Map<String, String>> envs = new HashMap<>(nsEnvironment);
    for (Map.Entry<String, List<DstoreWriter>> e : homes.entrySet()) {
      envs.put(e.getKey(), exports(e.getValue()));
    }
    nsEnvironment = Collections.unmodifiableMap(envs);
    closeEmptyRetiredStores();
  }

  /** Writer thread: closes (and removes) the retired stores no namespace lives in any more. */
  private void closeEmptyRetiredStores() {
    List<DstoreWriter> all = open;
    if (all.size() == current.size()) {
      return; // none is retired: the usual case
    }
    List<DstoreWriter> keep = new ArrayList<>();
    for (DstoreWriter w : all) {
      if (current.contains(w) || isHome(w)) {
        keep.add(w);
      } else {
        closeQuietly(w);
        LOG.log(Level.INFO, "gds {0}: retired store {1} removed, its last namespace gone",
            w.kind().libpmixName(), w.directory());
      }
    }
    open = List.copyOf(keep);
  }

  private boolean isHome(DstoreWriter w) {
    for (List<DstoreWriter> h : homes.values()) {
      if (h.contains(w)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Writer thread: the stores {@code nspace} lives in, those current now when it has none yet
   * (its registration, or a first write for a namespace the host did not register here).
   */
  private List<DstoreWriter> home(String nspace) {
    List<DstoreWriter> h = homes.get(nspace);
    if (h == null) {
      h = current;
      homes.put(nspace, h);
      Map<String, Map<String, String>> envs = new HashMap<>(nsEnvironment);
      envs.put(nspace, environment);
      nsEnvironment = Collections.unmodifiableMap(envs);
    }
    return h;
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
      return new SharedStores(List.of(), null, List.of(), readerUid, loop);
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
    Opener opener =
        new Opener(
            base, pid, WireFormat.of(options.childBufferType()), options.storeLockTimeout(), owner);
    for (String name : options.sharedMemoryStores()) {
      GdsKind kind = name.equals("ds21") ? GdsKind.DS21 : GdsKind.DS12;
      try {
        ws.add(opener.open(kind));
      } catch (PmixException | LinkageError e) {
        LOG.log(Level.WARNING, "gds " + name + " is not offered: " + e.getMessage(), e);
      }
    }
    return new SharedStores(List.copyOf(ws), opener, created, readerUid, loop);
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
   * What {@code setupFork} exports for the processes of {@code nspace}: {@code PMIX_GDS_MODULE}
   * (the modules of its stores not retired, best first, hash last) and each store's base path; for
   * a namespace the stores do not know yet, the current stores. Thread-safe.
   */
  public Map<String, String> environment(String nspace) {
    return nsEnvironment.getOrDefault(nspace, environment);
  }

  /**
   * What {@code setupFork} exports for a process of {@code nspace} run by user {@code uid}:
   * {@link #environment}, or {@code PMIX_GDS_MODULE=hash} alone when that user cannot read the
   * stores (files of another user, mode 0600): a libpmix client pointed at them would log errors
   * and fall back anyway. Thread-safe.
   */
  public Map<String, String> environmentFor(String nspace, int uid) {
    return readableBy(uid) ? environment(nspace) : hashOnly;
  }

  /** Whether processes of user {@code uid} can read the stores. Thread-safe. */
  public boolean readableBy(int uid) {
    return uid == readerUid || uid == 0 || open.isEmpty();
  }

  /** The directories of the stores new namespaces are registered in, best first. Thread-safe. */
  public List<Path> directories() {
    List<Path> out = new ArrayList<>();
    for (DstoreWriter w : current) {
      out.add(w.directory());
    }
    return out;
  }

  /**
   * The stores open, those new namespaces go to first, then the retired ones, each with the
   * namespaces that live in it, as the writer thread last left them. Thread-safe.
   */
  public List<ServerSnapshot.StoreView> views() {
    List<ServerSnapshot.StoreView> out = new ArrayList<>();
    for (DstoreWriter w : open) {
      List<String> names = new ArrayList<>();
      for (Map.Entry<String, List<DstoreWriter>> e : homes.entrySet()) {
        if (e.getValue().contains(w)) {
          names.add(e.getKey());
        }
      }
      Collections.sort(names);
      out.add(
          new ServerSnapshot.StoreView(
              w.kind().libpmixName(), w.directory().toString(), w.retired(), names));
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
    Integer before = localProcsOf.put(nspace, nlocalprocs);
    localProcs += nlocalprocs - (before == null ? 0 : before);
    enqueue(new AddNamespace(nspace, nlocalprocs));
  }

  /**
   * Writes a namespace's lock segments, on the writer thread. Classes, not lambdas, for what
   * every job runs here: a fresh server links each call site once (docs/architecture.md,
   * "Start-up of pmixrun").
   */
  private final class AddNamespace implements Runnable {
    private final String nspace;
    private final int nlocalprocs;

    AddNamespace(String nspace, int nlocalprocs) {
      this.nspace = nspace;
      this.nlocalprocs = nlocalprocs;
    }

    @Override
    public void run() {
      for (DstoreWriter w : home(nspace)) {
        try {
          w.addNamespace(nspace, nlocalprocs);
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "gds " + w.kind().libpmixName() + ": namespace " + nspace, e);
        }
      }
    }
  }

  /** Runs {@link #drain} on the writer thread; one instance, submitted once per burst. */
  private final Runnable drainTask =
      new Runnable() {
        @Override
        public void run() {
          drain();
        }
      };

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
    if (op instanceof DstoreWriter.Write w && ws.idle() && ops.isEmpty() && storeNow(w)) {
      return;
    }
    ops.add(op);
    // One drain per burst: what a busy writer thread finds queued goes in one batch. A reply
    // gated after this op waits for the drain submitted here, or for the one not yet started.
    if (drainQueued.compareAndSet(false, true)) {
      ws.submit(drainTask);
    }
  }

  /**
   * Stores {@code w} here, on the progress thread, when that waits for nothing: the writer thread
   * is idle (so the stores' state is this thread's to touch until the next hand-over to it, which
   * the writer's executor orders), no retired store is open, the jobs are small ({@link
   * #INLINE_LOCAL_PROCS_MAX}) and every store's writer lock is free now ({@link
   * DstoreWriter#lockIfFree}). What waits for the write (a collecting fence's
   * release, a REQ reply) then goes out at once instead of after two hops between threads:
   * docs/gds.md, "What the writer thread's hops cost". False, with nothing done, otherwise.
   */
  private boolean storeNow(DstoreWriter.Write w) {
    List<DstoreWriter> all = open;
    if (all.size() != current.size() || all.isEmpty()) {
      return false;
    }
    if (localProcs > INLINE_LOCAL_PROCS_MAX) {
      return false;
    }
    List<DstoreWriter.Held> held = new ArrayList<>(all.size());
    for (DstoreWriter s : all) {
      DstoreWriter.Held h;
      try {
        h = s.lockIfFree();
      } catch (RuntimeException e) {
        h = null; // a store closing: the writer thread's path reports it
      }
      if (h == null) {
        for (int i = 0; i < held.size(); i++) {
          all.get(i).unlock(held.get(i));
        }
        return false;
      }
      held.add(h);
    }
    var unused = home(w.nspace()); // a namespace first written here lives in these stores
    List<DstoreWriter.Write> one = List.of(w);
    for (int i = 0; i < all.size(); i++) {
      try {
        storeAll(all.get(i), one, held.get(i));
      } catch (RuntimeException e) {
        // The lock is released (storeAll's own finally); the write's rank was hidden or the
        // store is closing. As on the writer thread: logged, the server goes on.
        LOG.log(Level.WARNING, "a shared-memory store write failed", e);
      }
    }
    return true;
  }

  /**
   * The most local processes (of every namespace registered) for which a write is made on the
   * progress thread. Beyond, the writer thread's batches (several commits under one taking of the
   * locks, ds21's being a mutex pair per local process, beside the progress thread on another
   * core) did better: at {@code -n 8} the fences were 8-11% slower with every write made here
   * (docs/gds.md, "What the writer thread's hops cost").
   */
  private static final int INLINE_LOCAL_PROCS_MAX = 3;

  /** Local processes of each namespace registered, and their sum; progress thread only. */
  private final Map<String, Integer> localProcsOf = new HashMap<>();

  private int localProcs;

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
    List<DstoreWriter> all = open;
    if (all.size() == current.size()) {
      // No retired store is open: every namespace lives in every store.
      for (DstoreWriter.Write x : batch) {
        var unused = home(x.nspace()); // a namespace first written here lives in these stores
      }
      for (DstoreWriter w : all) {
        storeAll(w, batch);
      }
    } else {
      for (DstoreWriter w : all) {
        List<DstoreWriter.Write> mine = new ArrayList<>();
        for (DstoreWriter.Write x : batch) {
          if (home(x.nspace()).contains(w)) {
            mine.add(x);
          }
        }
        storeAll(w, mine);
      }
    }
    batch.clear();
    replaceRetiredStores();
  }

  private static void storeAll(DstoreWriter w, List<DstoreWriter.Write> writes) {
    if (writes.isEmpty()) {
      return;
    }
    w.storeAll(writes, new FailureLog(w));
  }

  /** {@link #storeAll}, under the lock {@link #storeNow} took. */
  private static void storeAll(
      DstoreWriter w, List<DstoreWriter.Write> writes, DstoreWriter.Held held) {
    w.storeAll(writes, new FailureLog(w), held);
  }

  /**
   * Logs a write that failed (its rank is hidden). A class, not a lambda: a job's first commit
   * may now run it on the progress thread (docs/architecture.md, "First requests").
   */
  private static final class FailureLog
      implements java.util.function.BiConsumer<DstoreWriter.Write, RuntimeException> {
    private final DstoreWriter w;

    FailureLog(DstoreWriter w) {
      this.w = w;
    }

    @Override
    public void accept(DstoreWriter.Write x, RuntimeException e) {
      String what =
          "gds " + w.kind().libpmixName() + ": data of " + x.nspace() + ":" + x.rank()
              + " not stored; hidden from its readers, who ask the server";
      if (e instanceof PmixException) {
        LOG.log(Level.WARNING, what + ": " + e.getMessage()); // a stated cause: no trace
      } else {
        LOG.log(Level.WARNING, what, e);
      }
    }
  }

  /**
   * Whether {@link #jobData} of {@code generation} would write nothing now: that generation is
   * written, with {@code bfropsVersion} when there is one (or no store is written at all). A REQ
   * asks first, so that it does not assemble the values only for them to be dropped.
   */
  public boolean jobDataWritten(String nspace, long generation, @Nullable Value bfropsVersion) {
    if (writes == null) {
      return true;
    }
    JobDataWritten was = jobDataWritten.get(nspace);
    return was != null
        && was.generation() == generation
        && (bfropsVersion == null || was.bfropsVersion() != null);
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
    if (writes == null) {
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
    Integer gone = localProcsOf.remove(nspace);
    if (gone != null) {
      localProcs -= gone;
    }
    enqueue(
        (Runnable)
            () -> {
              List<DstoreWriter> h = homes.remove(nspace);
              Map<String, Map<String, String>> envs = new HashMap<>(nsEnvironment);
              envs.remove(nspace);
              nsEnvironment = Collections.unmodifiableMap(envs);
              for (DstoreWriter w : h == null ? open : h) {
                try {
                  w.removeNamespace(nspace);
                } catch (RuntimeException e) {
                  LOG.log(
                      Level.WARNING, "gds " + w.kind().libpmixName() + ": removing " + nspace, e);
                }
              }
              replaceRetiredStores();
              closeEmptyRetiredStores();
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
    localProcsOf.clear();
    localProcs = 0;
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

  private static void closeQuietly(DstoreWriter w) {
    try {
      w.close();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "gds " + w.kind().libpmixName() + ": close", e);
    }
  }

  /** Writer thread (or the closing thread when there is none). */
  private void removeAll() {
    for (DstoreWriter w : open) {
      closeQuietly(w);
    }
    open = List.of();
    current = List.of();
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
