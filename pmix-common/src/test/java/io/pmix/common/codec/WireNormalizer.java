package io.pmix.common.codec;

import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.List;

/**
 * The value a receiver sees after a trip over the wire: floats rounded to C's six decimals, the
 * exit code of a PROC_INFO dropped (C never sends it), nested values likewise.
 */
public final class WireNormalizer {
  private WireNormalizer() {}

  /** The value as it reads back after being packed. */
  public static Value normalize(Value v) {
    if (v instanceof Value.Real32 f) {
      return new Value.Real32(FloatText.parseFloat(FloatText.format(f.value())));
    }
    if (v instanceof Value.Real64 d) {
      return new Value.Real64(FloatText.parseDouble(FloatText.format(d.value())));
    }
    if (v instanceof Value.ProcInfo p) {
      return new Value.ProcInfo(p.proc(), p.hostname(), p.executableName(), p.pid(), 0, p.state());
    }
    if (v instanceof Info i) {
      return new Info(i.key(), i.flags(), normalize(i.value()));
    }
    if (v instanceof Value.KVal k) {
      return new Value.KVal(k.key(), normalize(k.value()));
    }
    if (v instanceof Value.PData p) {
      return new Value.PData(p.proc(), p.key(), normalize(p.value()));
    }
    if (v instanceof DataArray a && !a.items().isEmpty()) {
      List<Value> items = new ArrayList<>();
      for (Value x : a.items()) {
        items.add(normalize(x));
      }
      return DataArray.of(a.elementType(), items);
    }
    if (v instanceof Value.ProcStats p) {
      return new Value.ProcStats(
          p.node(), p.proc(), p.pid(), p.cmd(), p.state(), p.time(), p.priority(),
          p.numThreads(), r(p.pss()), r(p.vsize()), r(p.rss()), p.processor(), p.sampleTime());
    }
    if (v instanceof Value.NodeStats n) {
      List<Float> l = new ArrayList<>();
      for (float f : n.loads()) {
        l.add(r(f));
      }
      return new Value.NodeStats(n.node(), l, n.sampleTime(), n.diskStats(), n.netStats());
    }
    if (v instanceof Value.App a) {
      List<Info> infos = new ArrayList<>();
      for (Info i : a.info()) {
        infos.add((Info) normalize(i));
      }
      return new Value.App(a.cmd(), a.argv(), a.env(), a.cwd(), a.maxprocs(), infos);
    }
    if (v instanceof Value.Query q) {
      List<Info> infos = new ArrayList<>();
      for (Info i : q.qualifiers()) {
        infos.add((Info) normalize(i));
      }
      return new Value.Query(q.keys(), infos);
    }
    return v;
  }

  private static float r(float f) {
    return FloatText.parseFloat(FloatText.format(f));
  }
}
