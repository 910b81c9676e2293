package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A connector's local copy of everything it may be asked for (the "peer store"): the job data the
 * server sent at init (and with later replies, for other namespaces), the data of peers fetched by
 * earlier gets, and this process's own puts. It decides, as OpenPMIx 4.2.2's hash store does
 * (docs/commands.md §6.1 and §6.3), whether a get can be answered here, must fail here, or needs the server.
 *
 * <p>Not thread-safe: owned by one connector session and touched only on its progress thread.
 */
public final class DataStore {
  /** Keys of the node realm (pmix_globals.h of 4.2.2), besides the {@code pmix.fab*} keys. */
  static final Set<String> NODE_KEYS =
      Set.of(
          "pmix.hname",
          "pmix.alias",
          "pmix.nodeid",
          "pmix.pmem",
          "pmix.lpeers",
          "pmix.lprocs",
          "pmix.lcpus",
          "pmix.local.size",
          "pmix.node.size",
          "pmix.lldr",
          "pmix.ndosub");

  /** Keys of the app realm. */
  static final Set<String> APP_KEYS =
      Set.of(
          "pmix.app.size",
          "pmix.aldr",
          "pmix.app.argv",
          "pmix.wdir",
          "pmix.pset.nm",
          "pmix.pset.mems",
          "pmix.apmap.type",
          "pmix.apmap.regex");

  /** Keys of the session realm. */
  static final Set<String> SESSION_KEYS =
      Set.of(
          "pmix.session.id",
          "pmix.clid",
          "pmix.univ.size",
          "pmix.tmpdir",
          "pmix.tdir.rmclean",
          "pmix.fqdn",
          "pmix.rm.name",
          "pmix.rm.version");

  private static final String HNAME = "pmix.hname";
  private static final String NODEID = "pmix.nodeid";
  private static final String APPNUM = "pmix.appnum";
  private static final String SESSION_ID = "pmix.session.id";

  /** The outcome of a local lookup. */
  public sealed interface Lookup {
    /** The value is here. */
    record Found(Value value) implements Lookup {}

    /** The value is not here and the server would not know better: NOT_FOUND without a message. */
    record Absent() implements Lookup {}

    /** The value is not here; the server may have it. */
    record Miss() implements Lookup {}
  }

  private static final Lookup ABSENT = new Lookup.Absent();
  private static final Lookup MISS = new Lookup.Miss();

  /** Job data of one namespace. */
  static final class Namespace {
    final Map<String, Value> job = new LinkedHashMap<>();
    final Map<Integer, Map<String, Value>> ranks = new HashMap<>();
    final List<Map<String, Value>> sessions = new ArrayList<>();
    final List<Map<String, Value>> nodes = new ArrayList<>();
    final List<Map<String, Value>> apps = new ArrayList<>();

    Map<String, Value> rank(int r) {
      // Not computeIfAbsent with a lambda: a first init runs this (docs/architecture.md, "First
      // requests").
      Map<String, Value> m = ranks.get(r);
      if (m == null) {
        m = new LinkedHashMap<>();
        ranks.put(r, m);
      }
      return m;
    }
  }

  private final Proc me;
  private final String hostname;
  private final WireFormat format;
  private final Map<String, Namespace> namespaces = new HashMap<>();
  private final Map<Proc, Map<String, Value>> peers = new HashMap<>();

  /**
   * The last GETNB blob stored for each peer rank. A server answers a direct modex with all of a
   * rank's data, its earlier commits first, so a later blob usually begins with the previous one:
   * only what follows it is read again (the store's values for the rank are those of the
   * previous blob and nothing else writes them, so reading the same prefix again changes
   * nothing). A client that gets a fresh key after each fence would otherwise decode every key
   * the rank ever committed at each get (docs/architecture.md, "Direct modex").
   */
  private final Map<Proc, Blob> lastBlob = new HashMap<>();

  /**
   * A rank's last blob: its first {@code length} bytes, in an array with room to grow, so that a
   * blob that extends it is stored by copying what is new only.
   */
  private static final class Blob {
    byte[] bytes;
    int length;

