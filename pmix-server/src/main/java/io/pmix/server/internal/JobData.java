package io.pmix.server.internal;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The job-level data of one namespace in the layout a {@code hash} client expects in the REQ
 * reply (docs/commands.md §6.1): loose job values, the session array, one array per node, one
 * per app, then a {@code pmix.pblob} per rank. Built from the host's registration, completing what
 * the host left out the way OpenPMIx 4.2.2 does (§6.2): node list and count, job size,
 * each node's local peers, leader and size, and each rank's host name, node id, local and node
 * rank. Immutable once built.
 */
public final class JobData {
  static final int SESSION_UNDEF = 0xffffffff;

  // Realm classification of loose keys, as the 4.2.2 client's lists (docs/commands.md §6.3).
  private static final Set<String> NODE_KEYS =
      ImmutableSet.of(
          "pmix.hname", "pmix.alias", "pmix.nodeid", "pmix.pmem", "pmix.lpeers", "pmix.lprocs",
          "pmix.lcpus", "pmix.local.size", "pmix.node.size", "pmix.lldr", "pmix.ndosub");
  private static final Set<String> APP_KEYS =
      ImmutableSet.of(
          "pmix.app.size", "pmix.aldr", "pmix.app.argv", "pmix.wdir", "pmix.pset.nm",
          "pmix.pset.mems", "pmix.apmap.type", "pmix.apmap.regex");
  private static final Set<String> SESSION_KEYS =
      ImmutableSet.of(
          "pmix.session.id", "pmix.clid", "pmix.univ.size", "pmix.tmpdir", "pmix.tdir.rmclean",
          "pmix.fqdn", "pmix.rm.name", "pmix.rm.version");

  /** Loose job-level values (what a GETNB for rank WILDCARD returns). */
  final Map<String, Value> jobLevel;

  /** Session, node and app arrays, in reply order. */
  final List<Value.KVal> realmArrays;

  /** Per-rank values, ranks 0 to nprocs-1 that have any. */
  final Map<Integer, List<Value.KVal>> perRank;

  /**
   * The reply body packed in each wire format asked for so far; a cache of what the fields above
   * determine, so the object stays immutable in effect. Concurrent because snapshots and tests may
   * read job data off the progress thread.
   */
  private final Map<WireFormat, byte[]> packedBodies = new ConcurrentHashMap<>();
  /** {@link #arraysBody} per wire format, for the same reason as {@link #packedBodies}. */
  private final Map<WireFormat, byte[]> packedArrays = new ConcurrentHashMap<>();

  /** The job size. */
  final int nprocs;

  /** The ranks that live on this node according to the maps (empty if unknown). */
  final Set<Integer> localRanksFromMap;

  /** Whether the host asked for no data ({@code pmix.reg.nodata}). */
  final boolean noData;

  private JobData(
      Map<String, Value> jobLevel,
      List<Value.KVal> realmArrays,
      Map<Integer, List<Value.KVal>> perRank,
      int nprocs,
      Set<Integer> localRanksFromMap,
      boolean noData) {
    this.jobLevel = ImmutableMap.copyOf(jobLevel);
    this.realmArrays = ImmutableList.copyOf(realmArrays);
    this.perRank = ImmutableMap.copyOf(perRank);
    this.nprocs = nprocs;
    this.localRanksFromMap = ImmutableSet.copyOf(localRanksFromMap);
    this.noData = noData;
  }

  /**
   * This job data with {@code pmix.bfrops.mod} set to {@code version}, as {@link #build} would
   * have made it given that version (the key's place among the loose values is the same).
   */
  public JobData withBfropsVersion(String version) {
    Map<String, Value> job = new LinkedHashMap<>(jobLevel);
    job.put(Keys.BFROPS_MODULE.name(), Value.of(version));
    return new JobData(job, realmArrays, perRank, nprocs, localRanksFromMap, noData);
  }

  /** A namespace with nothing registered yet. */
  public static JobData empty(int nlocalprocs) {
    return new JobData(
        Map.of(), List.of(), Map.of(), Math.max(nlocalprocs, 0), Set.of(), true);
  }

  private static final class Node {
    final String name;
    int id;
    final Map<String, Value> entries = new LinkedHashMap<>();
    final List<Integer> ranks = new ArrayList<>();

    Node(String name, int id) {
      this.name = name;
      this.id = id;
    }
  }

