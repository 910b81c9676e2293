package io.pmix.server;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.LazyLogger;
import io.pmix.server.internal.ClientRehearsal;
import io.pmix.server.internal.PendingHandshakes;
import io.pmix.server.internal.ProgressExecutor;
import io.pmix.server.internal.Rendezvous;
import io.pmix.server.internal.SocketOwner;
import io.pmix.server.internal.ServerCore;
import io.pmix.server.internal.ServerTransport;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A PMIx server that unmodified OpenPMIx 4.2.2 clients can use: what a launcher or resource
 * manager embeds to serve the processes it starts ({@code PMIx_server_*}).
 *
 * <p>Life cycle, in grpc's vocabulary: {@link #create} builds a server, {@link #start} binds its
 * listener (TCP on 127.0.0.1, a kernel-chosen port), {@link #init} does both. {@link #shutdown}
 * refuses new work, closes the listener, answers every pending client request with {@code
 * PMIX_ERR_LOST_CONNECTION}, closes every connection, stops the progress thread and the host
 * thread it owns; {@link #close} does that and waits. Calls before {@code start} answer {@code
 * PMIX_ERR_INIT}, calls after {@code shutdown} {@code PMIX_ERR_NOT_AVAILABLE}, as
 * {@code PMIx_server_register_nspace} specifies.
 *
 * <p>Threading: one progress thread owns all protocol state: the server's own loop on epoll
 * where pmix-java's native library loads (its listener and connections on it, no Netty class
 * loaded for them), else, or with {@link ServerOptions#nettyTransport}, a single-threaded Netty
 * event loop (epoll where available). Every method here may be called from any thread except the progress
 * thread itself; the blocking forms wait for the progress thread and throw {@link
 * IllegalStateException} if called on it, where waiting would deadlock. Asynchronous forms
 * complete on the progress thread: keep their continuations short or move them elsewhere.
 * Host upcalls run on the host executor (see {@link HostModule}).
 *
 * <p>Ownership: the {@link HostModule} and a host executor given in {@link ServerOptions} are
 * borrowed; the progress thread, the host thread created when no executor is given, and the socket
 * owner lookup thread are owned and released by {@link #shutdown}. With {@linkplain
 * ServerOptions#acceptsTools tool support} the server writes its tool rendezvous files at {@link
 * #start} and removes them, and only them (with the directories it created for them), at {@link
 * #shutdown}; otherwise it creates no files.
 *
 * <p>Start-up: before the first client, the server runs a client's usual exchanges once through
 * its own codecs (on the progress thread, touching no state) and connects once to its own
 * listener, closing at once (before the address is published), so that the first clients do not
 * wait for the first execution of that code in a fresh JVM (docs/architecture.md, "Start-up of
 * pmixrun"). Neither reaches the host.
 */
public final class PMIxServer implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(PMIxServer.class);

  /** The version string given to children as {@code PMIX_VERSION}. */
  public static final String PMIX_VERSION = "4.2.2";

  private enum State {
    NEW,
    RUNNING,
    SHUTDOWN,
    TERMINATED
  }

  private final HostModule host;
  private final ServerOptions options;
  private final CountDownLatch terminated = new CountDownLatch(1);

  @GuardedBy("this")
  private State state = State.NEW;

  // Written once by start() under the lock, read afterwards; volatile for the readers.
  private volatile @Nullable ServerTransport transport;
  private volatile @Nullable ProgressExecutor progressExecutor;
  private volatile @Nullable ServerCore core;
  private volatile @Nullable String uri;
  private volatile @Nullable ExecutorService ownedHostExecutor;
  private volatile @Nullable ExecutorService ownerLookupExecutor;
  /** The tool rendezvous files, when tools are supported; removed at shutdown. */
  private volatile @Nullable Rendezvous rendezvous;

  private PMIxServer(HostModule host, ServerOptions options) {
    this.host = requireNonNull(host, "host");
    this.options = requireNonNull(options, "options");
  }

  /** A server not yet listening; call {@link #start}. */
  public static PMIxServer create(HostModule host, ServerOptions options) {
    return new PMIxServer(host, options);
  }

  /**
   * A started server ({@code PMIx_server_init}).
   *
   * @throws PmixException with {@code PMIX_ERR_INIT} if the listener cannot be opened
   */
  public static PMIxServer init(HostModule host, ServerOptions options) {
    return create(host, options).start();
  }

  /**
   * Starts the progress thread and binds the listener.
   *
   * @throws IllegalStateException if already started or shut down
   * @throws PmixException with {@code PMIX_ERR_INIT} if the listener cannot be opened
   */
  @CanIgnoreReturnValue
  public synchronized PMIxServer start() {
    if (state != State.NEW) {
      throw new IllegalStateException("server already " + state.name().toLowerCase(java.util.Locale.ROOT));
    }
    ServerTransport t;
    try {
      t = ServerTransport.open(options);
    } catch (IOException e) {
      throw new PmixException(
          Status.ERR_INIT, "cannot start the progress thread: " + e.getMessage(), e);
    }
    ProgressExecutor pe = t.executor();
    Executor hostExec;
    if (options.hostExecutor().isPresent()) {
      hostExec = options.hostExecutor().get();
    } else {
      ExecutorService owned =
          Executors.newSingleThreadExecutor(daemonThreads("pmix-host"));
      ownedHostExecutor = owned;
      hostExec = owned;
    }
    ExecutorService lookup = null;
    if (!options.trustClaimedCredentials()) {
      lookup = Executors.newSingleThreadExecutor(daemonThreads("pmix-sockowner"));
      ownerLookupExecutor = lookup;
      // The lookup's thread and native binding are made now, while the host starts its
      // processes, rather than when the first of them connects.
      lookup.execute(SocketOwner::prepare);
    }
    if (ownedHostExecutor != null) {
      ownedHostExecutor.execute(() -> {}); // its thread too
    }
    ServerCore c = new ServerCore(pe, host, hostExec, options);
    PendingHandshakes pending = new PendingHandshakes(options.maxPendingHandshakes());
    InetSocketAddress bound;
    try {
      bound = t.listen(c, options, lookup, pending);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      c.releaseStores();
      releaseResources(t);
      throw new PmixException(Status.ERR_INIT, "interrupted while binding the listener", e);
    } catch (IOException | RuntimeException e) {
      c.releaseStores();
      releaseResources(t);
      throw new PmixException(Status.ERR_INIT, "cannot open the listener: " + e.getMessage(), e);
    }
    // Before anyone knows the address (the rendezvous file is not written yet): the knock is then
    // the oldest connection awaiting a handshake, the first a full cap of them would drop.
    ClientRehearsal.knock(bound);
    String u =
        options.serverNspace()
            + "."
            + Integer.toUnsignedString(options.serverRank())
            + ";tcp4://"
            + bound.getAddress().getHostAddress()
            + ":"
            + bound.getPort();
    if (options.acceptsTools()) {
      int[] ids = Rendezvous.effectiveIds();
      try {
        rendezvous =
            Rendezvous.publish(
                options, u, PMIX_VERSION, ProcessHandle.current().pid(), ids[0], ids[1]);
      } catch (PmixException e) {
        c.releaseStores();
        releaseResources(t);
        throw e;
      }
    }
    transport = t;
    progressExecutor = pe;
    core = c;
    uri = u;
    state = State.RUNNING;
    // A client's first exchanges, run once now, while the host starts its processes.
    pe.execute(
        () -> {
          boolean unused = ClientRehearsal.run(options);
        });
    LOG.log(Level.DEBUG, "PMIx server listening at {0} ({1})", uri, t.kind());
    return this;
  }

  /** Daemon threads named {@code name} (not Netty's factory: no Netty class on this path). */
  private static ThreadFactory daemonThreads(String name) {
    return new ThreadFactory() {
      @Override
      public Thread newThread(Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
      }
    };
  }

  private void releaseResources(ServerTransport t) {
    t.stopNow();
    ExecutorService h = ownedHostExecutor;
    if (h != null) {
      h.shutdownNow();
    }
    ExecutorService l = ownerLookupExecutor;
    if (l != null) {
      l.shutdownNow();
    }
  }

  /** The URI children connect to: {@code <nspace>.<rank>;tcp4://127.0.0.1:<port>}. */
  public String uri() {
    String u = uri;
    if (u == null) {
      throw new IllegalStateException("server not started");
    }
    return u;
  }

  /**
   * The tool rendezvous files this server wrote (empty without tool support): {@code
   * pmix.<host>.tool.<pid>} and {@code pmix.<host>.tool.<nspace>} in a directory of its own below
   * the session tmpdir, {@code pmix.<host>.tool} there too with session support, and {@code
   * <system tmpdir>/pmix.sys.<host>} with system support. Removed at {@link #shutdown}.
   */
  public List<Path> rendezvousFiles() {
    Rendezvous r = rendezvous;
    return r == null ? List.of() : r.files();
  }

  /**
   * The server's progress thread as an executor, lent to host work that is short and never
   * blocks: the Java form of libpmix's shared event base ({@code PMIX_EVENT_BASE}). Tasks and
   * timers run there one at a time, in the order given, between the server's own work; a task
   * that blocks or runs long stalls every connection of the server. What it is for: state the host
   * touches only from its upcalls, such as pmixrun's publish/lookup store ({@code
   * io.pmix.dataserver.LocalDataService}) serving a host whose {@linkplain
   * HostModule#dataCallsReturnAtOnce data calls return at once}: then a publish, a lookup and an
   * unpublish cross no thread at all. The executor stays the server's: {@code shutdown} is
   * refused, tasks are refused ({@link java.util.concurrent.RejectedExecutionException}) once the
   * server has shut down, and those still queued then may not run.
   *
   * @throws IllegalStateException before {@link #start}
   */
  public ScheduledExecutorService progressExecutor() {
    ProgressExecutor p = progressExecutor;
    if (p == null) {
      throw new IllegalStateException("the server is not started");
    }
    return p;
  }

  /** The options this server runs with. */
  public ServerOptions options() {
    return options;
  }

  // ---------------------------------------------------------------------------------------------
  // Namespaces and clients
  // ---------------------------------------------------------------------------------------------

  /**
   * Registers a namespace and its job-level data, waiting for the progress thread.
   *
   * @param nspace the namespace, at most 255 bytes
   * @param nlocalprocs how many of its processes will connect to this server
   * @param infos the job-level data by realm (docs/register-nspace.md, DIRECTIVES)
   * @return {@code PMIX_OPERATION_SUCCEEDED} on success, {@code PMIX_ERR_INIT} before {@link
   *     #start}, {@code PMIX_ERR_NOT_AVAILABLE} after {@link #shutdown}, else the error
   */
  public Status registerNspace(String nspace, int nlocalprocs, List<Info> infos) {
    return blocking(registerNspaceAsync(nspace, nlocalprocs, infos));
  }

  /**
   * Registers a namespace without waiting; the stage completes on the progress thread with
   * {@code PMIX_SUCCESS} or the error. Before {@link #start} it is already complete with {@code
   * PMIX_ERR_INIT}, after {@link #shutdown} with {@code PMIX_ERR_NOT_AVAILABLE}.
   */
  public CompletionStage<Status> registerNspaceAsync(
      String nspace, int nlocalprocs, List<Info> infos) {
    requireNonNull(nspace, "nspace");
    List<Info> copy = List.copyOf(infos);
    if (nlocalprocs < 0) {
      throw new IllegalArgumentException("nlocalprocs < 0: " + nlocalprocs);
    }
    Proc unusedCheck = Proc.of(nspace, 0); // validates the name
    // Done once its shared-memory lock segment exists: the host forks the clients next.
    return submitAndWrite(c -> c.registerNspace(nspace, nlocalprocs, copy));
  }

  /**
   * Registers a local client and the uid/gid it must present, waiting for the progress thread.
   *
   * @return {@code PMIX_OPERATION_SUCCEEDED}, or the status as for {@link #registerNspace}
   */
  public Status registerClient(Proc proc, int uid, int gid) {
    return blocking(registerClientAsync(proc, uid, gid, null));
  }

  /**
   * Registers a local client without waiting.
   *
   * @param hostObject an object handed back in the client's upcalls, or null
   */
  public CompletionStage<Status> registerClientAsync(
      Proc proc, int uid, int gid, @Nullable Object hostObject) {
    requireNonNull(proc, "proc");
    return submit(c -> c.registerClient(proc, uid, gid, hostObject));
  }

  /**
   * Deregisters a client ({@code PMIx_server_deregister_client}): the rank is gone for good. Its
   * peers (live connections, which are closed, and the tombstone of a finalized cycle) are
   * released and their slots freed, its registration removed, and its event and I/O-forwarding
   * registrations, parked requests and cached notifications pruned; requests waiting for its data
   * are answered {@code PMIX_ERR_NOT_FOUND} and fences stop waiting for it. The namespace's job
   * data stays. The epilogs registered for the rank then run on the host executor. A later
   * connection for the rank is refused until the host registers it again.
   *
   * @return {@code PMIX_OPERATION_SUCCEEDED}, {@code PMIX_ERR_NOT_FOUND} for an unknown rank, or
   *     the status as for {@link #registerNspace}
   */
  public Status deregisterClient(Proc proc) {
    return blocking(deregisterClientAsync(proc));
  }

  /**
   * {@link #deregisterClient} without waiting: a launcher deregistering a whole job's ranks
   * submits them all and then waits, so the progress thread takes them in one go rather than one
   * hand-off each.
   *
   * @return completes with {@code PMIX_SUCCESS} (where {@link #deregisterClient} returns {@code
   *     PMIX_OPERATION_SUCCEEDED}) or the failure it returns
   */
  public CompletionStage<Status> deregisterClientAsync(Proc proc) {
    requireNonNull(proc, "proc");
    return submit(c -> c.deregisterClient(proc));
  }

  /**
   * Deregisters a namespace ({@code PMIx_server_deregister_nspace}): every peer and rank of it is
   * released (live connections closed), its job and modex data dropped, every event and
   * I/O-forwarding registration, parked request, cached notification and fence naming it purged,
   * then the namespace itself: nothing naming it remains when this returns. The host is told
   * once that all local processes finalized ({@link HostModule#localAppFinalized}) if it was not
   * yet, then the epilogs of its ranks and of the namespace run on the host executor.
   *
   * @return {@code PMIX_OPERATION_SUCCEEDED}, {@code PMIX_ERR_NOT_FOUND} for an unknown
   *     namespace, or the status as for {@link #registerNspace}
   */
  public Status deregisterNspace(String nspace) {
    requireNonNull(nspace, "nspace");
    return blocking(submitAndWrite(c -> c.deregisterNspace(nspace)));
  }

  /**
   * Registers cleanup to run when a rank or a namespace is deregistered (the epilog of
   * docs/lifecycle.md, for what the host reserved on the rank's or the job's behalf).
   * For a rank it runs once, when {@link #deregisterClient} or {@link #deregisterNspace} removes
   * the rank; for {@code Proc.wildcard(nspace)} once, when the namespace is deregistered, after
   * its ranks' epilogs. Finalize does not run it: the registration outlives init/finalize cycles.
   * Epilogs run on the host executor, in registration order; one that throws is logged.
   *
   * @param proc a registered rank, or the wildcard rank of a known namespace
   * @return {@code PMIX_OPERATION_SUCCEEDED}, {@code PMIX_ERR_NOT_FOUND} if the rank or namespace
   *     is unknown, or the status as for {@link #registerNspace}
   */
  public Status registerEpilog(Proc proc, Runnable epilog) {
    requireNonNull(proc, "proc");
    requireNonNull(epilog, "epilog");
    return blocking(submit(c -> c.registerEpilog(proc, epilog)));
  }

  /**
   * Tells the server the pid and executable of a registered local process, so that tools asking
   * for the process table ({@code PMIX_QUERY_PROC_TABLE}, {@code PMIX_QUERY_LOCAL_PROC_TABLE})
   * see them, and the process's state (running or terminated) once it is not connected. A
   * launcher calls it after starting the process; it may call it again after a restart.
   *
   * @param proc a registered rank
   * @param pid the process id (positive)
   * @param executable the program, or null if unknown
   * @return {@code PMIX_OPERATION_SUCCEEDED}, {@code PMIX_ERR_NOT_FOUND} for a rank not
   *     registered, or the status as for {@link #registerNspace}
   */
  public Status setProcInfo(Proc proc, long pid, @Nullable String executable) {
    requireNonNull(proc, "proc");
    if (pid <= 0 || pid > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("pid out of range: " + pid);
    }
    return blocking(submit(c -> c.setProcInfo(proc, (int) pid, executable)));
  }

  /**
   * Declares the attributes the host supports for a PMIx client function ({@code
   * PMIx_Register_attributes}), as tools see them through {@code PMIX_QUERY_ATTRIBUTE_SUPPORT}
   * ({@code pattrs --host <function>}). Replaces what the server would report for that function
   * by default: for the functions the server serves itself and those the {@link HostModule}
   * implements, the attributes the server passes on ({@code PMIx_Publish} lists {@code
   * prte.pub.replace}, honoured by the project's data server; a host whose store does not honour
   * it should register its own list). An empty list reports the function without attributes.
   *
   * @param function a client API name, e.g. {@code "PMIx_Publish"}
   * @param attributes the attributes, each with at least one description line of at most 50
   *     characters (4.2.2's {@code pattrs} overruns a line buffer with longer ones)
   * @throws IllegalArgumentException for a missing or too long description line
   * @return {@code PMIX_OPERATION_SUCCEEDED}, or the status as for {@link #registerNspace}
   */
  public Status registerAttributes(String function, List<Value.RegAttr> attributes) {
    requireNonNull(function, "function");
    for (Value.RegAttr a : attributes) {
      for (String line : a.description()) {
        if (line.length() > 50) {
          throw new IllegalArgumentException(
              "description lines must be at most 50 characters (4.2.2 pattrs overflows): " + line);
        }
      }
      if (a.description().isEmpty()) {
        throw new IllegalArgumentException("an attribute needs a description line: " + a.name());
      }
    }
    List<Value.RegAttr> copy = List.copyOf(attributes);
    return blocking(submit(c -> c.registerAttributes(function, copy)));
  }

  /**
   * The environment a child process needs to connect as {@code proc}
   * ({@code PMIx_server_setup_fork}), in the order a 4.2.2 server sets it.
   *
   * @throws IllegalStateException before {@link #start} or after {@link #shutdown}
   */
  public Map<String, String> setupFork(Proc proc) {
    requireNonNull(proc, "proc");
    String u = uri;
    synchronized (this) {
      if (state != State.RUNNING || u == null) {
        throw new IllegalStateException("server is " + state.name().toLowerCase(java.util.Locale.ROOT));
      }
    }
    Map<String, String> env = new LinkedHashMap<>();
    env.put("PMIX_NAMESPACE", proc.nspace());
    env.put("PMIX_RANK", Integer.toUnsignedString(proc.rank()));
    // The variable's name selects the client's bfrops module; a 4.2.2 client takes URI41.
    for (String v : new String[] {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
        "PMIX_SERVER_URI2", "PMIX_SERVER_URI21"}) {
      env.put(v, u);
    }
    env.put("PMIX_SECURITY_MODE", options.allowNoneSecurity() ? "native,none" : "native");
    env.put("PMIX_BFROP_BUFFER_TYPE", options.childBufferType().environmentValue());
    // ds21,ds12,hash (or what ServerOptions#gds leaves) and the stores' base paths, as 4.2.2
    // (docs/gds.md §1); hash named, so a 5.0 client picks it over shmem2 (docs/transport.md §9.3).
    // Hash alone for a rank registered under a user that cannot read the stores.
    ServerCore sc = core;
    Map<String, String> gds = sc == null ? null : sc.gdsEnvironmentForAll(proc.nspace());
    env.putAll(gds != null ? gds : onProgressThread(c -> c.gdsEnvironment(proc)));
    env.put("PMIX_SERVER_TMPDIR", options.tmpdir().toString());
    env.put("PMIX_SYSTEM_TMPDIR", options.systemTmpdir().toString());
    env.put("PMIX_HOSTNAME", options.hostname());
    env.put("PMIX_VERSION", PMIX_VERSION);
    return Collections.unmodifiableMap(env);
  }

  /** Runs {@code f} on the progress thread (directly when already there) and waits for it. */
  private <T> T onProgressThread(java.util.function.Function<ServerCore, T> f) {
    ProgressExecutor el = progressExecutor;
    ServerCore c = core;
    if (el == null || c == null || isShutdown()) {
      throw new IllegalStateException("server not running");
    }
    if (el.inProgressThread()) {
      return f.apply(c);
    }
    CompletableFuture<T> r = new CompletableFuture<>();
    try {
      el.execute(
          () -> {
            try {
              r.complete(f.apply(c));
            } catch (RuntimeException e) {
              r.completeExceptionally(e);
            }
          });
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("server not running", e);
    }
    // The progress thread may stop before it runs the task: then it never completes.
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return r.get(100, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
          if (isTerminated() && !r.isDone()) {
            throw new IllegalStateException("server stopped", e);
          }
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw new IllegalStateException("server operation failed", e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Delivers an event to the local clients registered for it ({@code PMIx_Notify_event} from the
   * host, local delivery only).
   *
   * @param range the {@code pmix_data_range_t} code
   */
  public Status notifyEvent(Status code, Proc source, int range, List<Info> info) {
    requireNonNull(code, "code");
    requireNonNull(source, "source");
    List<Info> copy = List.copyOf(info);
    return blocking(submit(c -> c.notifyLocal(code, source, range, copy, null)));
  }

  /**
   * The data a local process committed for other nodes ({@code PMIx_server_dmodex_request}): what
   * a host calls when another node's host asks it for {@code proc}'s data, and hands back as that
   * node's {@link HostModule#directModex} answer. The bytes are the REMOTE-scope data (its REMOTE
   * and GLOBAL puts) as bare KVAL units in the server's native encoding (docs/commands.md §7.2);
   * for {@code Proc.wildcard(nspace)} the namespace's job-level data.
   *
   * <p>If the process has not committed yet, or its namespace or rank is not registered here
   * yet, the stage waits until it commits. It fails with a {@link PmixException} carrying:
   *
   * <ul>
   *   <li>{@code PMIX_ERR_TIMEOUT} when the {@code pmix.timeout} directive (seconds) passes first;
   *       without one it waits without limit, as the 4.2.2 call does;
   *   <li>{@code PMIX_ERR_LOST_CONNECTION} when the process's last connection drops before it
   *       finalized (4.2.2 never answers then);
   *   <li>{@code PMIX_ERR_NOT_FOUND} at once for a rank that is not local to this server while
   *       every local rank of its namespace is registered, and for the wildcard rank of an
   *       unknown namespace (4.2.2 never answers either), or later when the rank or its
   *       namespace is deregistered while the request waits;
   *   <li>{@code PMIX_ERR_LOST_CONNECTION} when the server shuts down while it waits; {@code
   *       PMIX_ERR_INIT} before {@link #start}, {@code PMIX_ERR_NOT_AVAILABLE} after {@link
   *       #shutdown}.
   * </ul>
   *
   * <p>The stage completes on the progress thread, like the other asynchronous forms: keep its
   * continuations short or move them elsewhere.
   *
   * @param proc a process of this node, or the wildcard rank of a namespace
   * @param directives {@code pmix.timeout}; others are ignored
   * @throws IllegalArgumentException for rank UNDEF (no single process)
   */
  public CompletionStage<byte[]> dmodexRequest(Proc proc, List<Info> directives) {
    requireNonNull(proc, "proc");
    List<Info> copy = List.copyOf(directives);
    if (proc.rank() == Proc.RANK_UNDEF) {
      throw new IllegalArgumentException("rank UNDEF names no process: " + proc);
    }
    CompletableFuture<byte[]> f = new CompletableFuture<>();
    State s;
    synchronized (this) {
      s = state;
    }
    if (s != State.RUNNING) {
      Status why = s == State.NEW ? Status.ERR_INIT : Status.ERR_NOT_AVAILABLE;
      f.completeExceptionally(new PmixException(why, "server not running"));
      return f;
    }
    ProgressExecutor el = requireNonNull(progressExecutor);
    ServerCore c = requireNonNull(core);
    try {
      el.execute(
          () -> {
            try {
              c.dmodexRequest(proc, copy, f);
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "direct-modex request failed", e);
              f.completeExceptionally(new PmixException(Status.ERROR, "direct-modex request", e));
            }
          });
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(new PmixException(Status.ERR_NOT_AVAILABLE, "server stopped", e));
    }
    return f;
  }

  /**
   * How many requests of each command (by its name, e.g. {@code GETNB}, {@code COMMIT}) this
   * server has handled. Any thread.
   *
   * @throws IllegalStateException before {@link #start}
   */
  public Map<String, Long> requestCounts() {
    ServerCore c = core;
    if (c == null) {
      throw new IllegalStateException("server not started");
    }
    return c.requestCounts();
  }

  /**
   * The shared-memory store directories this server writes namespaces registered from now on to
   * (ds21's, ds12's; empty when it serves only hash), removed at shutdown. A store retired after
   * a reader lost its lock has a successor in a directory of its own.
   *
   * @throws IllegalStateException before {@link #start}
   */
  public List<Path> gdsDirectories() {
    ServerCore c = core;
    if (c == null) {
      throw new IllegalStateException("server not started");
    }
    return c.gdsDirectories();
  }

  /**
   * A snapshot of the peers, namespaces and ranks, taken on the progress thread at one instant
   * (see {@link ServerSnapshot}); from the progress thread itself it is taken at once.
   *
   * @throws IllegalStateException if the server is not running
   */
  public ServerSnapshot snapshot() {
    CompletableFuture<ServerSnapshot> f = new CompletableFuture<>();
    ProgressExecutor el = progressExecutor;
    ServerCore c = core;
    if (el == null || c == null || isShutdown()) {
      throw new IllegalStateException("server not running");
    }
    if (el.inProgressThread()) {
      return c.snapshot();
    }
    try {
      el.execute(() -> f.complete(c.snapshot()));
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("server not running", e);
    }
    return f.join();
  }

  // ---------------------------------------------------------------------------------------------
  // Shutdown
  // ---------------------------------------------------------------------------------------------

  /**
   * Begins an orderly shutdown and returns at once: refuse new work, close the listener, answer
   * pending client requests with {@code PMIX_ERR_LOST_CONNECTION}, close every connection, stop
   * the progress thread, then the threads the server owns. Idempotent.
   */
  public void shutdown() {
    ProgressExecutor el;
    synchronized (this) {
      if (state == State.NEW) {
        state = State.TERMINATED;
        terminated.countDown();
        return;
      }
      if (state != State.RUNNING) {
        return;
      }
      state = State.SHUTDOWN;
      el = progressExecutor;
    }
    // First of all, so no tool finds a server on its way out.
    Rendezvous r = rendezvous;
    if (r != null) {
      r.close();
    }
    ServerCore c = requireNonNull(core);
    ServerTransport t = requireNonNull(transport);
    requireNonNull(el)
        .execute(
            () -> {
              t.closeListener();
              List<CompletableFuture<Void>> closes =
                  new ArrayList<>(c.shutdown(Status.ERR_LOST_CONNECTION));
              // Connections that never completed a handshake are not peers: closed too.
              closes.addAll(t.closeConnections());
              // The progress thread outlives the store writes: their ends are reported to it.
              closes.add(c.storesClosed());
              CompletableFuture<Void> unused =
                  CompletableFuture.allOf(closes.toArray(new CompletableFuture<?>[0]))
                      .whenComplete((v, e) -> t.stop(this::finishTermination));
            });
  }

  private void finishTermination() {
    ExecutorService h = ownedHostExecutor;
    if (h != null) {
      h.shutdown();
    }
    ExecutorService l = ownerLookupExecutor;
    if (l != null) {
      l.shutdownNow();
    }
    synchronized (this) {
      state = State.TERMINATED;
    }
    terminated.countDown();
  }

  /** Whether {@link #shutdown} has been called. */
  public synchronized boolean isShutdown() {
    return state == State.SHUTDOWN || state == State.TERMINATED;
  }

  /** Whether shutdown has finished: every connection closed and the progress thread stopped. */
  public boolean isTerminated() {
    return terminated.getCount() == 0;
  }

  /** Waits up to {@code timeout} for termination; true if terminated. */
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    return terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Shuts down and waits (up to 30 seconds) until terminated ({@code PMIx_server_finalize}), then
   * (up to 5 seconds) until the upcalls and epilogs already queued on the server's own host thread
   * have run.
   *
   * @throws IllegalStateException if called on the progress thread
   */
  @Override
  public void close() {
    ProgressExecutor el = progressExecutor;
    if (el != null && el.inProgressThread()) {
      throw new IllegalStateException("close() on the progress thread would deadlock");
    }
    shutdown();
    try {
      if (!awaitTermination(Duration.ofSeconds(30))) {
        LOG.log(Level.WARNING, "PMIx server did not terminate within 30 s");
      }
      // Epilogs already handed to the host thread (a deregistered job's cleanup directories)
      // still run, as libpmix runs them before its finalize returns; a host upcall that hangs
      // delays this by at most a few seconds.
      ExecutorService h = ownedHostExecutor;
      if (h != null && !h.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.log(Level.WARNING, "the PMIx server's host thread did not finish within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------

  private interface CoreCall {
    Status run(ServerCore core);
  }

  /** Hands {@code call} to the progress thread; the stage completes there. */
  /**
   * As {@link #submit}, and a success completes only once the shared-memory store writes it made
   * have ended (on the stores' own thread).
   */
  private CompletionStage<Status> submitAndWrite(CoreCall call) {
    return submit(call, true);
  }

  private CompletionStage<Status> submit(CoreCall call) {
    return submit(call, false);
  }

  private CompletionStage<Status> submit(CoreCall call, boolean afterWrites) {
    State s;
    synchronized (this) {
      s = state;
    }
    if (s == State.NEW) {
      return CompletableFuture.completedFuture(Status.ERR_INIT);
    }
    if (s != State.RUNNING) {
      return CompletableFuture.completedFuture(Status.ERR_NOT_AVAILABLE);
    }
    ProgressExecutor el = requireNonNull(progressExecutor);
    ServerCore c = requireNonNull(core);
    CompletableFuture<Status> f = new CompletableFuture<>();
    Runnable task =
        () -> {
          Status st;
          try {
            st = call.run(c);
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "server operation failed", e);
            f.complete(Status.ERROR);
            return;
          }
          if (afterWrites && st.isSuccess()) {
            CompletableFuture<Void> unused =
                c.storesWritten().whenComplete((v, e) -> f.complete(st));
          } else {
            f.complete(st);
          }
        };
    try {
      el.execute(task);
    } catch (RejectedExecutionException e) {
      f.complete(Status.ERR_NOT_AVAILABLE);
    }
    return f;
  }

  /** Waits for an operation; success becomes OPERATION_SUCCEEDED, as the blocking C forms do. */
  private Status blocking(CompletionStage<Status> stage) {
    ProgressExecutor el = progressExecutor;
    if (el != null && el.inProgressThread()) {
      throw new IllegalStateException("a blocking call on the progress thread would deadlock");
    }
    Status s;
    try {
      s = waitFor(stage.toCompletableFuture());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Status.ERR_NOT_AVAILABLE;
    }
    return s.isSuccess() ? Status.OPERATION_SUCCEEDED : s;
  }

  private Status waitFor(CompletableFuture<Status> f) throws InterruptedException {
    // The progress thread may stop while we wait: then the task may never run.
    while (true) {
      try {
        return f.get(100, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        if (isTerminated() && !f.isDone()) {
          return Status.ERR_NOT_AVAILABLE;
        }
      } catch (ExecutionException e) {
        return Status.ERROR;
      }
    }
  }
}
