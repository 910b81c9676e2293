package io.pmix.client;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.DataRange;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The PMIx client API: what a Java application calls to learn who it is, exchange data with its
 * peers, synchronise with them and talk to the PMIx server that launched it. Like the C API it is
 * a set of static calls on one process-wide client.
 *
 * <h2>Life cycle</h2>
 *
 * {@link #init} connects to the server named by the environment a PMIx server gives its children
 * ({@code PMIX_SERVER_URI41}, {@code PMIX_NAMESPACE}, {@code PMIX_RANK}, ...), fetches the job's
 * data once and keeps it, so a get of job information is a local lookup. Without a server in the
 * environment the process runs as a <em>singleton</em> ({@link #isSingleton()}): a job of one,
 * where puts, gets of its own data and fences of itself work. Init is reference counted: only the
 * first init connects and only the matching last {@link #finalize} disconnects; it then stops the
 * library's threads and waits for them, so init may be called again at once and starts afresh.
 *
 * <p>Start-up cost: a cold first init spends most of its time loading and first running classes,
 * not talking to the server; a later init in the same JVM takes a few milliseconds. The client
 * therefore uses no Netty and no Guava collections (its connector is a poll loop over byte
 * arrays): a first init and finalize load about 180 classes beyond the JDK's own archive, some
 * 110 of them from the class path. Loading those is about half of a first init (the class path's
 * lookup and reading each class, ~0.2 ms a class, run by the interpreter). pmix-java's jars store
 * their classes rather than deflate them, and two classes only the bytecode verifier loaded stay
 * unloaded: one rank's first init under libpmix's host server, 12 rounds of each alternating,
 * median 46.8 -> 42.9 ms (an application's class path of separate jars). An application that
 * merges its dependencies into one jar can store its entries likewise. The order of the class
 * path counts too: the JVM opens every jar before the one a class is found in and reads its whole
 * directory, so pmix-client's and pmix-common's jars belong before large ones (Guava's, Netty's,
 * JNA's, which a client does not load). Maven orders an application that depends on pmix-client
 * so; with those three libraries' 12 jars first, one rank's first init took 13-17 ms longer
 * (6 runs each, one sitting). Its socket and its progress thread's wait go through
 * pmix-java's small native library ({@code libpmixjava}, below), not through NIO, whose first
 * {@code Selector} and {@code SocketChannel}, with the JDK's file channels, loaded 80 more of the
 * JDK's classes (20-30 ms of a fresh JVM on the test machine; where that library does not load,
 * or with {@code -Dio.pmix.connector.poller=nio}, the connector uses them): one rank's first init
 * under libpmix's host server, 8 rounds of each alternating, median 84 -> 61 ms; two ranks
 * starting at once ({@code bin/bench-client}) 94 -> 73 ms, and a tool's first init 94 -> 61 ms.
 * Measured earlier on a 2-core machine (JDK 17, {@code bin/bench-client}, the C client
 * alongside, one sitting under load): one rank alone under libpmix's host server, a median first
 * init of 56-63 ms (220-330 ms when the client used Netty); two ranks starting at once, 105 ms
 * each (C: 2 ms); two ranks under Open MPI's mpirun, 230-250 ms each (C: 11 ms) while the
 * shared-memory reader's locks went through JNA, about 80 ms of a fresh JVM before the handshake.
 * They now go through a small native library of pmix-java's own ({@code libpmixjava}, in
 * pmix-common's jar for the build machine's architecture, loaded from a verified copy kept in
 * {@code ~/.cache/pmix-java/native}), which a fresh JVM loads and calls in about 1 ms: one rank's
 * first init under mpirun, median 246 -> 164 ms (6 runs a side). Where that library does not load
 * (another architecture), the locks fall back to JNA, whose first use sets two of JNA's system
 * properties when the application has not: {@code jna.platform.library.path} (the linker's
 * directories, so that JNA does not run {@code /sbin/ldconfig -p}) and {@code
 * jna.boot.library.path} (a verified copy of JNA's native part kept in {@code
 * ~/.cache/pmix-java/jna}); measured, 126-142 ms before and 97-99 ms after for a fresh JVM loading
 * libc through JNA. What an
 * application can do: class-data sharing. Run once with {@code -XX:ArchiveClassesAtExit=app.jsa}
 * (JDK 19 and later: {@code -XX:+AutoCreateSharedArchive -XX:SharedArchiveFile=app.jsa} does both
 * steps), then start with {@code -XX:SharedArchiveFile=app.jsa}: the single rank's first init
 * then took 33-38 ms. (Figures move between sittings on that machine: on a busier day the same
 * single rank took 105-113 ms without the archive and 59-73 ms with it.) The library's value types
 * write out their {@code equals} and {@code hashCode}: a record's generated ones start
 * java.lang.invoke's machinery the first time one runs, which cost every first init 20-30 ms
 * until then (single rank, 6 runs a side in one sitting: median 90 -> 75 ms without the archive,
 * 56 -> 44 ms with it). An application's own records pay that once per JVM too. Likewise the
 * library links no lambda on the way of a first init or a first remote get: each costs a JDK 17
 * JVM 0.1-0.3 ms at its first call, even from an archive (two ranks starting at once under
 * libpmix's host server, 8 jobs a side: 126.7 -> 105.2 ms without an archive, 72.3 -> 52.8 ms
 * with one); a first remote get no longer starts java.util.logging either (19-31 ms). On JDK 25
 * and later, an AOT cache keeps the application's classes linked as well as loaded (JEPs 483,
 * 514, 515): run once with {@code -XX:AOTCacheOutput=app.aot}, then start with {@code
 * -XX:AOTCache=app.aot}; in one sitting, two ranks' first init took 76 ms that way against 143 ms
 * on JDK 17 without an archive (and fences 137 against 180 µs, over a run of 1,000). Where the
 * connector falls back to NIO, the JDK's selector start-up is part of a first init: the first
 * {@code Selector.open} in a JVM looks for a {@code java.nio.channels.spi.SelectorProvider}
 * service across the whole class path and every module of the runtime (a fresh JVM with the
 * benchmark's 11 MB jar on its class path: 24-27 ms, against 9 ms when the provider is named). An
 * application there that registers no provider of its own may name the JDK's with {@code
 * -Djava.nio.channels.spi.SelectorProvider=sun.nio.ch.EPollSelectorProvider} (Linux; the class is
 * the JDK's internal default, not an API): two ranks' first init, median 86 -> 80 ms (24 inits a
 * side, one sitting, before the native connector). The library does not set it itself, since
 * that would override a provider the application registers.
 *
 * <p>Warm-up: the library's code runs interpreted until the JIT compiles it, which for a message
 * path takes some hundreds of calls; on a small machine the JIT's own threads also compete with
 * the application and the server. Measured on the 2-core machine (two Java ranks under libpmix's
 * host server, 1,000 fences each, 2 jobs a setting): median fence 237 µs with the JVM's defaults,
 * 154 µs with {@code -XX:TieredStopAtLevel=1} (C1 only; C: 99 µs); over 10,000 fences 170 against
 * 146 µs (C: 144). Later, in one sitting, {@code bin/bench-client} (3 jobs of 2 ranks a side,
 * each alternating with the C client), Java / C with the defaults and with that flag: init again
 * after a finalize 2.79 and 1.26 (median 4.9 and 2.6 ms), fence 2.09 and 0.99, fence collecting
 * 1.75 and 1.06, first direct-modex get 3.86 and 2.90, finalize 1.81 and 1.21, first init 96 and
 * 82 ms. The spread is C2 at work: one rank cycling init and finalize 60 times took 1.2-11 ms a
 * re-init with the defaults, a steady 2.8-4.3 ms interpreted only ({@code -Xint}) and 1.1-5.0 ms
 * (median 1.5) with C1 only. Fence by fence (two ranks, 3,000 fences each, the last 2,000; no
 * garbage collection and no safepoint in that time): the median was C's with the defaults (73-102
 * µs against 95-103), but 1% of the fences took 2-8 ms, a fifth of the total, while C2 compiled
 * on one of the two cores; with C1 only the 99th percentile was 202-225 µs (C: 184-189). An
 * application that mostly waits on PMIx calls and does little
 * computing of its own may prefer that flag; one with hot code of its own loses C2's peak
 * performance by it.
 *
 * <p>Both together, for short jobs on a small machine: an archive of the application's own classes
 * (above) and {@code -XX:TieredStopAtLevel=1}. Measured on the 2-core machine ({@code
 * BENCH_JAVA_CDS=1 BENCH_JAVA_OPTS=-XX:TieredStopAtLevel=1 bin/bench-client}, 4 jobs of 2 ranks
 * a side, each alternating with the C client; docs/architecture.md, "The short-job
 * configuration"), Java / C: under libpmix's host server a first init of 18 ms (59.6 ms with the
 * JVM's defaults in the same sitting; C: 2 ms), a tool's first init 14 ms (56 ms), fence 1.12
 * (1.85), fence collecting 1.26 (1.66), finalize 1.01 (1.22); under Open MPI's mpirun a first
 * init of 28 ms (79 ms; C: 9 ms), fence 0.88 (1.92), fence collecting 0.95 (2.20), finalize
 * 1.12 (3.56); under Slurm's {@code srun --mpi=pmix} (another sitting) a first init of 36 ms (87
 * ms; C: 10 ms), fence 1.02 (2.85), fence collecting 1.13 (2.67), finalize 1.29 (1.17). What
 * stays slower is the first get of each fresh key a peer has just committed (2.3-3.3 of C's under
 * the first two servers, 1.28 under srun): code a job runs a few hundred times runs interpreted
 * for most of them. Lower compile thresholds trade the other way: under mpirun, with the archive
 * and C1 only, {@code -XX:CompileThresholdScaling=0.1} brought the first get of a fresh key to
 * 0.93-1.01 of C's and after a collecting fence to 0.49-0.53, but a first init from 28-31 to 48-50
 * ms and a re-init from 1.4 to 2.2-2.3 of C's (5-6 jobs a side, one sitting; docs/architecture.md,
 * "Direct modex"): worth it for a job that reads many peers' fresh keys, not for one that starts
 * often.
 *
 * <p>On JDK 24 and later, pass {@code --enable-native-access=ALL-UNNAMED} (or name the module
 * pmix-common is in): the connector and the shared-memory reader load a native library ({@code
 * libpmixjava}, or for the reader JNA's where that does not load), and {@code System.load} is a
 * restricted method there (JEP 472); without the option the JVM prints four warning lines on
 * stderr at the first init (seen with JDK 25), under any server.
 * Nothing else of this library warns there: its store mappings are unmapped by {@code
 * libpmixjava} (without it, on JDK 22 and later, through {@code java.lang.foreign.Arena}), never
 * through {@code sun.misc.Unsafe}.
 *
 * <h2>Threads and futures</h2>
 *
 * Every operation has a blocking form and a non-blocking {@code ...Async} form returning a {@link
 * CompletableFuture}; the blocking form waits for that future. Futures complete, and event
 * handlers ({@link EventHandler}, receiving {@link io.pmix.common.Event}s) run, on the library's
 * callback thread, never on its I/O (progress) thread and never under a library lock (a blocking
 * call's own future, which holds no application code, is completed by the progress thread to wake
 * the caller at once, but only once every handler delivered before has returned). Blocking
 * calls made on the callback thread (from a handler or a dependent stage of a future) throw {@link IllegalStateException} instead of deadlocking; use the
 * non-blocking forms there. All methods are thread-safe.
 *
 * <h2>Errors</h2>
 *
 * What the server or the protocol decides is a {@link PmixException} carrying the {@link Status}
 * (for the non-blocking forms: the future completes exceptionally with it). Caller mistakes are
 * the JDK's exceptions: {@code NullPointerException}, {@code IllegalArgumentException}, and
 * {@code IllegalStateException} for any call but {@link #init} while not initialized.
 */
public final class PMIx {
  private PMIx() {}

  private static ClientState state() {
    return ClientHolder.require();
  }

  private static <T> T await(CompletableFuture<T> f, String operation) {
    return ClientState.await(f, operation);
  }

  // ---- life cycle ----

  /**
   * Initialises the client, or counts one more init if it already is.
   *
   * @param directives init attributes; none is interpreted yet (the C client's {@code
   *     pmix.srvr.uri} and programming-model attributes are ignored)
   * @return this process's name
   * @throws PmixException if the server cannot be reached or refuses us ({@code ERR_UNREACH}), or
   *     the environment names a server this library cannot talk to ({@code ERR_NOT_SUPPORTED})
   * @throws IllegalStateException if called on the library's callback thread
   */
  @CanIgnoreReturnValue
  public static Proc init(Info... directives) {
    return ClientHolder.init(System.getenv(), List.of(directives)).me();
  }

  /**
   * Finalizes the client. A nested finalize only counts; the last one tells the server (waiting at
   * most two seconds for its answer), closes the connection, fails operations still pending with
   * {@code ERR_INIT}, and returns after the library's threads have ended.
   *
   * @param directives {@code pmix.embed.barrier} (bool) fences the whole namespace first
   * @throws IllegalStateException if not initialized, or called on the library's callback thread
   */
  public static void finalize(Info... directives) {
    var unused = ClientHolder.finalizeClient(List.of(directives));
  }

  /** Whether the client is initialized. */
  public static boolean initialized() {
    return ClientHolder.peek() != null;
  }

  /**
   * Whether this process runs without a server (no {@code PMIX_SERVER_URI*} in its environment).
   *
   * @throws IllegalStateException if not initialized
   */
  public static boolean isSingleton() {
    return state().isSingleton();
  }

  /**
   * This process's name.
   *
   * @throws IllegalStateException if not initialized
   */
  public static Proc myProc() {
    return state().me();
  }

  // ---- data exchange ----

  /**
   * Stores a value under {@code key} for others to get after the next {@link #commit}. It is
   * visible to this process's own gets at once. Keys starting with {@code pmix} and scope {@link
   * Scope#INTERNAL} stay in this process. Never blocks.
   *
   * @throws IllegalArgumentException if the scope is UNDEF or the key is empty or longer than 511
   *     bytes
   */
  public static void put(Scope scope, String key, Value value) {
    state().put(scope, key, value);
  }

  /** Sends the values put since the last commit to the server; see {@link #commitAsync}. */
  public static void commit() {
    await(commitAsync(), "commit");
  }

  /** Non-blocking {@link #commit}. */
  public static CompletableFuture<Void> commitAsync() {
    return state().commit();
  }

  /**
   * Waits until every process of this namespace has called fence.
   *
   * @param directives {@code pmix.collect} (bool) also gathers everyone's committed data; {@code
   *     pmix.timeout} (int seconds)
   */
  public static void fence(Info... directives) {
    await(fenceAsync(List.of(), directives), "fence");
  }

  /**
   * Waits until every process of {@code procs} has called fence ({@link Proc#wildcard} names a
   * whole namespace; an empty collection means this namespace). {@code procs} must include this
   * process: pmix-java's server refuses a fence of others, or of an empty namespace, with {@code
   * ERR_BAD_PARAM}; libpmix's servers answer the first at once and never the second.
   */
  public static void fence(Collection<Proc> procs, Info... directives) {
    await(fenceAsync(procs, directives), "fence");
  }

  /** Non-blocking {@link #fence(Collection, Info...)}. */
  public static CompletableFuture<Void> fenceAsync(Collection<Proc> procs, Info... directives) {
    return state().fence(requireNonNull(procs, "procs"), List.of(directives));
  }

  /**
   * The value of {@code key} for {@code proc}. Job information ({@code proc} with rank {@link
   * Proc#RANK_WILDCARD}, or any rank for per-process keys such as {@code pmix.lrank}) and this
   * process's own puts are answered locally; a peer's committed data is fetched from the server
   * once and then cached, or, under a server that keeps it in shared memory (the ds21 and ds12
   * stores of OpenPMIx 4.x servers, which Slurm and Open MPI 4.1 use), read there, on the calling
   * thread, as libpmix does. A {@code proc} with an empty namespace means this process's own
   * namespace, as in libpmix's {@code PMIx_Get}.
   *
   * @param directives {@code pmix.optional} (only look locally), {@code pmix.immediate} (the server
   *     answers at once, without waiting for the peer's commit), {@code pmix.timeout} (int
   *     seconds), and the realm qualifiers {@code pmix.hname}, {@code pmix.nodeid}, {@code
   *     pmix.appnum}, {@code pmix.session.id}
   * @throws PmixException {@code ERR_NOT_FOUND} if nobody has the key, {@code ERR_TIMEOUT}, ...
   */
  public static Value get(Proc proc, String key, Info... directives) {
    return await(getAsync(proc, key, directives), "get");
  }

  /**
   * Non-blocking {@link #get}. A peer's key found in a shared-memory store is read on the calling
   * thread (a read may wait briefly for the server's write lock) and the future returned is then
   * already complete.
   */
  public static CompletableFuture<Value> getAsync(Proc proc, String key, Info... directives) {
    return state().get(proc, key, List.of(directives));
  }

  // ---- publish / lookup ----

  /**
   * Publishes data for other processes to look up. The infos are the data, mixed with directives
   * the server interprets ({@code pmix.range}, {@code pmix.persist}, {@code pmix.timeout}).
   */
  public static void publish(Info... info) {
    await(publishAsync(info), "publish");
  }

  /** Non-blocking {@link #publish}. */
  public static CompletableFuture<Void> publishAsync(Info... info) {
    if (info.length == 0) {
      throw new IllegalArgumentException("nothing to publish");
    }
    return state().publish(List.of(info));
  }

  /**
   * Looks published keys up.
   *
   * @param directives {@code pmix.range}, {@code pmix.wait} (int: how many keys to wait for, 0 =
   *     all), {@code pmix.timeout}
   * @return the data found, each with its publisher
   * @throws PmixException {@code ERR_NOT_FOUND} if none of the keys exists
   */
  public static List<Value.PData> lookup(Collection<String> keys, Info... directives) {
    return await(lookupAsync(keys, directives), "lookup");
  }

  /** Non-blocking {@link #lookup}. */
  public static CompletableFuture<List<Value.PData>> lookupAsync(
      Collection<String> keys, Info... directives) {
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("no keys to look up");
    }
    return state().lookup(keys, List.of(directives));
  }

  /** Removes published keys; an empty collection removes everything this process published. */
  public static void unpublish(Collection<String> keys, Info... directives) {
    await(unpublishAsync(keys, directives), "unpublish");
  }

  /** Non-blocking {@link #unpublish}. */
  public static CompletableFuture<Void> unpublishAsync(Collection<String> keys, Info... directives) {
    return state().unpublish(requireNonNull(keys, "keys"), List.of(directives));
  }

  // ---- events ----

  /**
   * Registers {@code handler} for events with one of {@code codes}, or for every event when
   * {@code codes} is empty (a default handler, called after the specific ones).
   *
   * @return the registration's id, for {@link #deregisterEventHandler}
   */
  @CanIgnoreReturnValue
  public static long registerEventHandler(
      Collection<Status> codes, EventHandler handler, Info... directives) {
    return await(registerEventHandlerAsync(codes, handler, directives), "registerEventHandler");
  }

  /** Non-blocking {@link #registerEventHandler}. */
  public static CompletableFuture<Long> registerEventHandlerAsync(
      Collection<Status> codes, EventHandler handler, Info... directives) {
    return state().registerEventHandler(requireNonNull(codes, "codes"), handler, List.of(directives));
  }

  /** Removes a registration. */
  public static void deregisterEventHandler(long id) {
    await(deregisterEventHandlerAsync(id), "deregisterEventHandler");
  }

  /** Non-blocking {@link #deregisterEventHandler}. */
  public static CompletableFuture<Void> deregisterEventHandlerAsync(long id) {
    return state().deregisterEventHandler(id);
  }

  /**
   * Raises an event with this process as its source: the server delivers it to the processes in
   * {@code range} (except this one), and this process's own matching handlers run too. {@link
   * DataRange#PROC_LOCAL} stays in this process.
   */
  public static void notifyEvent(Status code, DataRange range, Info... info) {
    await(notifyEventAsync(code, range, info), "notifyEvent");
  }

  /** Non-blocking {@link #notifyEvent}. */
  public static CompletableFuture<Void> notifyEventAsync(Status code, DataRange range, Info... info) {
    return state().notifyEvent(code, range, List.of(info));
  }

  // ---- other requests ----

  /**
   * Asks the server to abort {@code procs} (the whole namespace when none is given) with this
   * status and message. Returns when the server has acknowledged; the process is normally killed
   * soon after.
   */
  public static void abort(Status status, @Nullable String message, Proc... procs) {
    await(abortAsync(status, message, procs), "abort");
  }

  /** Non-blocking {@link #abort}. */
  public static CompletableFuture<Void> abortAsync(
      Status status, @Nullable String message, Proc... procs) {
    return state().abort(status, message, List.of(procs));
  }

  /**
   * Asks the server (and through it the host) the queries.
   *
   * @return one info per answered key
   */
  public static List<Info> query(List<Value.Query> queries) {
    return await(queryAsync(queries), "query");
  }

  /** Non-blocking {@link #query}. */
  public static CompletableFuture<List<Info>> queryAsync(List<Value.Query> queries) {
    if (queries.isEmpty()) {
      throw new IllegalArgumentException("no queries");
    }
    return state().query(queries);
  }

  /**
   * Sends log data (for example {@code pmix.log.stderr}) to the server's log channels.
   *
   * @param data at least one info
   */
  public static void log(List<Info> data, Info... directives) {
    await(logAsync(data, directives), "log");
  }

  /** Non-blocking {@link #log}. */
  public static CompletableFuture<Void> logAsync(List<Info> data, Info... directives) {
    return state().log(data, List.of(directives));
  }

  // ---- jobs and connections ----

  /**
   * Connects this process with {@code procs} ({@link Proc#wildcard} names a whole namespace): a
   * collective, returning once every participant has called connect with the same set. Afterwards
   * the job information of the other namespaces involved is local, as for this process's own job.
   *
   * @param procs at least one process; this process is normally among them
   * @param directives {@code pmix.timeout} (int seconds), and whatever the host interprets
   * @throws PmixException with the server's status: {@code ERR_NOT_SUPPORTED} if it needs a host
   *     that cannot connect, {@code ERR_TIMEOUT}, {@code ERR_PARTIAL_SUCCESS} or {@code
   *     ERR_LOST_CONNECTION} if a participant died before it arrived, {@code ERR_UNREACH} as a
   *     singleton
   * @throws IllegalArgumentException if {@code procs} is empty
   */
  public static void connect(Collection<Proc> procs, Info... directives) {
    await(connectAsync(procs, directives), "connect");
  }

  /** Non-blocking {@link #connect}. */
  public static CompletableFuture<Void> connectAsync(Collection<Proc> procs, Info... directives) {
    return state().connect(List.copyOf(requireNonNull(procs, "procs")), List.of(directives));
  }

  /**
   * Disconnects this process from {@code procs}: a collective like {@link #connect}. What this
   * process holds of the other namespaces named is dropped first, as the C client does.
   *
   * @throws PmixException with the server's status (see {@link #connect})
   * @throws IllegalArgumentException if {@code procs} is empty
   */
  public static void disconnect(Collection<Proc> procs, Info... directives) {
    await(disconnectAsync(procs, directives), "disconnect");
  }

  /** Non-blocking {@link #disconnect}. */
  public static CompletableFuture<Void> disconnectAsync(Collection<Proc> procs, Info... directives) {
    return state().disconnect(List.copyOf(requireNonNull(procs, "procs")), List.of(directives));
  }

  /**
   * Asks the server's host to start a new job of {@code apps}. As in C, a missing working
   * directory is this process's, an empty argv is the command's basename, and an argv whose first
   * element is not the command gets the command's basename in front.
   *
   * @param apps at least one app, each with a command
   * @param jobInfo job-level directives for the host ({@code pmix.mapby}, ...)
   * @return the new job's namespace; its job information (e.g. {@code pmix.job.size} of {@code
   *     Proc.wildcard(nspace)}) is then a local get
   * @throws PmixException with the server's status, e.g. {@code ERR_NOT_SUPPORTED} if the host
   *     cannot spawn, {@code ERR_UNREACH} as a singleton
   * @throws IllegalArgumentException if there is no app or an app lacks a command
   */
  public static String spawn(List<Value.App> apps, Info... jobInfo) {
    return await(spawnAsync(apps, jobInfo), "spawn");
  }

  /** Non-blocking {@link #spawn}. */
  public static CompletableFuture<String> spawnAsync(List<Value.App> apps, Info... jobInfo) {
    return state().spawn(requireNonNull(apps, "apps"), List.of(jobInfo));
  }
}