  /**
   * Builds the job data.
   *
   * @param infos the host's registration
   * @param nlocalprocs the host's local process count
   * @param registeredRanks the ranks registered as local clients so far
   * @param hostname this node's name
   * @param bfropsVersion the version string of the namespace's first connected client, or null
   * @throws PmixException with {@code ERR_BAD_PARAM} for a malformed registration
   */
  public static JobData build(
      List<Info> infos,
      int nlocalprocs,
      Collection<Integer> registeredRanks,
      String hostname,
      @Nullable String bfropsVersion) {
    Map<String, Value> job = new LinkedHashMap<>();
    Map<String, Value> session = new LinkedHashMap<>();
    List<Map<String, Value>> givenNodes = new ArrayList<>();
    Map<Integer, Map<String, Value>> apps = new TreeMap<>();
    Map<Integer, Map<String, Value>> procs = new TreeMap<>();
    Map<String, Value> looseNode = new LinkedHashMap<>();
    String nodeMap = null;
    String procMap = null;
    boolean noData = false;

    List<Info> flat = new ArrayList<>();
    for (Info i : infos) {
      if (i.key().equals(Keys.JOB_INFO_ARRAY.name())) {
        flat.addAll(infoArray(i));
      } else {
        flat.add(i);
      }
    }
    for (Info i : flat) {
      String k = i.key();
      Value v = i.value();
      if (k.equals(Keys.REGISTER_NODATA.name())) {
        noData = !(v instanceof Value.Bool b) || b.value();
      } else if (k.equals(Keys.SESSION_INFO_ARRAY.name())) {
        for (Info s : infoArray(i)) {
          session.put(s.key(), s.value());
        }
      } else if (k.equals(Keys.APP_INFO_ARRAY.name())) {
        Map<String, Value> app = new LinkedHashMap<>();
        for (Info a : infoArray(i)) {
          app.put(a.key(), a.value());
        }
        Value num = app.get(Keys.APPNUM.name());
        int appnum = num != null ? (int) num.asLong() : apps.size();
        appMap(apps, appnum).putAll(app);
      } else if (k.equals(Keys.NODE_INFO_ARRAY.name())) {
        Map<String, Value> node = new LinkedHashMap<>();
        for (Info a : infoArray(i)) {
          node.put(a.key(), a.value());
        }
        givenNodes.add(node);
      } else if (k.equals(Keys.PROC_DATA.name())) {
        List<Info> arr = infoArray(i);
        if (arr.isEmpty() || !arr.get(0).key().equals(Keys.RANK.name())) {
          throw new PmixException(
              Status.ERR_BAD_PARAM, "a pmix.pdata array must start with pmix.rank");
        }
        int rank = (int) arr.get(0).value().asLong();
        Map<String, Value> p = procs.get(rank);
        if (p == null) {
          p = new LinkedHashMap<>();
          procs.put(rank, p);
        }
        for (Info a : arr.subList(1, arr.size())) {
          p.put(a.key(), a.value());
        }
      } else if (k.equals(Keys.NODE_MAP.name()) || k.equals(Keys.NODE_MAP_RAW.name())) {
        nodeMap = v.asString();
      } else if (k.equals(Keys.PROC_MAP.name()) || k.equals(Keys.PROC_MAP_RAW.name())) {
        procMap = v.asString();
      } else if (SESSION_KEYS.contains(k)) {
        session.put(k, v);
      } else if (NODE_KEYS.contains(k)) {
        looseNode.put(k, v);
      } else if (APP_KEYS.contains(k)) {
        appMap(apps, 0).put(k, v);
      } else {
        job.put(k, v);
      }
    }

    // Nodes and the rank layout: from the maps when given, else this node holds the local ranks.
    Map<String, Node> nodes = new LinkedHashMap<>();
    int mapTotal = -1;
    if (nodeMap != null && procMap != null) {
      List<String> names = ProcMaps.parseNodes(nodeMap);
      List<List<Integer>> layout = ProcMaps.parseProcs(procMap);
      if (names.size() != layout.size()) {
        throw new PmixException(
            Status.ERR_BAD_PARAM,
            "node map names " + names.size() + " nodes, proc map " + layout.size());
      }
      mapTotal = 0;
      for (int n = 0; n < names.size(); n++) {
        Node node = nodes.get(names.get(n));
        if (node == null) {
          node = new Node(names.get(n), nodes.size());
          nodes.put(names.get(n), node);
        }
        node.ranks.addAll(layout.get(n));
        mapTotal += layout.get(n).size();
      }
    }
    Value givenSize = job.get(Keys.JOB_SIZE.name());
    int nprocs =
        givenSize != null
            ? (int) givenSize.asLong()
            : mapTotal >= 0 ? mapTotal : Math.max(nlocalprocs, registeredRanks.size());
    if (nodes.isEmpty()) {
      Node me = new Node(hostname, 0);
      if (nlocalprocs >= 0 && nlocalprocs == nprocs) {
        for (int r = 0; r < nprocs; r++) {
          me.ranks.add(r);
        }
      } else {
        me.ranks.addAll(new TreeSet<>(registeredRanks));
      }
      nodes.put(hostname, me);
    }
    // Merge the host's node arrays into the map's nodes (by name, else by id).
    for (Map<String, Value> g : givenNodes) {
      Value hn = g.get(Keys.HOSTNAME.name());
      Value id = g.get(Keys.NODEID.name());
      Node target = null;
      if (hn != null) {
        target = nodes.get(hn.asString());
      }
      if (target == null && id != null) {
        for (Node n : nodes.values()) {
          if (n.id == (int) id.asLong()) {
            target = n;
          }
        }
      }
      if (target == null) {
        String name = hn != null ? hn.asString() : "node" + (id != null ? id.asLong() : nodes.size());
        Node n = new Node(name, id != null ? (int) id.asLong() : nodes.size());
        nodes.put(name, n);
        target = n;
      } else if (id != null) {
        target.id = (int) id.asLong();
      }
      for (Map.Entry<String, Value> e : g.entrySet()) {
        if (!e.getKey().equals(Keys.HOSTNAME.name()) && !e.getKey().equals(Keys.NODEID.name())) {
          target.entries.put(e.getKey(), e.getValue());
        }
      }
    }
    Node mine = nodes.get(hostname);
    if (mine != null) {
      for (Map.Entry<String, Value> e : looseNode.entrySet()) {
        if (!e.getKey().equals(Keys.HOSTNAME.name()) && !e.getKey().equals(Keys.NODEID.name())) {
          mine.entries.putIfAbsent(e.getKey(), e.getValue());
        }
      }
    }

    // Derived job-level values (4.2.2: num.nodes, job.size, max.size if absent; nlist always).
    List<String> nodesWithRanks = new ArrayList<>();
    for (Node n : nodes.values()) {
      if (!n.ranks.isEmpty()) {
        nodesWithRanks.add(n.name);
      }
    }
    job.putIfAbsent(Keys.JOB_SIZE.name(), Value.uint32(nprocs));
    job.putIfAbsent(Keys.NUM_NODES.name(), Value.uint32(nodesWithRanks.size()));
    job.put(Keys.NODE_LIST.name(), Value.of(String.join(",", nodesWithRanks)));
    job.putIfAbsent(Keys.MAX_PROCS.name(), Value.uint32(nprocs));
    if (bfropsVersion != null) {
      job.put(Keys.BFROPS_MODULE.name(), Value.of(bfropsVersion));
    }

    List<Value.KVal> arrays = new ArrayList<>();
    // Session: the id first (UINT32_MAX when the host gave none), then the session keys.
    List<Info> ssn = new ArrayList<>();
    Value sid = session.remove(Keys.SESSION_ID.name());
    ssn.add(Info.of(Keys.SESSION_ID, sid != null ? sid : Value.uint32(0xffffffffL)));
    for (Map.Entry<String, Value> e : session.entrySet()) {
      ssn.add(Info.of(e.getKey(), e.getValue()));
    }
    arrays.add(new Value.KVal(Keys.SESSION_INFO_ARRAY.name(), arrayOf(ssn)));

    // Nodes: name and id first, then the given keys, then the derived locality.
    Map<Integer, Node> nodeOfRank = new TreeMap<>();
    // A rank's place among its node's ranks (its local and node rank), found once per node: a
    // search per rank made this quadratic in the job's size (~0.2 s of a 1,024-process job).
    Map<Integer, Integer> posOnNode = new HashMap<>();
    for (Node n : nodes.values()) {
      List<Info> arr = new ArrayList<>();
      arr.add(Info.of(Keys.HOSTNAME, Value.of(n.name)));
      arr.add(Info.of(Keys.NODEID, Value.uint32(n.id)));
      boolean derive = !n.ranks.isEmpty();
      for (Map.Entry<String, Value> e : n.entries.entrySet()) {
        String k = e.getKey();
        if (derive
            && (k.equals(Keys.LOCAL_PEERS.name())
                || k.equals(Keys.LOCALLDR.name())
                || k.equals(Keys.LOCAL_SIZE.name()))) {
          continue;
        }
        arr.add(Info.of(k, e.getValue()));
      }
      if (derive) {
        List<Integer> sorted = new ArrayList<>(new TreeSet<>(n.ranks));
        StringBuilder peers = new StringBuilder();
        for (int i = 0; i < sorted.size(); i++) {
          int r = sorted.get(i);
          if (peers.length() > 0) {
            peers.append(',');
          }
          peers.append(r);
          nodeOfRank.put(r, n);
          posOnNode.put(r, i);
        }
        arr.add(Info.of(Keys.LOCAL_PEERS, Value.of(peers.toString())));
        arr.add(Info.of(Keys.LOCALLDR, Value.rank(sorted.get(0))));
        arr.add(Info.of(Keys.LOCAL_SIZE, Value.uint32(sorted.size())));
      }
      arrays.add(new Value.KVal(Keys.NODE_INFO_ARRAY.name(), arrayOf(arr)));
    }

    // Apps: the app number first.
    for (Map.Entry<Integer, Map<String, Value>> a : apps.entrySet()) {
      List<Info> arr = new ArrayList<>();
      arr.add(Info.of(Keys.APPNUM, Value.uint32(a.getKey())));
      for (Map.Entry<String, Value> e : a.getValue().entrySet()) {
        if (!e.getKey().equals(Keys.APPNUM.name())) {
          arr.add(Info.of(e.getKey(), e.getValue()));
        }
      }
      arrays.add(new Value.KVal(Keys.APP_INFO_ARRAY.name(), arrayOf(arr)));
    }

    // Per rank: the host's values, completed with host name (always, as 4.2.2 does), node id,
    // local and node rank (4.2.2 adds these only when the host gave no pmix.pdata at all; we fill
    // in whichever of them a rank lacks). pmix.appnum is not invented, as in 4.2.2.
    Map<Integer, List<Value.KVal>> perRank = new TreeMap<>();
    for (int r = 0; r < nprocs; r++) {
      Map<String, Value> p = new LinkedHashMap<>(procs.getOrDefault(r, Map.of()));
      Node n = nodeOfRank.get(r);
      if (n != null) {
        p.put(Keys.HOSTNAME.name(), Value.of(n.name));
        p.putIfAbsent(Keys.NODEID.name(), Value.uint32(n.id));
        int pos = posOnNode.getOrDefault(r, -1);
        p.putIfAbsent(Keys.LOCAL_RANK.name(), Value.uint16(pos));
        p.putIfAbsent(Keys.NODE_RANK.name(), Value.uint16(pos));
      }
      if (!p.isEmpty()) {
        List<Value.KVal> kv = new ArrayList<>();
        for (Map.Entry<String, Value> e : p.entrySet()) {
          kv.add(new Value.KVal(e.getKey(), e.getValue()));
        }
        perRank.put(r, kv);
      }
    }

    Set<Integer> localFromMap = new TreeSet<>();
    if (mine != null) {
      localFromMap.addAll(mine.ranks);
    }
    return new JobData(job, arrays, perRank, nprocs, localFromMap, noData);
  }

