package io.pmix.server.internal.modex;

import io.pmix.common.Value;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The modex data of one namespace: what each of its processes committed, or what the host
 * delivered for them (fence data, direct modex), and job-level values the host delivered by
 * direct modex. Held by its namespace, so it lives exactly as long as the namespace does
 * (docs/lifecycle.md §6.2.7: kept across finalize and client deregistration, dropped with the
 * namespace). A rank's own entry is dropped when its next cycle begins (§6.2.10, no cross-cycle
 * carryover). Progress thread only.
 */
public final class NamespaceData {
  private final Map<Integer, ProcData> procs = new HashMap<>();
  /** Job-level values delivered by the host through direct modex for rank WILDCARD. */
  private final Map<String, Value> extraJobLevel = new LinkedHashMap<>();

  /** Empty data, for a new namespace. */
  public NamespaceData() {}

  /** What {@code rank} committed or was delivered, or null. */
  public @Nullable ProcData proc(int rank) {
    return procs.get(rank);
  }

  /** Whether anything is held for {@code rank}. */
  public boolean has(int rank) {
    return procs.containsKey(rank);
  }

  /**
   * Stores what the host delivered for {@code rank} (fence data or a direct-modex answer): every
   * keyed value as remote data, and the rank counts as committed.
   */
  public void storeRemote(int rank, List<Value.KVal> kvs) {
    ProcData d = procOrCreate(rank);
    for (Value.KVal kv : kvs) {
      if (kv.key() != null) {
        d.putRemote(kv.key(), kv.value());
      }
    }
    d.markCommitted();
  }

  /** Drops what {@code rank} committed or was delivered (its new cycle begins). */
  void forget(int rank) {
    procs.remove(rank);
  }

  /** The job-level values the host delivered; a read-only view. */
  public Map<String, Value> extraJobLevel() {
    return Collections.unmodifiableMap(extraJobLevel);
  }

  void storeJobLevel(List<Value.KVal> kvs) {
    for (Value.KVal kv : kvs) {
      if (kv.key() != null) {
        extraJobLevel.put(kv.key(), kv.value());
      }
    }
  }

  ProcData procOrCreate(int rank) {
    // Not computeIfAbsent with a lambda: this runs at every first commit of a rank
    // (docs/architecture.md, "First requests").
    ProcData d = procs.get(rank);
    if (d == null) {
      d = new ProcData();
      procs.put(rank, d);
    }
    return d;
  }

  /** Every rank's data, by rank (signed order, as the rank-UNDEF answer lists them). */
  SortedMap<Integer, ProcData> byRank() {
    return new TreeMap<>(procs);
  }
}