    Blob(WireBuffer from, int length) {
      this.bytes = new byte[length];
      this.length = length;
      from.getBytes(0, bytes, 0, length);
    }

    /** Appends {@code from}'s bytes after {@link #length}, up to {@code end}. */
    void extendTo(WireBuffer from, int end) {
      if (end > bytes.length) {
        long room = Math.max(end, 2L * length);
        bytes = Arrays.copyOf(bytes, (int) Math.min(Integer.MAX_VALUE - 8, room));
      }
      from.getBytes(length, bytes, length, end - length);
      length = end;
    }
  }

  /**
   * Answers for gets of this process's namespace (rank WILDCARD, no directives), by key, computed
   * on the progress thread from the job data and read on any thread: a get of job information
   * then needs no hand-off (docs/architecture.md, "Job-level gets"). Immutable; empty while not
   * published, and dropped at any write of the namespace's data.
   */
  private volatile Map<String, Value> ownJobAnswers = Map.of();

  /**
   * Answers already given on the progress thread to gets of another process's key without
   * directives, by process and key, for {@link #peerAnswer} on any thread: a get asked again then
   * needs no hand-off (docs/architecture.md, "Job-level gets"). Each is what {@link #lookup}
   * answered (compressed strings expanded), and is dropped when what that lookup read may change:
   * at a write of the process's own data or of its namespace's job data (of this process's
   * namespace: all of them). Written on the progress thread only.
   */
  private final ConcurrentHashMap<Proc, ConcurrentHashMap<String, Value>> peerAnswers =
      new ConcurrentHashMap<>();
  private final Map<String, Value> own = new LinkedHashMap<>();

  /**
   * An empty store for process {@code me} on node {@code hostname}, reading nested blobs in
   * {@code format}.
   */
  public DataStore(Proc me, String hostname, WireFormat format) {
    this.me = requireNonNull(me, "me");
    this.hostname = requireNonNull(hostname, "hostname");
    this.format = requireNonNull(format, "format");
  }

  /** This process. */
  public Proc me() {
    return me;
  }

  /** Whether job data for this namespace has arrived. */
  public boolean knowsNamespace(String nspace) {
    return namespaces.containsKey(nspace);
  }

  /** How many namespaces, peers and own values are held (for teardown checks). */
  public int size() {
    return namespaces.size() + peers.size() + own.size() + lastBlob.size() + peerAnswers.size();
  }

  /** Forgets everything (the last finalize). */
  public void clear() {
    ownJobAnswers = Map.of();
    peerAnswers.clear();
    namespaces.clear();
    peers.clear();
    lastBlob.clear();
    own.clear();
  }

  /**
   * Drops everything held for another namespace: its job data and its processes' data. What C's
   * disconnect does (PMIX_GDS_DEL_NSPACE) for each namespace it disconnects from; this process's
   * own namespace is never dropped.
   */
  public void forgetNamespace(String nspace) {
    if (nspace.equals(me.nspace())) {
      return;
    }
    dropPeerAnswers(nspace);
    namespaces.remove(nspace);
    peers.keySet().removeIf(p -> p.nspace().equals(nspace));
    lastBlob.keySet().removeIf(p -> p.nspace().equals(nspace));
  }

  /** Records one of this process's own values (every scope; reserved keys included). */
  public void putOwn(String key, Value value) {
    own.put(key, value);
  }

  // ---------------------------------------------------------------------------------------------
  // Ingestion

  /**
   * Reads a job-data stream for {@code nspace}: KVAL units until the reader is exhausted (the REQ
   * reply after its nspace string, a job-level GETNB blob, ...).
   *
   * @throws PmixException if the bytes do not decode
   */
  public void ingestJobData(String nspace, PmixReader kvals) {
    Namespace ns = namespace(nspace);
    while (kvals.hasRemaining()) {
      ingest(ns, (Value.KVal) kvals.unpackOne(DataType.KVAL));
    }
  }

