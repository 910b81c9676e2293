package io.pmix.tool;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.tool.internal.ToolHolder;
import io.pmix.tool.internal.ToolState;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The PMIx tool API: what a debugger, a monitoring tool or a launcher calls to attach to a running
 * PMIx server and ask it about its jobs. Like the C API ({@code PMIx_tool_init} and friends) it is
 * a set of static calls on one process-wide tool.
 *
 * <h2>Attaching</h2>
 *
 * {@link #init} finds a server and connects to it, in OpenPMIx's order (docs/transport.md §4.2):
 *
 * <ol>
 *   <li>{@code pmix.srvr.uri} (or {@code pmix.tcp.uri}): that URI; {@code file:<path>} reads a
 *       rendezvous file;
 *   <li>{@code pmix.tool.attach}: a rendezvous or attachment file;
 *   <li>{@code pmix.cnct.sys}: the system server ({@code pmix.sys.<host>} in the system tmpdir);
 *       {@code pmix.cnct.sys.first} tries it first and falls back to what follows;
 *   <li>{@code pmix.srvr.pidinfo}: the server with that pid;
 *   <li>{@code pmix.srv.nspace}: the server with that namespace;
 *   <li>{@code PMIX_SERVER_URI41} (or {@code URI4}) in the environment: the server that launched
 *       this process;
 *   <li>otherwise the first server whose rendezvous file is found below the system tmpdir ({@code
 *       pmix.sys.tmpdir}, else {@code PMIX_SYSTEM_TMPDIR}, {@code TMPDIR}, {@code TEMP}, {@code
 *       TMP}, {@code /tmp}) and below {@code pmix.srvr.tmpdir}/{@code PMIX_SERVER_TMPDIR}, nearest
 *       the root first; servers that do not answer are skipped.
 * </ol>
 *
 * {@code pmix.tool.conopt} makes a failed attach non-fatal (the tool then runs unconnected: {@link
 * #isConnected()} is false and requests fail with {@code ERR_UNREACH}); {@code pmix.tool.nocon}
 * does not even try. {@code pmix.tool.mretries} and {@code pmix.tool.retry} (seconds) control
 * connect retries.
 *
 * <p>Identity: {@code pmix.tool.nspace} and {@code pmix.tool.rank} name the tool (wire flag 4);
 * without them a process whose environment has {@code PMIX_NAMESPACE} and {@code PMIX_RANK} (a
 * tool started by a PMIx server) uses those (flag 5); otherwise the server assigns a name (flag 3).
 * {@code pmix.tool.launcher} = true connects as a launcher (flags 7, 8, 6). {@link #myProc()} is
 * the name in use.
 *
 * <h2>Life cycle</h2>
 *
 * Init is reference counted through the tool's own counter, separate from the client's ({@code
 * io.pmix.client.PMIx}): only the first init attaches and only the matching last {@link #finalize}
 * detaches. The last finalize tells the server, closes the connection, fails pending operations
 * with {@code ERR_INIT}, stops the library's threads and waits for them, and forgets everything the
 * cycle set up: event registrations, I/O-forwarding handlers, the cached data of other jobs, the
 * chosen server and the temporary-directory choices. So init may be called again at once, and
 * reads the environment afresh.
 *
 * <h2>Threads and futures</h2>
 *
 * Every operation has a blocking form and a non-blocking {@code ...Async} form returning a {@link
 * CompletableFuture}; the blocking form waits for that future. Futures complete, and event and
 * output handlers run, on the library's callback thread, never on its I/O (progress) thread and
 * never under a library lock. Blocking calls made on that callback thread throw {@link
 * IllegalStateException} instead of deadlocking; use the non-blocking forms there. (Unlike the C
 * library, where blocking {@code PMIx_IOF_deregister} and {@code PMIx_IOF_push} never return in a
 * 4.2.2 tool, every blocking form here returns when the server answers.) All methods are
 * thread-safe.
 *
 * <h2>Errors and what a server may not offer</h2>
 *
 * What the server or the protocol decides is a {@link PmixException} carrying the {@link Status}
 * (for the non-blocking forms: the future completes exceptionally with it). Operations the server
 * or its host does not implement fail with the status the server sends, normally {@code
 * ERR_NOT_SUPPORTED} (a 4.2.2 server without the host upcall for spawn, job control or IOF, or
 * whose host cannot answer a query key, answers so; the C test host answers only the namespace
 * query and reports {@code ERR_NOT_FOUND} for other keys). Caller mistakes are the JDK's
 * exceptions: {@code NullPointerException}, {@code IllegalArgumentException}, and {@code
 * IllegalStateException} for any call but {@link #init} while not initialized.
 *
 * <h2>Launchers that also serve their children</h2>
 *
 * A launcher connects up to its server with this API ({@code pmix.tool.launcher} = true) and, to
 * serve the processes it starts, embeds a server in the same JVM: it creates an {@code
 * io.pmix.server.PMIxServer} of the pmix-server module (its own dependency; pmix-tool does not
 * depend on pmix-server), registers the children's namespace with it and starts them with the
 * environment the server prepares ({@code setupFork}). The two are independent: each has its own
 * threads and life cycle; finalize the server after the children are done and the tool when the
 * launcher detaches. (OpenPMIx's {@code PMIx_tool_set_server_module}, which turns the tool library
 * itself into a server, has no counterpart here.)
 *
 * <p>Start-up cost: the tool shares the client's connector (no Netty, no Guava collections; see
 * {@code io.pmix.client.PMIx}). Measured ({@code bin/bench-client}, a tool forked by the job's
 * rank 0 attaching by the server's pid, one sitting under load on a 2-core machine): a first
 * {@code PMIxTool.init} of 87 ms under libpmix's host server (the C tool: 2.2 ms) and 122 ms under
 * {@code bin/pmixrun} (C: 10 ms). Since then the connector waits and connects through pmix-java's
 * native library instead of NIO, and the tool takes its pid and command from /proc and lists the
 * rendezvous directories itself (the JDK's {@code ProcessHandle} and tree walker cost a fresh JVM
 * 9-12 and 3-4 ms): one tool's first init, old and new jar alternating, median 71 -> 56 ms; in
 * {@code bin/bench-client}'s later run 52-83 ms (C: 2.4 ms) and 78 ms under {@code bin/pmixrun}
 * (C: 8.4 ms). Class-data sharing cuts it as for the client.
 *
 * <p>Not implemented: attaching to several servers at once ({@code PMIx_tool_attach_to_server},
 * {@code PMIx_tool_disconnect}, {@code PMIx_tool_set_server}), publish/lookup, allocation,
 * monitoring, groups and credentials from a tool.
 */
public final class PMIxTool {
  private PMIxTool() {}

  private static ToolState state() {
    return ToolHolder.require();
  }

  private static <T> T await(CompletableFuture<T> f, String operation) {
    return ToolState.await(f, operation);
  }

  // ---- life cycle ----

  /**
   * Initialises the tool and attaches it to a server (see the class description), or counts one
   * more init if it already is.
   *
   * @param directives init attributes (see the class description); those the library does not
   *     consume are passed to the server in the connect request
   * @return this tool's name
   * @throws PmixException {@code ERR_UNREACH} if no server can be found or reached, {@code
   *     ERR_BAD_PARAM} for a malformed attribute, file or URI, or an ambiguous pid or namespace,
   *     {@code ERR_INIT} if a previous teardown never finished
   * @throws IllegalStateException if called on the library's callback thread
   */
  @CanIgnoreReturnValue
  public static Proc init(Info... directives) {
    return ToolHolder.init(System.getenv(), List.of(directives)).me();
  }

  /**
   * Finalizes the tool. A nested finalize only counts; the last one tells the server (waiting at
   * most two seconds for its answer), closes the connection, fails operations still pending with
   * {@code ERR_INIT}, drops every registration and cached value, and returns after the library's
   * threads have ended.
   *
   * @param directives none is interpreted
   * @throws IllegalStateException if not initialized, or called on the library's callback thread
   */
  public static void finalize(Info... directives) {
    var unused = ToolHolder.finalizeTool(List.of(directives));
  }

  /** Whether the tool is initialized. */
  public static boolean initialized() {
    return ToolHolder.peek() != null;
  }

  /**
   * This tool's name: the one it gave itself, or the one the server assigned.
   *
   * @throws IllegalStateException if not initialized
   */
  public static Proc myProc() {
    return state().me();
  }

  /**
   * Whether the tool is attached to a server (false when initialized with {@code pmix.tool.nocon},
   * or with {@code pmix.tool.conopt} when no server could be reached).
   *
   * @throws IllegalStateException if not initialized
   */
  public static boolean isConnected() {
    return state().isConnected();
  }

  /**
   * The server's name, as it gave it when the tool attached.
   *
   * @throws IllegalStateException if not initialized
   */
  public static Optional<Proc> server() {
    return state().server();
  }

  // ---- queries and data ----

  /**
   * Asks the queries. Those for the attributes of tool functions ({@code pmix.qry.attrs} qualified
   * by {@code pmix.tool.fns}) are answered by the library; the rest go to the server (and through
   * it to the host).
   *
   * @return one info per answered key
   * @throws PmixException with the server's status, e.g. {@code ERR_NOT_FOUND} when nobody can
   *     answer
   */
  public static List<Info> query(List<Value.Query> queries) {
    return await(queryAsync(queries), "query");
  }

  /** Non-blocking {@link #query}. */
  public static CompletableFuture<List<Info>> queryAsync(List<Value.Query> queries) {
    return state().query(requireNonNull(queries, "queries"));
  }

  /** The namespaces the server knows ({@code pmix.qry.ns}). */
  public static List<String> queryNamespaces() {
    return await(queryNamespacesAsync(), "queryNamespaces");
  }

  /** Non-blocking {@link #queryNamespaces}. */
  public static CompletableFuture<List<String>> queryNamespacesAsync() {
    return state().queryNamespaces();
  }

  /**
   * The process table of a job ({@code pmix.qry.ptable}): each process with its host, executable,
   * pid and state.
   */
  public static List<Value.ProcInfo> queryProcTable(String nspace) {
    return await(queryProcTableAsync(nspace), "queryProcTable");
  }

  /** Non-blocking {@link #queryProcTable}. */
  public static CompletableFuture<List<Value.ProcInfo>> queryProcTableAsync(String nspace) {
    return state().queryProcTable(nspace);
  }

  /**
   * The value of {@code key} for {@code proc}: job information of any job ({@code proc} with rank
   * {@link Proc#RANK_WILDCARD}) or a process's data, fetched from the server once and then cached.
   *
   * @param directives {@code pmix.optional} (only look locally), {@code pmix.immediate}, {@code
   *     pmix.timeout}
   * @throws PmixException {@code ERR_NOT_FOUND} if nobody has the key
   */
  public static Value get(Proc proc, String key, Info... directives) {
    return await(getAsync(proc, key, directives), "get");
  }

  /** Non-blocking {@link #get}. */
  public static CompletableFuture<Value> getAsync(Proc proc, String key, Info... directives) {
    return state().get(proc, key, List.of(directives));
  }

  // ---- events ----

  /**
   * Registers {@code handler} for events with one of {@code codes}, or for every event when
   * {@code codes} is empty (a default handler, called after the specific ones). The loss of the
   * server is delivered as {@code ERR_LOST_CONNECTION}.
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
   * Raises an {@link Event} with this tool as its source: the server delivers it to the processes
   * in {@code range}, and this tool's own matching handlers run too. {@link DataRange#PROC_LOCAL}
   * stays in this process.
   */
  public static void notifyEvent(Status code, DataRange range, Info... info) {
    await(notifyEventAsync(code, range, info), "notifyEvent");
  }

  /** Non-blocking {@link #notifyEvent}. */
  public static CompletableFuture<Void> notifyEventAsync(Status code, DataRange range, Info... info) {
    return state().notifyEvent(code, range, List.of(info));
  }

  // ---- jobs ----

  /**
   * Asks the server's host to start a job. As in C, a missing working directory is this
   * process's, an empty argv is the command's basename, and an argv whose first element is not the
   * command gets the command's basename in front.
   *
   * @return the new job's namespace; its job data is cached, so {@link #get} of it is local
   * @throws PmixException {@code ERR_NOT_SUPPORTED} if the host cannot spawn
   */
  public static String spawn(List<Value.App> apps, Info... jobInfo) {
    return await(spawnAsync(apps, jobInfo), "spawn");
  }

  /** Non-blocking {@link #spawn}. */
  public static CompletableFuture<String> spawnAsync(List<Value.App> apps, Info... jobInfo) {
    return state().spawn(requireNonNull(apps, "apps"), List.of(jobInfo));
  }

  /**
   * Job control: asks the host to act on {@code targets} as the directives say ({@code
   * pmix.jctrl.kill}, {@code pmix.jctrl.pause}, ...).
   *
   * @return what the host answered
   * @throws PmixException {@code ERR_NOT_SUPPORTED} if the host has no job control
   */
  public static List<Info> jobControl(List<Proc> targets, Info... directives) {
    return await(jobControlAsync(targets, directives), "jobControl");
  }

  /** Non-blocking {@link #jobControl}. */
  public static CompletableFuture<List<Info>> jobControlAsync(
      List<Proc> targets, Info... directives) {
    return state().jobControl(requireNonNull(targets, "targets"), List.of(directives));
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
    return state().log(requireNonNull(data, "data"), List.of(directives));
  }

  // ---- I/O forwarding ----

  /**
   * Asks the server to forward the output of {@code sources} on {@code channels} to {@code
   * handler} until {@link #iofDeregister}.
   *
   * @return the registration's id
   * @throws PmixException {@code ERR_NOT_SUPPORTED} if the server's host does not forward output
   * @throws IllegalArgumentException for no sources, no channel, or {@link IofChannel#STDIN}
   */
  @CanIgnoreReturnValue
  public static long iofPull(
      List<Proc> sources, Set<IofChannel> channels, IofHandler handler, Info... directives) {
    return await(iofPullAsync(sources, channels, handler, directives), "iofPull");
  }

  /** Non-blocking {@link #iofPull}. */
  public static CompletableFuture<Long> iofPullAsync(
      List<Proc> sources, Set<IofChannel> channels, IofHandler handler, Info... directives) {
    return state()
        .iofPull(
            requireNonNull(sources, "sources"),
            requireNonNull(channels, "channels"),
            handler,
            List.of(directives));
  }

  /** Ends a registration made by {@link #iofPull}; no output reaches its handler afterwards. */
  public static void iofDeregister(long id, Info... directives) {
    await(iofDeregisterAsync(id, directives), "iofDeregister");
  }

  /** Non-blocking {@link #iofDeregister}. */
  public static CompletableFuture<Void> iofDeregisterAsync(long id, Info... directives) {
    return state().iofDeregister(id, List.of(directives));
  }

  /**
   * Sends {@code data} to the standard input of {@code targets}; {@code null} closes it.
   *
   * @throws PmixException {@code ERR_NOT_SUPPORTED} if the server's host does not forward stdin
   */
  public static void iofPush(List<Proc> targets, byte @Nullable [] data, Info... directives) {
    await(iofPushAsync(targets, data, directives), "iofPush");
  }

  /** Non-blocking {@link #iofPush}. */
  public static CompletableFuture<Void> iofPushAsync(
      List<Proc> targets, byte @Nullable [] data, Info... directives) {
    return state().iofPush(requireNonNull(targets, "targets"), data, List.of(directives));
  }
}
