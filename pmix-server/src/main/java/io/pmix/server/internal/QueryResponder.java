package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import com.google.common.base.Splitter;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Key;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.common.internal.message.QueryRequest;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.RankInfo;
import io.pmix.server.internal.lifecycle.Registry;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Answers QUERY (docs/commands.md §3.9) from what the server knows, and hands the rest to the
 * host's {@link HostModule#query}. Reads the {@link Registry}, never changes it; progress thread
 * only.
 *
 * <p>Answered here (each as one info keyed by the query key, the layout PRRTE uses):
 *
 * <ul>
 *   <li>{@code pmix.qry.ns}: the registered namespaces, comma-separated (what {@code pps} prints);
 *   <li>{@code pmix.qry.nsinfo}: per registered namespace a {@code pmix.job.arr} with {@code
 *       pmix.nspace}, {@code pmix.cmd.line} (when known), {@code pmix.job.size} and per rank a
 *       {@code pmix.pdata} array of {@code pmix.rank}, {@code pmix.hname}, {@code pmix.lrank};
 *   <li>{@code pmix.job.size}, {@code pmix.qry.ptable} and {@code pmix.qry.lptable} for the
 *       namespace named by a {@code pmix.nspace} or {@code pmix.procid} qualifier (default: the
 *       requester's own): the job size, and {@code pmix_proc_info_t} per rank (process, host,
 *       executable and pid as the host gave them with {@code PMIxServer.setProcInfo}, state);
 *   <li>{@code pmix.qry.attrs} with {@code pmix.host.attrs}, {@code pmix.host.fns}, {@code
 *       pmix.srvr.attrs}, {@code pmix.srvr.fns} qualifiers (what {@code pattrs --host} asks);
 *   <li>{@code pmix.qry.keys}: the keys above;
 *   <li>{@code pmix.qry.spawn} and {@code pmix.qry.debug} as empty lists when the host cannot
 *       spawn at all.
 * </ul>
 *
 * <p>Everything else (and a namespace the server does not know) goes to the host, in one upcall
 * carrying the unanswered keys of each query. The reply holds the server's answers and the
 * host's. When the host fails but the server answered something, the reply is a success with what
 * the server had: a 4.2.2 client drops every info of a reply whose status is not success, so a
 * partial status would lose the answers. When nothing was answered the host's status is the
 * reply (or {@code NOT_FOUND} when nothing was asked of the host).
 */
final class QueryResponder {
  private static final Splitter COMMA = Splitter.on(',').trimResults().omitEmptyStrings();

  // PMIx proc states (pmix_common.h).
  static final int STATE_UNDEF = 0;
  static final int STATE_RUNNING = 5;
  static final int STATE_CONNECTED = 6;
  static final int STATE_TERMINATED = 20;

  private static final String QUERY_ATTRS = Keys.QUERY_ATTRIBUTE_SUPPORT.name();
  private static final List<String> LOCAL_KEYS =
      List.of(
          Keys.QUERY_NAMESPACES.name(),
          Keys.QUERY_NAMESPACE_INFO.name(),
          Keys.JOB_SIZE.name(),
          Keys.QUERY_PROC_TABLE.name(),
          Keys.QUERY_LOCAL_PROC_TABLE.name(),
          QUERY_ATTRS,
          Keys.QUERY_SUPPORTED_KEYS.name());

  /** What the host gave for one local process. */
  record ProcDetails(int pid, @Nullable String executable) {}

  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final ServerOptions options;
  private final Map<Proc, ProcDetails> details = new HashMap<>();
  /** Attributes the host registered per function, replacing the defaults for that function. */
  private final Map<String, List<Value.RegAttr>> registered = new LinkedHashMap<>();

  QueryResponder(Registry registry, HostModule host, HostCalls hostCalls, ServerOptions options) {
    this.registry = requireNonNull(registry, "registry");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.options = requireNonNull(options, "options");
  }

  /** Records the pid and executable of a registered local process. */
  Status setProcInfo(Proc proc, int pid, @Nullable String executable) {
    Namespace ns = registry.namespace(proc.nspace());
    if (ns == null || !ns.hasRank(proc.rank())) {
      return Status.ERR_NOT_FOUND;
    }
    // Forget processes of namespaces that are gone, so the map cannot grow without bound.
    details.keySet().removeIf(p -> !registry.hasNamespace(p.nspace()));
    details.put(proc, new ProcDetails(pid, executable));
    return Status.SUCCESS;
  }

  /** Sets the host attributes reported for {@code function} (empty: report none). */
  void registerAttributes(String function, List<Value.RegAttr> attrs) {
    registered.put(function, List.copyOf(attrs));
  }

  // ============================================================================================