  /**
   * Reads job-level records of {@code nspace} as a shared-memory store holds them (rank
   * WILDCARD, in stored order): the same keys as a job-data stream, so the same rules apply
   * ({@code pmix.pdata} arrays become rank data, info arrays realms, the rest job-level values).
   */
  public void ingestJobRecords(String nspace, List<Info> records) {
    Namespace ns = namespace(nspace);
    for (Info i : records) {
      ingest(ns, new Value.KVal(i.key(), i.value()));
    }
  }

  /**
   * Whether rank-level job data of {@code proc} (a rank) is here: from the job data, or from
   * {@link #ingestRankData}, even if that found none.
   */
  public boolean hasRankData(Proc proc) {
    Namespace ns = namespaces.get(proc.nspace());
    return ns != null && ns.ranks.containsKey(proc.rank());
  }

  /**
   * Keeps the reserved keys of {@code records}, what a shared-memory store holds for the rank
   * {@code proc}, as its rank-level job data; its other keys are modex data, read afresh from the
   * store at each get. Afterwards {@link #hasRankData} is true for {@code proc}.
   */
  public void ingestRankData(Proc proc, List<Info> records) {
    Map<String, Value> m = namespace(proc.nspace()).rank(proc.rank());
    for (Info i : records) {
      if (isReserved(i.key())) {
        m.putIfAbsent(i.key(), i.value());
      }
    }
  }

  /**
   * The namespace's data, made if absent, for writing: every write of job data goes through here,
   * so that the answers published for other threads ({@link #publishOwnJobAnswers}) are dropped
   * before this process's namespace changes.
   */
  Namespace namespace(String nspace) {
    if (nspace.equals(me.nspace())) {
      ownJobAnswers = Map.of();
    }
    dropPeerAnswers(nspace);
    Namespace ns = namespaces.get(nspace);
    if (ns == null) {
      ns = new Namespace();
      namespaces.put(nspace, ns);
    }
    return ns;
  }

  /**
   * Computes, here on the progress thread, what {@link #lookup} answers for every key of this
   * process's namespace asked of rank WILDCARD without directives (compressed strings expanded, as
   * a get returns them), and publishes it for {@link #ownJobAnswer}. The answers hold until the
   * namespace's data is next written ({@link #namespace}) or the store is cleared.
   */
  public void publishOwnJobAnswers() {
    Namespace ns = namespaces.get(me.nspace());
    if (ns == null) {
      return;
    }
    Proc wildcard = Proc.wildcard(me.nspace());
    Set<String> asked = new HashSet<>();
    Map<String, Value> answers = new HashMap<>();
    answerAll(ns.job, wildcard, asked, answers);
    for (List<Map<String, Value>> realm : List.of(ns.nodes, ns.apps, ns.sessions)) {
      for (Map<String, Value> m : realm) {
        answerAll(m, wildcard, asked, answers);
      }
    }
    // Not copied: never changed after this, and the volatile write publishes it whole (a copy
    // was a tenth of the work, at every init).
    ownJobAnswers = Collections.unmodifiableMap(answers);
  }

  /** Looks up each key of {@code m} not {@code asked} yet, as a get of {@code wildcard} would. */
  private void answerAll(
      Map<String, Value> m, Proc wildcard, Set<String> asked, Map<String, Value> answers) {
    for (String key : m.keySet()) {
      if (asked.add(key) && lookup(wildcard, key, List.of()) instanceof Lookup.Found found) {
        try {
          answers.put(key, CompressedStrings.expand(found.value()));
        } catch (PmixException e) {
          // A get through the progress thread reports it.
        }
      }
    }
  }

  /**
   * What a get of {@code key} of {@code proc} without directives answered last on the progress
   * thread, if no peer or job data has been written since; null otherwise (the get then goes the
   * usual way). Safe on any thread.
   */
  public @Nullable Value peerAnswer(Proc proc, String key) {
    Map<String, Value> m = peerAnswers.get(proc);
    return m == null ? null : m.get(key);
  }

