package io.pmix.server;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The upcalls a host (launcher, resource manager) implements for a {@link PMIxServer}: the Java
 * form of OpenPMIx's {@code pmix_server_module_t}.
 *
 * <p>Every upcall is asynchronous: it returns a {@link CompletionStage} the host may complete
 * later, from any thread. A stage completed exceptionally with a {@link PmixException} carries the
 * status the client (or the server) sees; any other exception counts as {@code PMIX_ERROR}. Every
 * method that asks for something has a default that answers {@code PMIX_ERR_NOT_SUPPORTED}, which
 * the server treats exactly as OpenPMIx 4.2.2 treats a missing function pointer; a pure
 * notification ({@link #localAppFinalized}) defaults to doing nothing.
 *
 * <p>Threading: the server calls these methods on its host executor (the one given in {@link
 * ServerOptions.Builder#hostExecutor}, else a single thread the server owns), never on its
 * progress thread, except publish, lookup and unpublish of a host that says they return at once
 * ({@link #dataCallsReturnAtOnce}), and clientConnected and clientFinalized likewise ({@link
 * #clientCallsReturnAtOnce}); completions are handed back to the progress thread. An
 * implementation may block briefly, but a long block delays every later upcall when the executor is single-threaded.
 * Arguments are immutable and may be kept.
 */
public interface HostModule {

  /** A stage already failed with {@code PMIX_ERR_NOT_SUPPORTED}: what every default returns. */
  static <T> CompletionStage<T> notSupported() {
    return CompletableFuture.failedFuture(
        new PmixException(Status.ERR_NOT_SUPPORTED, "the host does not implement this upcall"));
  }

  /**
   * A client completed its handshake, before it asks for job data. A failure makes the server
   * drop the connection (as 4.2.2 does when the host returns an error); {@code NOT_SUPPORTED} is
   * not a failure.
   *
   * @param proc the client
   * @param hostObject the object given to {@link PMIxServer#registerClient}, or null
   */
  default CompletionStage<Void> clientConnected(Proc proc, @Nullable Object hostObject) {
    return notSupported();
  }

  /**
   * A client called {@code PMIx_Finalize}. The client's finalize returns once this stage
   * completes; {@code NOT_SUPPORTED} counts as success.
   */
  default CompletionStage<Void> clientFinalized(Proc proc, @Nullable Object hostObject) {
    return notSupported();
  }

  /**
   * Every local process of a namespace has finalized: the "all local processes finalized"
   * condition ({@code nlocalprocs == nfinalized}) that OpenPMIx hands to its network and GPU
   * plugins ({@code local_app_finalized}), for a host that reserved job resources. Called at most
   * once per namespace, when the host deregisters a client or the namespace and the condition
   * holds, as OpenPMIx checks it; at the latest when the namespace is deregistered. Processes
   * that died without finalizing and ranks never started count as done then. The answer is
   * ignored.
   *
   * @param nspace the namespace
   */
  default CompletionStage<Void> localAppFinalized(String nspace) {
    return CompletableFuture.completedFuture(null);
  }

  /**
   * A client asked to abort processes. The caller waits for the answer, so complete the stage
   * even if the processes are going to be killed.
   *
   * @param proc the caller
   * @param hostObject the caller's host object, or null
   * @param status the exit status the caller requested
   * @param message the caller's message, or null
   * @param procs the processes to abort; empty means the caller's whole job
   */
  default CompletionStage<Void> abort(
      Proc proc, @Nullable Object hostObject, Status status, @Nullable String message,
      List<Proc> procs) {
    return notSupported();
  }

  /**
   * Every local participant of a fence has arrived and some participants live elsewhere: run the
   * cross-node part of the collective.
   *
   * @param procs the participants, sorted
   * @param info the callers' directives plus {@code pmix.sorted.parr} and {@code pmix.loc.col.st}
   * @param data this node's contribution (docs/commands.md §7.1): one BYTE_OBJECT unit, empty
   *     when no data collection was requested
   * @return the concatenation of every node's contribution (each node's BYTE_OBJECT unit, in any
   *     order); empty when nothing was collected
   */
  default CompletionStage<byte[]> fenceNb(List<Proc> procs, List<Info> info, byte[] data) {
    return notSupported();
  }

  /**
   * A client asked for data of a process this server does not host.
   *
   * @param proc the target process
   * @param info the client's directives plus {@code pmix.req.key} when a key was named
   * @return the target's remote data as a concatenation of KVAL units (docs/commands.md §7.2)
   */
  default CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
    return notSupported();
  }

  /** A client published data; {@code info} holds the data, its directives and {@code pmix.euid}. */
  default CompletionStage<Void> publish(Proc proc, List<Info> info) {
    return notSupported();
  }

  /**
   * A client looked up published keys.
   *
   * @return the data found; a stage failed with {@code PMIX_ERR_NOT_FOUND} when none was
   */
  default CompletionStage<List<Value.PData>> lookup(Proc proc, List<String> keys, List<Info> info) {
    return notSupported();
  }

  /** A client withdrew published keys (all of its keys when {@code keys} is empty). */
  default CompletionStage<Void> unpublish(Proc proc, List<String> keys, List<Info> info) {
    return notSupported();
  }

  /**
   * Whether {@link #publish}, {@link #lookup} and {@link #unpublish} return at once: each only
   * hands the request on (to a data service's own thread, say) and returns its stage, never
   * blocking, waiting or calling into the {@code PMIxServer} before it returns. The server then
   * calls these three on its progress thread, as libpmix calls its host, instead of handing them
   * to the host executor: one thread crossing fewer per request (~30-40 µs each on a 2-core VM).
   * The progress thread then also does the host's part of each such request. pmixrun's host
   * answers true and keeps its store on the progress thread too ({@link
   * PMIxServer#progressExecutor}), so that these requests cross no thread at all: a warm publish
   * at 1 rank 175 -> 109-124 µs (libpmix's host server 135), at 8 ranks 370-388 -> 303-311 µs
   * (C 223-230); with the store on a thread of its own, answering true was slower for 256 ranks
   * on 2 cores (docs/architecture.md, "Like for like"). A host that answers true and then blocks
   * in one of them stalls every connection of the server. Read once, when the server is created.
   *
   * @return false (the default): these run on the host executor like every other upcall
   */
  default boolean dataCallsReturnAtOnce() {
    return false;
  }

  /**
   * Whether {@link #clientConnected} and {@link #clientFinalized} return at once, their stages
   * complete: each only notes the client's step (a set or a counter), never blocking, waiting or
   * calling into the {@code PMIxServer}. The server then calls these two on its progress thread,
   * as libpmix calls its host, instead of handing them to the host executor. A client's {@code
   * PMIx_Finalize} returns once the host's stage completes, so this takes two thread crossings
   * out of every finalize and keeps the host executor free for the calls that need it. pmixrun's
   * own host answers true: its finalize of 8 ranks became ~25% faster in a fresh server, ~40% in a
   * warm one (docs/architecture.md, "Like for like"). A host that answers true and then blocks in one of them stalls every connection of the server.
   * Read once, when the server is created.
   *
   * @return false (the default): these run on the host executor like every other upcall
   */
  default boolean clientCallsReturnAtOnce() {
    return false;
  }

  /**
   * A client raised an event for a range beyond this node.
   *
   * @param code the event
   * @param source the process that raised it
   * @param range the {@code pmix_data_range_t} code
   * @param info the event's data
   */
  default CompletionStage<Void> notifyEvent(Status code, Proc source, int range, List<Info> info) {
    return notSupported();
  }

  /**
   * A client or tool asked a question the server cannot answer from its own data. The server
   * answers the namespaces, namespace info, job size, process tables and attribute support
   * itself; {@code queries} holds only the keys left (each query with its qualifiers). The
   * answer is one info per answered key, keyed by the query key; the server adds its own answers
   * to it. A failure is the reply's status when the server answered nothing itself.
   *
   * @param requester the client or tool that asked
   */
  default CompletionStage<List<Info>> query(Proc requester, List<Value.Query> queries) {
    return notSupported();
  }

  /** A client logged data (directives include {@code pmix.log.source}). */
  default CompletionStage<Void> log(Proc requester, List<Info> data, List<Info> directives) {
    return notSupported();
  }

  /**
   * A client asked to spawn a job.
   *
   * @return the namespace of the new job, registered with {@link PMIxServer#registerNspace}
   *     before the stage completes
   */
  default CompletionStage<String> spawn(Proc requester, List<Info> jobInfo, List<Value.App> apps) {
    return notSupported();
  }

  /**
   * A client or tool asked for job control ({@code PMIx_Job_control}): OpenPMIx's {@code
   * job_control}. The server serves the cleanup directives ({@code pmix.reg.cleanup}, {@code
   * pmix.reg.cleanupdir}, {@code pmix.clnup.*}) itself and calls this only when other directives
   * remain; {@code directives} then holds all of them, cleanup ones included, as in C. PRRTE acts
   * on {@code pmix.jctrl.kill}, {@code pmix.jctrl.sig} and {@code pmix.jctrl.term} (without
   * targets) and answers anything else NOT_SUPPORTED.
   *
   * @param requester the client or tool that asked
   * @param targets the processes to act on; empty means the requester's job or, for directives
   *     that are declarations (e.g. {@code pmix.jctrl.preempt}), nothing in particular
   * @param directives what to do
   * @return the results, if any, sent to the requester after SUCCESS
   */
  default CompletionStage<List<Info>> jobControl(
      Proc requester, List<Proc> targets, List<Info> directives) {
    return notSupported();
  }

  /**
   * A client asked for a monitor the server does not run itself ({@code PMIx_Process_monitor}):
   * OpenPMIx's {@code monitor}. The server runs heartbeat monitors ({@code pmix.monitor.mbeat})
   * itself and never passes them here.
   *
   * @param requester the client to be monitored
   * @param monitor what to monitor (e.g. {@code pmix.monitor.fmon}, a file)
   * @param error the event to raise when the monitor trips
   * @param directives how
   * @return the results, if any, sent to the requester after SUCCESS
   */
  default CompletionStage<List<Info>> monitor(
      Proc requester, Info monitor, Status error, List<Info> directives) {
    return notSupported();
  }

  /**
   * Every local participant of a {@code PMIx_Connect} has arrived and some participants live
   * elsewhere (or in a namespace this server does not know): run the cross-node part, completing
   * once every participant has connected. When all participants are local the server completes
   * the operation itself and never calls this, as OpenPMIx 4.2.2 does. A failure (including the
   * default {@code NOT_SUPPORTED}) is the status every local caller gets.
   *
   * @param procs the participants, sorted (namespace, then rank)
   * @param info the first caller's directives plus {@code pmix.sorted.parr} (true) and {@code
   *     pmix.loc.col.st} (STATUS: the local collective status, not success once a local
   *     participant died before it arrived)
   */
  default CompletionStage<Void> connect(List<Proc> procs, List<Info> info) {
    return notSupported();
  }

  /**
   * The {@code PMIx_Disconnect} counterpart of {@link #connect}, with the same arguments and
   * rules.
   */
  default CompletionStage<Void> disconnect(List<Proc> procs, List<Info> info) {
    return notSupported();
  }

  /**
   * Every local member of a {@code PMIx_Group_construct} has arrived and the group needs the host
   * (OpenPMIx's {@code group} upcall with {@code PMIX_GROUP_CONSTRUCT}): a context id was asked
   * for ({@code pmix.grp.actxid}), which only the host can make unique across its servers, or
   * some members live elsewhere (or in a namespace this server does not know), whose arrival only
   * the host can wait for. A group of local members only that asks for no context id is
   * completed by the server without calling this. A failure (including the default {@code
   * NOT_SUPPORTED}) is the status every local member gets.
   *
   * @param groupId the group's name
   * @param procs the members, sorted (namespace, then rank)
   * @param info every local caller's directives, then {@code pmix.sorted.parr} (true) and {@code
   *     pmix.loc.col.st} (STATUS), as for {@link #connect}
   * @return the results: {@code pmix.grp.ctxid} (SIZE) when a context id was asked for, and
   *     optionally {@code pmix.grp.mbrs} (DATA_ARRAY of PROC), the final membership, if it is not
   *     {@code procs}
   */
  default CompletionStage<List<Info>> groupConstruct(
      String groupId, List<Proc> procs, List<Info> info) {
    return notSupported();
  }

  /**
   * Every local member of a {@code PMIx_Group_destruct} has arrived and some members live
   * elsewhere: release the group across the host's servers ({@code group} with {@code
   * PMIX_GROUP_DESTRUCT}). A group of local members only is destructed by the server alone.
   *
   * @param groupId the group's name
   * @param members the members, sorted
   * @param info the local callers' directives and {@code pmix.loc.col.st}
   */
  default CompletionStage<Void> groupDestruct(
      String groupId, List<Proc> members, List<Info> info) {
    return notSupported();
  }

  /**
   * A tool or launcher is connecting (connect flags 3 to 8, OpenPMIx's {@code tool_connected}):
   * decide whether it may, and under which identity. Called only when the server supports tools
   * ({@link ServerOptions#acceptsTools}) and after its credentials were checked; the tool waits
   * for the answer.
   *
   * <p>{@code info} holds, in this order: the infos the tool sent with its request when they
   * could be decoded (a 4.2.2 tool sends {@code pmix.ppid}, {@code pmix.cmd.line} and the
   * {@code PMIx_tool_init} attributes it did not use, such as {@code pmix.tool.launcher}); {@code
   * pmix.version} (STRING, the tool's PMIx version); {@code pmix.euid} and {@code pmix.egid}
   * (UINT32, verified); and, when the tool brought an identity of its own ({@code
   * PMIX_TOOL_NSPACE}/{@code PMIX_TOOL_RANK}, or {@code PMIX_NAMESPACE}/{@code PMIX_RANK} in its
   * environment), {@code pmix.nspace} (STRING) and {@code pmix.rank} (PROC_RANK).
   *
   * <p>Complete with the tool's identity: for a tool without one, the identity it will use (a
   * namespace of its own, normally rank 0); for one with an identity, normally that identity. A
   * namespace the host registered with {@link PMIxServer#registerNspace} may only be used for a
   * rank registered with {@link PMIxServer#registerClient} (a launcher's child), which the tool
   * then serves like a client. Fail the stage (any status) to refuse the tool: the server closes
   * the connection, the only refusal a 4.2.2 tool understands.
   *
   * <p>The default ({@code NOT_SUPPORTED}) lets the server decide: it accepts tools of its own
   * user (and root), keeps a given identity, and gives a tool without one the namespace {@code
   * <server nspace>-tool-<n>}, rank 0.
   *
   * @return the identity the tool is to use
   */
  default CompletionStage<Proc> toolConnected(List<Info> info) {
    return notSupported();
  }
}