  /** QUERY: each query's keys answered here where the server knows them, the rest by the host. */
  void handleQuery(Peer peer, int tag, QueryRequest q) {
    List<Info> answers = new ArrayList<>();
    List<Value.Query> forward = new ArrayList<>();
    for (Value.Query query : q.queries()) {
      List<String> unanswered = new ArrayList<>();
      for (String key : query.keys()) {
        Optional<List<Info>> a = local(peer, key, query.qualifiers());
        if (a.isPresent()) {
          answers.addAll(a.get());
        } else {
          unanswered.add(key);
        }
      }
      if (!unanswered.isEmpty()) {
        forward.add(new Value.Query(unanswered, query.qualifiers()));
      }
    }
    if (forward.isEmpty()) {
      reply(peer, tag, answers.isEmpty() ? Status.ERR_NOT_FOUND : Status.SUCCESS, answers);
      return;
    }
    List<Value.Query> hostQueries = List.copyOf(forward);
    hostCalls.call(
        () -> host.query(peer.proc(), hostQueries),
        (info, failure) -> {
          if (failure == null) {
            List<Info> all = new ArrayList<>(answers);
            if (info != null) {
              all.addAll(info);
            }
            reply(peer, tag, Status.SUCCESS, all);
          } else if (!answers.isEmpty()) {
            reply(peer, tag, Status.SUCCESS, answers);
          } else {
            reply(peer, tag, failure, List.of());
          }
        });
  }

  /** A {@link QueryReply}: the answers follow a success only, as 4.2.2 sends them. */
  private static void reply(Peer peer, int tag, Status status, List<Info> info) {
    Status s = Replies.clientStatus(status);
    List<Info> answer = List.copyOf(info);
    Replies.send(peer, tag, () -> new QueryReply(s, s.isSuccess() ? answer : List.of()));
  }

  /** The server's answer to one key, or empty when the host must answer it. */
  Optional<List<Info>> local(Peer requester, String key, List<Info> qualifiers) {
    if (key.equals(Keys.QUERY_NAMESPACES.name())) {
      StringBuilder b = new StringBuilder();
      for (Namespace ns : jobNamespaces()) {
        b.append(b.length() == 0 ? "" : ",").append(ns.name());
      }
      return Optional.of(List.of(Info.of(key, Value.of(b.toString()))));
    }
    if (key.equals(Keys.QUERY_NAMESPACE_INFO.name())) {
      return namespaceInfo(key, qualifiers);
    }
    if (key.equals(Keys.JOB_SIZE.name())) {
      return target(requester, qualifiers)
          .map(ns -> List.of(Info.of(key, Value.uint32(jobSize(ns)))));
    }
    if (key.equals(Keys.QUERY_PROC_TABLE.name())
        || key.equals(Keys.QUERY_LOCAL_PROC_TABLE.name())) {
      boolean localOnly = key.equals(Keys.QUERY_LOCAL_PROC_TABLE.name());
      return target(requester, qualifiers)
          .map(
              ns ->
                  List.of(
                      Info.of(key, DataArray.of(DataType.PROC_INFO, procTable(ns, localOnly)))));
    }
    if (key.equals(QUERY_ATTRS)) {
      return Optional.of(attributeSupport(qualifiers));
    }
    if (key.equals(Keys.QUERY_SUPPORTED_KEYS.name())) {
      return Optional.of(List.of(Info.of(key, Value.of(String.join(",", LOCAL_KEYS)))));
    }
    if ((key.equals(Keys.QUERY_SPAWN_SUPPORT.name())
            || key.equals(Keys.QUERY_DEBUG_SUPPORT.name()))
        && !implemented("spawn")) {
      return Optional.of(List.of(Info.of(key, Value.of(""))));
    }
    return Optional.empty();
  }

  /** Registered namespaces (jobs), in registration order; tools' namespaces are not jobs. */
  private List<Namespace> jobNamespaces() {
    List<Namespace> out = new ArrayList<>();
    for (Namespace ns : registry.namespaces()) {
      if (ns.registered()) {
        out.add(ns);
      }
    }
    return out;
  }

  /** The namespace a qualifier names, else the requester's; empty if it is not a known job. */
  private Optional<Namespace> target(Peer requester, List<Info> qualifiers) {
    String name = requester.ns().name();
    for (Info q : qualifiers) {
      if (q.key().equals(Keys.NSPACE.name()) && q.value() instanceof Value.Str s) {
        name = s.value();
      } else if (q.key().equals(Keys.PROCID.name()) && q.value() instanceof Proc p) {
        name = p.nspace();
      }
    }
    Namespace ns = name == null ? null : registry.namespace(name);
    return ns != null && ns.registered() ? Optional.of(ns) : Optional.empty();
  }