  private static List<Info> infoArray(Info i) {
    if (i.value() instanceof DataArray a && a.elementType() == DataType.INFO) {
      List<Info> out = new ArrayList<>();
      for (Value v : a.items()) {
        out.add((Info) v);
      }
      return out;
    }
    throw new PmixException(
        Status.ERR_BAD_PARAM, i.key() + " must be a data array of infos, got " + i.value().type());
  }

  /** An info array as C builds it: the last element carries ARRAY_END. */
  private static DataArray arrayOf(List<Info> infos) {
    List<Info> out = new ArrayList<>(infos.size());
    for (int n = 0; n < infos.size(); n++) {
      Info i = infos.get(n);
      out.add(n == infos.size() - 1 ? i.withFlags(i.flags() | Info.ARRAY_END) : i);
    }
    return DataArray.ofInfos(out);
  }

  /** The job size. */
  public int nprocs() {
    return nprocs;
  }

  /** Loose job-level values (what a GETNB for rank WILDCARD returns); immutable. */
  public Map<String, Value> jobLevel() {
    return jobLevel;
  }

  /**
   * The rank-level values the registration gave {@code rank} ({@code pmix.lrank}, {@code
   * pmix.nodeid}, {@code pmix.hname}, ...: what the stores hold in the rank's records), the first
   * of each key; empty for a rank with none.
   */
  public Map<String, Value> rankLevel(int rank) {
    List<Value.KVal> kvs = perRank.get(rank);
    if (kvs == null) {
      return Map.of();
    }
    Map<String, Value> out = new LinkedHashMap<>();
    for (Value.KVal kv : kvs) {
      if (kv.key() != null) {
        out.putIfAbsent(kv.key(), kv.value());
      }
    }
    return out;
  }