  /**
   * Drops the answers kept for the processes of {@code nspace}, whose job data changes; all of
   * them when it is this process's namespace, whose own rank and node data every lookup may read.
   */
  private void dropPeerAnswers(String nspace) {
    if (peerAnswers.isEmpty()) {
      return;
    }
    if (nspace.equals(me.nspace())) {
      peerAnswers.clear();
      return;
    }
    for (Iterator<Proc> it = peerAnswers.keySet().iterator(); it.hasNext(); ) {
      if (it.next().nspace().equals(nspace)) {
        it.remove();
      }
    }
  }

  /**
   * Keeps {@code answer}, what a get of {@code key} of {@code proc} without directives is being
   * given, for {@link #peerAnswer}: only for another process than this one, whose own values
   * change without a write here. Progress thread only.
   */
  void rememberPeerAnswer(Proc proc, String key, Value answer) {
    if (proc.isSpecialRank() || proc.equals(me)) {
      return;
    }
    ConcurrentHashMap<String, Value> m = peerAnswers.get(proc);
    if (m == null) {
      m = new ConcurrentHashMap<>();
      peerAnswers.put(proc, m);
    }
    m.put(key, answer);
  }

  /**
   * What a get of {@code key} of this process's namespace, rank WILDCARD, without directives
   * answers, if published and still valid; null otherwise (the get then goes the usual way). Safe
   * on any thread.
   */
  public @Nullable Value ownJobAnswer(String key) {
    return ownJobAnswers.get(key);
  }

  private void ingest(Namespace ns, Value.KVal kv) {
    String key = kv.key();
    if (key == null) {
      return;
    }
    Value v = kv.value();
    switch (key) {
      case "pmix.pblob" -> ingestProcBlob(ns, v.asBytes());
      case "pmix.ssn.arr" -> ns.sessions.add(realm(v));
      case "pmix.node.arr" -> ns.nodes.add(realm(v));
      case "pmix.app.arr" -> ns.apps.add(realm(v));
      case "pmix.pdata" -> ingestProcArray(ns, v);
      case "pmix.mblob" -> {
        // Legacy map blob of pre-3.0 servers; every server we speak to sends pblobs instead.
      }
      case "pmix.qual.val" -> {
        List<Info> q = infos(v);
        if (!q.isEmpty()) {
          ns.job.putIfAbsent(q.get(0).key(), q.get(0).value());
        }
      }
      // Loose keys: realm keys are also searched here as a fallback (see lookup), so they can
      // stay with the job-level values.
      default -> ns.job.put(key, v);
    }
  }

  private void ingestProcBlob(Namespace ns, byte[] blob) {
    PmixReader r = new PmixReader(WireBuffer.wrap(blob), format);
    int rank = r.unpackRank();
    Map<String, Value> m = ns.rank(rank);
    while (r.hasRemaining()) {
      Value.KVal kv = (Value.KVal) r.unpackOne(DataType.KVAL);
      if (kv.key() != null) {
        m.put(kv.key(), kv.value());
      }
    }
  }

  private static void ingestProcArray(Namespace ns, Value v) {
    List<Info> entries = infos(v);
    if (entries.isEmpty() || !entries.get(0).key().equals("pmix.rank")) {
      return;
    }
    Map<String, Value> m = ns.rank(entries.get(0).value().asInt());
    for (Info i : entries.subList(1, entries.size())) {
      m.put(i.key(), i.value());
    }
  }

  /** An info array as a key map; its identifying first entry stays in it, so it can be got. */
  private static Map<String, Value> realm(Value v) {
    Map<String, Value> m = new LinkedHashMap<>();
    for (Info i : infos(v)) {
      m.put(i.key(), i.value());
    }
    return m;
  }

  private static List<Info> infos(Value v) {
    List<Info> out = new ArrayList<>();
    if (v instanceof DataArray a) {
      for (Value e : a.items()) {
        if (e instanceof Info i) {
          out.add(i);
        }
      }
    }
    return out;
  }

  /**
   * Stores one blob of a GETNB reply: a PROC unit, then KVAL units. Rank WILDCARD is job-level
   * data of that namespace; rank UNDEF means "the proc you asked about" ({@code target}).
   */
  public void ingestGetBlob(byte[] blob, Proc target) {
    ingestGetBlob(WireBuffer.wrap(blob), target);
  }