  private long jobSize(Namespace ns) {
    return Integer.toUnsignedLong(ns.jobData(options.hostname()).nprocs);
  }

  private Optional<List<Info>> namespaceInfo(String key, List<Info> qualifiers) {
    String only = null;
    for (Info q : qualifiers) {
      if (q.key().equals(Keys.NSPACE.name()) && q.value() instanceof Value.Str s) {
        only = s.value();
      }
    }
    List<Info> jobs = new ArrayList<>();
    for (Namespace ns : jobNamespaces()) {
      if (only != null && !only.equals(ns.name())) {
        continue;
      }
      JobData jd = ns.jobData(options.hostname());
      List<Info> job = new ArrayList<>();
      job.add(Info.of(Keys.NSPACE, Value.of(ns.name())));
      Value argv = firstAppArgv(jd);
      if (argv != null) {
        job.add(Info.of(Keys.CMD_LINE, argv));
      }
      job.add(Info.of(Keys.JOB_SIZE, Value.uint32(Integer.toUnsignedLong(jd.nprocs))));
      for (int r : ranksOf(ns, jd, false)) {
        List<Info> proc = new ArrayList<>();
        proc.add(Info.of(Keys.RANK, Value.rank(r)));
        String hn = hostnameOf(ns, jd, r);
        if (hn != null) {
          proc.add(Info.of(Keys.HOSTNAME, Value.of(hn)));
        }
        Value lrank = rankValue(jd, r, Keys.LOCAL_RANK);
        if (lrank != null) {
          proc.add(Info.of(Keys.LOCAL_RANK, lrank));
        }
        job.add(Info.of(Keys.PROC_INFO_ARRAY, DataArray.ofInfos(proc)));
      }
      jobs.add(Info.of(Keys.JOB_INFO_ARRAY, DataArray.ofInfos(job)));
    }
    if (only != null && jobs.isEmpty()) {
      return Optional.empty(); // not ours: perhaps the host knows it
    }
    return Optional.of(List.of(Info.of(key, DataArray.ofInfos(jobs))));
  }

  private static @Nullable Value firstAppArgv(JobData jd) {
    for (Value.KVal kv : jd.realmArrays) {
      if (Keys.APP_INFO_ARRAY.name().equals(kv.key()) && kv.value() instanceof DataArray a) {
        for (Value v : a.items()) {
          if (v instanceof Info i && i.key().equals(Keys.APP_ARGV.name())) {
            return i.value();
          }
        }
      }
    }
    return null;
  }

  /** Every rank of the job (or only the local ones), unsigned order. */
  private static List<Integer> ranksOf(Namespace ns, JobData jd, boolean localOnly) {
    TreeSet<Integer> ranks = new TreeSet<>(Integer::compareUnsigned);
    ranks.addAll(ns.rankNumbers());
    if (!localOnly) {
      for (int r = 0; r < jd.nprocs; r++) {
        ranks.add(r);
      }
    }
    return new ArrayList<>(ranks);
  }

  private @Nullable String hostnameOf(Namespace ns, JobData jd, int rank) {
    Value v = rankValue(jd, rank, Keys.HOSTNAME);
    if (v instanceof Value.Str s && s.value() != null) {
      return s.value();
    }
    return ns.hasRank(rank) ? options.hostname() : null;
  }

  private static @Nullable Value rankValue(JobData jd, int rank, Key key) {
    List<Value.KVal> kvs = jd.perRank.get(rank);
    if (kvs != null) {
      for (Value.KVal kv : kvs) {
        if (key.name().equals(kv.key())) {
          return kv.value();
        }
      }
    }
    return null;
  }

  private List<Value> procTable(Namespace ns, boolean localOnly) {
    JobData jd = ns.jobData(options.hostname());
    List<Value> out = new ArrayList<>();
    for (int r : ranksOf(ns, jd, localOnly)) {
      Proc proc = Proc.of(ns.name(), r);
      RankInfo info = ns.rank(r);
      ProcDetails d = info == null ? null : details.get(proc);
      out.add(
          new Value.ProcInfo(
              proc,
              hostnameOf(ns, jd, r),
              d == null ? null : d.executable(),
              d == null ? 0 : d.pid(),
              0,
              state(info, d)));
    }
    return out;
  }