  /**
   * App {@code appnum}'s map, made when missing. Loops, not lambdas, in this class: it builds
   * every job's data at registration, on the progress thread, where a fresh JVM links each call
   * site once (docs/architecture.md, "Start-up of pmixrun").
   */
  private static Map<String, Value> appMap(Map<Integer, Map<String, Value>> apps, int appnum) {
    Map<String, Value> m = apps.get(appnum);
    if (m == null) {
      m = new LinkedHashMap<>();
      apps.put(appnum, m);
    }
    return m;
  }

  /** The loose job-level values as KVALs. */
  List<Value.KVal> jobLevelKvals() {
    List<Value.KVal> out = new ArrayList<>();
    for (Map.Entry<String, Value> e : jobLevel.entrySet()) {
      out.add(new Value.KVal(e.getKey(), e.getValue()));
    }
    return out;
  }

  /**
   * Appends the REQ reply body after the namespace string: every value as its own KVAL unit, the
   * per-rank blobs packed in the peer's own format (as the C server packs them). The body is
   * packed once per wire format and the same bytes are appended to every later reply: a job's
   * clients all ask for it at init, and packing it per connection cost O(N) per client (the REQ
   * path was the largest share of the progress thread's samples at 256 procs). A change to the
   * job data builds a new {@code JobData}, so the packed bytes can never be stale. Private: replies
   * carry it as {@link #replyBody} inside their message record.
   */
  private void writeReplyBody(PmixWriter w) {
    if (noData) {
      return;
    }
    byte[] packed = packedBodies.get(w.format());
    if (packed == null) {
      WireBuffer b = WireBuffer.allocate(256);
      packBody(new PmixWriter(b, w.format()));
      packed = b.toByteArray();
      packedBodies.put(w.format(), packed);
    }
    w.packRaw(packed);
  }