  /**
   * Stores one blob of a GETNB reply from a view of its bytes (its indices from 0 to its writer
   * index), as {@link #ingestGetBlob(byte[], Proc)} does; the view is read before this returns
   * and not kept.
   */
  public void ingestGetBlob(WireBuffer blob, Proc target) {
    int total = blob.writerIndex();
    PmixReader r = new PmixReader(blob, format);
    Proc p = r.unpackProc();
    if (p.rank() == Proc.RANK_WILDCARD) {
      ingestJobData(p.nspace(), r);
      return;
    }
    if (p.rank() == Proc.RANK_UNDEF) {
      p = target;
    }
    peerAnswers.remove(p); // a rank's blob holds only its own data
    Map<String, Value> m = peers.get(p); // not computeIfAbsent's lambda: a first remote get
    if (m == null) {
      m = new LinkedHashMap<>();
      peers.put(p, m);
    }
    Blob prev = lastBlob.remove(p);
    boolean continues =
        prev != null
            && prev.length >= blob.readerIndex()
            && prev.length <= total
            && blob.contentEquals(0, prev.bytes, 0, prev.length);
    if (continues) {
      blob.readerIndex(prev.length); // its units are stored already; only the new ones follow
    }
    while (r.hasRemaining()) {
      Value.KVal kv = (Value.KVal) r.unpackOne(DataType.KVAL);
      if (kv.key() != null) {
        m.put(kv.key(), kv.value());
      }
    }
    // Only once every unit of it is stored.
    if (continues) {
      prev.extendTo(blob, total);
      lastBlob.put(p, prev);
    } else {
      lastBlob.put(p, new Blob(blob, total));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Resolution

  /** Whether {@code key} is reserved ({@code pmix} prefix): C never sends those in a commit. */
  public static boolean isReserved(String key) {
    return key.startsWith("pmix");
  }

  static boolean isNodeKey(String key) {
    return NODE_KEYS.contains(key) || key.startsWith("pmix.fab");
  }

  /**
   * Looks {@code key} of {@code proc} up locally, following the 4.2.2 hash store's order: the
   * process's own id and rank, its own puts, the target rank's data, the node/app/session realm
   * the key belongs to, then the job-level values.
   */
  public Lookup lookup(Proc proc, String key, List<Info> directives) {
    boolean ownNspace = proc.nspace().equals(me.nspace());
    int rank = proc.rank();
    boolean selfish =
        ownNspace
            && (rank == me.rank()
                || rank == Proc.RANK_UNDEF
                || rank == Proc.RANK_INVALID
                || rank == Proc.RANK_WILDCARD);
    if (selfish && key.equals("pmix.procid")) {
      return new Lookup.Found(me);
    }
    if (selfish && key.equals("pmix.rank")) {
      // 4.2.2 answers NOT_FOUND for the own rank (reference-defects.md); we do not copy that.
      return new Lookup.Found(Value.rank(me.rank()));
    }
    if (ownNspace && (rank == me.rank() || rank == Proc.RANK_UNDEF)) {
      Value v = own.get(key);
      if (v != null) {
        return new Lookup.Found(v);
      }
    }
    Namespace ns = namespaces.get(proc.nspace());
    if (!proc.isSpecialRank()) {
      Map<String, Value> peer = peers.get(proc);
      if (peer != null && peer.containsKey(key)) {
        return new Lookup.Found(peer.get(key));
      }
      if (ns != null) {
        Map<String, Value> r = ns.ranks.get(rank);
        if (r != null && r.containsKey(key)) {
          return new Lookup.Found(r.get(key));
        }
      }
    } else if (rank == Proc.RANK_UNDEF) {
      // "Any rank": the first peer of that namespace that has the key.
      for (Map.Entry<Proc, Map<String, Value>> e : peers.entrySet()) {
        if (e.getKey().nspace().equals(proc.nspace()) && e.getValue().containsKey(key)) {
          return new Lookup.Found(e.getValue().get(key));
        }
      }
    }
    if (ns == null) {
      return MISS;
    }
    boolean explicitRealm =
        flag(directives, "pmix.node.info")
            || flag(directives, "pmix.app.info")
            || flag(directives, "pmix.ssn.info");
    if (isNodeKey(key) || flag(directives, "pmix.node.info")) {
      Map<String, Value> node = pickNode(ns, rank, directives);
      if (node != null) {
        Value v = node.get(key);
        if (v != null) {
          return new Lookup.Found(v);
        }
        if (!explicitRealm) {
          Value j = ns.job.get(key);
          return j != null ? new Lookup.Found(j) : ABSENT;
        }
      }
    } else if (APP_KEYS.contains(key) || flag(directives, "pmix.app.info")) {
      Map<String, Value> app = pickApp(ns, rank, directives);
      if (app != null) {
        Value v = app.get(key);
        if (v != null) {
          return new Lookup.Found(v);
        }
        if (!explicitRealm) {
          Value j = ns.job.get(key);
          return j != null ? new Lookup.Found(j) : ABSENT;
        }
      }
    } else if (SESSION_KEYS.contains(key) || flag(directives, "pmix.ssn.info")) {
      Value v = pickSessionValue(ns, key, directives);
      if (v != null) {
        return new Lookup.Found(v);
      }
    }
    Value j = ns.job.get(key);
    if (j != null) {
      return new Lookup.Found(j);
    }
    if (key.equals("pmix.nspace")) {
      return new Lookup.Found(Value.of(proc.nspace()));
    }
    if (!explicitRealm
        && (isNodeKey(key) || APP_KEYS.contains(key) || SESSION_KEYS.contains(key))) {
      // 4.2.2 adds pmix.optional to realm lookups itself: a miss never reaches the server.
      return ABSENT;
    }
    return MISS;
  }

  private @Nullable Map<String, Value> pickNode(Namespace ns, int rank, List<Info> directives) {
    Value q = qualifier(directives, HNAME);
    if (q != null) {
      return findBy(ns.nodes, HNAME, q);
    }
    q = qualifier(directives, NODEID);
    if (q != null) {
      return findBy(ns.nodes, NODEID, q);
    }
    String host = null;
    if (rank != Proc.RANK_WILDCARD && rank != Proc.RANK_UNDEF && rank != Proc.RANK_INVALID) {
      Map<String, Value> r = ns.ranks.get(rank);
      if (r != null) {
        Value h = r.get(HNAME);
        if (h != null) {
          host = h.asString();
        } else if (r.get(NODEID) != null) {
          return findBy(ns.nodes, NODEID, r.get(NODEID));
        }
      }
    }
    if (host == null) {
      host = myHostname();
    }
    Map<String, Value> n = findBy(ns.nodes, HNAME, Value.of(host));
    if (n == null && ns.nodes.size() == 1) {
      n = ns.nodes.get(0);
    }
    return n;
  }

  private @Nullable Map<String, Value> pickApp(Namespace ns, int rank, List<Info> directives) {
    Value q = qualifier(directives, APPNUM);
    if (q == null && !Proc.of(me.nspace(), rank).isSpecialRank()) {
      Map<String, Value> r = ns.ranks.get(rank);
      q = r == null ? null : r.get(APPNUM);
    }
    if (q == null) {
      Namespace mine = namespaces.get(me.nspace());
      Map<String, Value> r = mine == null ? null : mine.ranks.get(me.rank());
      q = r == null ? null : r.get(APPNUM);
    }
    if (q == null) {
      q = Value.uint32(0);
    }
    Map<String, Value> app = findBy(ns.apps, APPNUM, q);
    if (app == null && ns.apps.size() == 1) {
      app = ns.apps.get(0);
    }
    return app;
  }

  private static @Nullable Value pickSessionValue(Namespace ns, String key, List<Info> directives) {
    Value q = qualifier(directives, SESSION_ID);
    for (Map<String, Value> s : ns.sessions) {
      if (q != null && !sameNumber(s.get(SESSION_ID), q)) {
        continue;
      }
      Value v = s.get(key);
      if (v != null) {
        return v;
      }
    }
    return null;
  }

  /** The host name this process runs on, as its job data says, else as its environment says. */
  String myHostname() {
    Namespace mine = namespaces.get(me.nspace());
    if (mine != null) {
      Map<String, Value> r = mine.ranks.get(me.rank());
      if (r != null && r.get(HNAME) instanceof Value.Str s && s.value() != null) {
        return s.value();
      }
    }
    return hostname;
  }

  private static @Nullable Map<String, Value> findBy(
      List<Map<String, Value>> realms, String idKey, Value id) {
    for (Map<String, Value> m : realms) {
      Value v = m.get(idKey);
      if (v != null && (v.equals(id) || sameNumber(v, id) || sameString(v, id))) {
        return m;
      }
    }
    return null;
  }

  private static boolean sameNumber(@Nullable Value a, Value b) {
    if (a == null) {
      return false;
    }
    try {
      return (a instanceof Value.Int || a instanceof Value.UInt)
          && (b instanceof Value.Int || b instanceof Value.UInt)
          && a.asLong() == b.asLong();
    } catch (ArithmeticException e) {
      return false;
    }
  }

  private static boolean sameString(Value a, Value b) {
    return a instanceof Value.Str x && b instanceof Value.Str y && java.util.Objects.equals(x.value(), y.value());
  }

  private static @Nullable Value qualifier(List<Info> directives, String key) {
    for (Info i : directives) {
      if (i.key().equals(key)) {
        return i.value();
      }
    }
    return null;
  }

  /** Whether a boolean directive is present and true (a directive without a bool value counts). */
  public static boolean flag(List<Info> directives, String key) {
    for (Info i : directives) {
      if (i.key().equals(key)) {
        return !(i.value() instanceof Value.Bool b) || b.value();
      }
    }
    return false;
  }

  /** The value of a directive, if present. */
  public static Optional<Value> directive(List<Info> directives, String key) {
    return Optional.ofNullable(qualifier(directives, key));
  }

  /**
   * Fills in the job data of a singleton, which no server describes: a job of one process on this
   * node, so the standard job keys can be got as in a launched job.
   */
  public void describeSingleton(String host) {
    Namespace ns = namespace(me.nspace());
    ns.job.put("pmix.job.size", Value.uint32(1));
    ns.job.put("pmix.max.size", Value.uint32(1));
    ns.job.put("pmix.num.nodes", Value.uint32(1));
    ns.job.put("pmix.jobid", Value.of(me.nspace()));
    ns.job.put("pmix.nspace", Value.of(me.nspace()));
    ns.job.put("pmix.job.napps", Value.uint32(1));
    ns.job.put("pmix.nlist", Value.of(host));
    Map<String, Value> session = new LinkedHashMap<>();
    session.put(SESSION_ID, Value.uint32(0xffffffffL));
    session.put("pmix.univ.size", Value.uint32(1));
    ns.sessions.add(session);
    Map<String, Value> node = new LinkedHashMap<>();
    node.put(HNAME, Value.of(host));
    node.put(NODEID, Value.uint32(0));
    node.put("pmix.lpeers", Value.of("0"));
    node.put("pmix.local.size", Value.uint32(1));
    node.put("pmix.node.size", Value.uint32(1));
    node.put("pmix.lldr", Value.rank(0));
    ns.nodes.add(node);
    Map<String, Value> app = new LinkedHashMap<>();
    app.put(APPNUM, Value.uint32(0));
    app.put("pmix.app.size", Value.uint32(1));
    app.put("pmix.aldr", Value.rank(0));
    ns.apps.add(app);
    Map<String, Value> r = ns.rank(0);
    r.put(HNAME, Value.of(host));
    r.put(NODEID, Value.uint32(0));
    r.put(APPNUM, Value.uint32(0));
    r.put("pmix.lrank", Value.uint16(0));
    r.put("pmix.nrank", Value.uint16(0));
    r.put("pmix.grank", Value.rank(0));
    r.put("pmix.apprank", Value.rank(0));
  }

  /** Throws NOT_FOUND for {@code key} of {@code proc}. */
  public static PmixException notFound(Proc proc, String key) {
    return new PmixException(Status.ERR_NOT_FOUND, key + " of " + proc);
  }
}