  /** What the server can tell of a process: connected, running, gone, or unknown. */
  private int state(@Nullable RankInfo info, @Nullable ProcDetails d) {
    if (info == null) {
      return STATE_UNDEF; // another node's process: the host would know
    }
    Peer p = info.peerIndex() >= 0 ? registry.peerAt(info.peerIndex()) : null;
    if (p != null && !p.closed() && p.info() == info) {
      return STATE_CONNECTED;
    }
    if (d != null && d.pid() > 0) {
      boolean alive = ProcessHandle.of(d.pid()).map(ProcessHandle::isAlive).orElse(false);
      return alive ? STATE_RUNNING : STATE_TERMINATED;
    }
    if (p != null && p.state() == ServerSnapshot.PeerState.TOMBSTONE) {
      return STATE_TERMINATED;
    }
    return STATE_UNDEF;
  }

  // ============================================================================================
  // Attribute support (pattrs --host / --host-fns)
  // ============================================================================================

  private List<Info> attributeSupport(List<Info> qualifiers) {
    List<Info> top = new ArrayList<>();
    for (Info q : qualifiers) {
      String k = q.key();
      if (k.equals(Keys.HOST_FUNCTIONS.name())) {
        top.add(Info.of(k, Value.of(String.join(",", hostFunctions()))));
      } else if (k.equals(Keys.SERVER_FUNCTIONS.name())) {
        top.add(Info.of(k, Value.of(String.join(",", Attributes.SERVER_FUNCTIONS.keySet()))));
      } else if (k.equals(Keys.HOST_ATTRIBUTES.name()) && q.value() instanceof Value.Str s) {
        top.addAll(selected(hostAttributes(), s.value()));
      } else if (k.equals(Keys.SERVER_ATTRIBUTES.name()) && q.value() instanceof Value.Str s) {
        top.addAll(selected(Attributes.SERVER_FUNCTIONS, s.value()));
      }
    }
    return top;
  }

  /**
   * The functions asked for ("all" or a comma list) that have attributes, each as its own {@code
   * pmix.qry.attrs} info holding one info keyed by the function whose value is its attribute
   * registrations.
   *
   * <p>Two departures from what a C server library builds (one {@code pmix.qry.attrs} info
   * holding every function), both for the 4.2.2 {@code pattrs}, the tool that asks: it prints
   * every function of one info with as many attributes as the first function has, so a second,
   * longer list would be cut short and a shorter one read past its end; one function per info
   * prints each whole. And every C library decodes a REGATTR's type as a zigzag varint though it
   * encodes it plain (docs/codec.md §7, item 1), so C tools see the right type only when it is
   * sent zigzag-encoded: it is, here. A Java reader must undo it ({@link #wireType}).
   */
  private static List<Info> selected(Map<String, List<Value.RegAttr>> table, @Nullable String which) {
    List<String> wanted = which == null ? List.of() : COMMA.splitToList(which);
    boolean all = wanted.contains("all");
    List<Info> out = new ArrayList<>();
    for (Map.Entry<String, List<Value.RegAttr>> e : table.entrySet()) {
      if (e.getValue().isEmpty() || !(all || wanted.contains(e.getKey()))) {
        continue;
      }
      List<Value> regs = new ArrayList<>();
      for (Value.RegAttr a : e.getValue()) {
        regs.add(new Value.RegAttr(a.name(), a.string(), wireType(a.dataType()), a.description()));
      }
      Info fn = Info.of(e.getKey(), DataArray.of(DataType.REGATTR, regs));
      out.add(Info.of(QUERY_ATTRS, DataArray.ofInfos(List.of(fn))));
    }
    return out;
  }

  /**
   * A REGATTR type code as C readers decode it: the zigzag form of the code ({@code 2 * code} for
   * every real type), which a C library's sv16 decoding turns back into the code.
   */
  static int wireType(int code) {
    return (code << 1) & 0xffff;
  }

  /** The client API functions this server and its host serve. */
  private List<String> hostFunctions() {
    List<String> out = new ArrayList<>(Attributes.ALWAYS_SERVED);
    Attributes.HOST_DEPENDENT.forEach(
        (method, fns) -> {
          if (implemented(method)) {
            out.addAll(fns);
          }
        });
    for (String f : registered.keySet()) {
      if (!out.contains(f)) {
        out.add(f);
      }
    }
    return out;
  }

  private Map<String, List<Value.RegAttr>> hostAttributes() {
    Map<String, List<Value.RegAttr>> table = new LinkedHashMap<>();
    for (String fn : hostFunctions()) {
      List<Value.RegAttr> a = Attributes.HOST_DEFAULTS.get(fn);
      if (a != null) {
        table.put(fn, a);
      }
    }
    table.putAll(registered);
    return table;
  }

  /** Whether the host overrides the {@link HostModule} default {@code method}. */
  boolean implemented(String method) {
    for (Method m : host.getClass().getMethods()) {
      if (m.getName().equals(method) && m.getDeclaringClass() != HostModule.class) {
        return true;
      }
    }
    return false;
  }
}