  private void packBody(PmixWriter w) {
    for (Value.KVal kv : jobLevelKvals()) {
      w.pack(kv);
    }
    for (Value.KVal kv : realmArrays) {
      w.pack(kv);
    }
    for (Map.Entry<Integer, List<Value.KVal>> e : perRank.entrySet()) {
      WireBuffer blob = WireBuffer.allocate(64);
      PmixWriter bw = new PmixWriter(blob, w.format());
      bw.packRank(e.getKey());
      for (Value.KVal kv : e.getValue()) {
        bw.pack(kv);
      }
      w.pack(new Value.KVal(Keys.PROC_BLOB.name(), Value.of(blob.toByteArray())));
    }
  }

  /**
   * Appends the REQ reply body of a client reading a shared-memory store, which holds the rest:
   * only the session, node and app arrays ({@code PMIX_GDS_FETCH_INFO_ARRAYS} in 4.2.2).
   */
  public void writeArrays(PmixWriter w) {
    if (noData) {
      return;
    }
    for (Value.KVal kv : realmArrays) {
      w.pack(kv);
    }
  }

  /**
   * What {@link #writeArrays} appends, in {@code format}: a dstore client's REQ reply body. Packed
   * once per format, as the hash body is: the node array's local peers grow with the job, so
   * packing them per connection cost every job O(N^2), and every re-init of a client again.
   * Each call has its own copy.
   */
  public byte[] arraysBody(WireFormat format) {
    byte[] packed = packedArrays.get(format);
    if (packed == null) {
      WireBuffer b = WireBuffer.allocate(256);
      writeArrays(new PmixWriter(b, format));
      packed = b.toByteArray();
      packedArrays.put(format, packed);
    }
    return packed.clone();
  }

  /**
   * The REQ reply body (what {@link #writeReplyBody} appends) in {@code format}: the job data of a
   * {@link io.pmix.common.internal.message.ReqReply}, a connect reply's blob or a spawn reply.
   */
  public byte[] replyBody(WireFormat format) {
    WireBuffer b = WireBuffer.allocate(256);
    writeReplyBody(new PmixWriter(b, format));
    return b.toByteArray();
  }
}
