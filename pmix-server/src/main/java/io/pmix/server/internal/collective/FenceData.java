package io.pmix.server.internal.collective;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.server.internal.Requests;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Registry;
import io.pmix.server.internal.modex.ProcData;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The data a collecting fence exchanges with the host (docs/commands.md §7.1): this node's
 * contribution in the native layout (a flags byte, then one BYTE_OBJECT per contributing rank:
 * its relative rank and REMOTE-scope KVALs, all in one node BYTE_OBJECT), and what the host
 * returns, one node BYTE_OBJECT per node in the native or the key-map layout (flag 0x02: a key
 * table, then key indices instead of key strings). Ranks are relative: the participants'
 * namespaces in the tracker's order, each as large as its job. Progress thread only.
 */
final class FenceData {
  private static final int FLAG_NATIVE = 0x01;
  private static final int FLAG_KEY_MAP = 0x02;

  private final Registry registry;
  private final CodecLimits limits;
  private final String hostname;

  FenceData(Registry registry, CodecLimits limits, String hostname) {
    this.registry = registry;
    this.limits = limits;
    this.hostname = hostname;
  }

  /** This node's fence contribution, native (non-key-map) layout. */
  byte[] collect(FenceTracker t) {
    // Arrays, not ByteBufs: a fresh server runs this interpreted (see Replies.frame).
    WireBuffer node = WireBuffer.allocate();
    PmixWriter w = new PmixWriter(node, WireFormat.DEFAULT);
    w.packByteEnum(DataType.BYTE, FLAG_NATIVE);
    List<Map.Entry<String, Integer>> space = rankSpace(t);
    for (Proc p : t.arrivedProcs()) {
      Namespace ns = registry.namespace(p.nspace());
      ProcData d = ns == null ? null : ns.data().proc(p.rank());
      if (d == null || d.remote().isEmpty()) {
        continue;
      }
      WireBuffer rb = WireBuffer.allocate();
      PmixWriter rw = new PmixWriter(rb, WireFormat.DEFAULT);
      rw.packRank(relativeRank(space, p));
      d.remote().forEach((k, v) -> rw.pack(new Value.KVal(ProcData.wireKey(k), v)));
      w.packByteObject(rb.toByteArray());
    }
    WireBuffer out = WireBuffer.allocate();
    new PmixWriter(out, WireFormat.DEFAULT).packByteObject(node.toByteArray());
    return out.toByteArray();
  }

  /**
   * Parses and stores what the host's fence returned, each rank's values as its remote data.
   * Nothing is stored if any part is malformed.
   */
  void store(FenceTracker t, byte[] bytes) {
    PmixReader r = new PmixReader(WireBuffer.wrap(bytes), WireFormat.DEFAULT, limits);
    Map<Proc, List<Value.KVal>> parsed = new LinkedHashMap<>();
    List<Map.Entry<String, Integer>> space = rankSpace(t);
    while (r.hasRemaining()) {
      byte[] nodeBlob = r.unpackByteObject();
      PmixReader nr = new PmixReader(WireBuffer.wrap(nodeBlob), WireFormat.DEFAULT, limits);
      if (!nr.hasRemaining()) {
        continue;
      }
      int flags = nr.unpackByteEnum(DataType.BYTE);
      List<String> keys = new ArrayList<>();
      boolean keyMap = (flags & FLAG_KEY_MAP) != 0;
      if (keyMap) {
        int nkeys = nr.unpackUInt32();
        for (Value v :
            nr.unpack(DataType.STRING, Requests.count(Integer.toUnsignedLong(nkeys), limits))) {
          keys.add(v.asString());
        }
      }
      while (nr.hasRemaining()) {
        byte[] rankBlob = nr.unpackByteObject();
        PmixReader rr =
            new PmixReader(WireBuffer.wrap(rankBlob), WireFormat.DEFAULT, limits);
        int rel = rr.unpackRank();
        Proc p = absoluteProc(space, rel);
        List<Value.KVal> kvs = parsed.computeIfAbsent(p, x -> new ArrayList<>());
        while (rr.hasRemaining()) {
          if (keyMap) {
            int idx = rr.unpackUInt32();
            Value v = rr.unpackValue();
            if (idx < 0 || idx >= keys.size()) {
              throw new PmixException(Status.ERR_BAD_PARAM, "key index " + idx + " out of range");
            }
            kvs.add(new Value.KVal(keys.get(idx), v));
          } else {
            kvs.add((Value.KVal) rr.unpackOne(DataType.KVAL));
          }
        }
      }
    }
    for (Map.Entry<Proc, List<Value.KVal>> e : parsed.entrySet()) {
      Proc p = e.getKey();
      registry.placeholder(p.nspace()).data().storeRemote(p.rank(), e.getValue());
      registry.delivered(p);
    }
  }

  /**
   * The namespaces of a fence in relative-rank order, with their sizes (-1: not known); made once
   * per fence (a fence naming its N processes one by one would otherwise make it N times).
   */
  private List<Map.Entry<String, Integer>> rankSpace(FenceTracker t) {
    List<Map.Entry<String, Integer>> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (Proc p : t.procs()) {
      if (!seen.add(p.nspace())) {
        continue;
      }
      Namespace ns = registry.namespace(p.nspace());
      int size = ns != null && ns.registered() ? ns.jobData(hostname).nprocs() : -1;
      out.add(Map.entry(p.nspace(), size));
    }
    return out;
  }

  private static int relativeRank(List<Map.Entry<String, Integer>> space, Proc p) {
    int offset = 0;
    for (Map.Entry<String, Integer> e : space) {
      if (e.getKey().equals(p.nspace())) {
        return offset + p.rank();
      }
      offset += Math.max(e.getValue(), 0);
    }
    return p.rank();
  }

  private static Proc absoluteProc(List<Map.Entry<String, Integer>> space, int rel) {
    int r = rel;
    for (int i = 0; i < space.size(); i++) {
      Map.Entry<String, Integer> e = space.get(i);
      if (e.getValue() < 0 || r < e.getValue() || i == space.size() - 1) {
        return Proc.of(e.getKey(), r);
      }
      r -= e.getValue();
    }
    throw new PmixException(Status.ERR_BAD_PARAM, "fence data for an unknown rank " + rel);
  }
}
