package io.pmix.server.internal.modex;

import io.pmix.common.Value;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one process committed or what the host delivered for it: local-scope and remote-scope
 * key/values. A key put GLOBAL arrives in both. Written only by the modex part ({@link Modex} for
 * commits, {@link NamespaceData#storeRemote} for what the host delivers); read by anyone. Progress
 * thread only.
 */
public final class ProcData {
  private final Map<String, Value> local = new LinkedHashMap<>();
  private final Map<String, Value> remote = new LinkedHashMap<>();
  /** Whether the process committed at least once (or data arrived for it from the host). */
  private boolean committed;

  ProcData() {}

  /** The local-scope values, in put order; a read-only view. */
  public Map<String, Value> local() {
    return Collections.unmodifiableMap(local);
  }

  /** The remote-scope values, in put order; a read-only view. */
  public Map<String, Value> remote() {
    return Collections.unmodifiableMap(remote);
  }

  /** The local or the remote values; a read-only view. */
  public Map<String, Value> scope(boolean localScope) {
    return localScope ? local() : remote();
  }

  /** Whether the process committed at least once (or the host delivered its data). */
  public boolean committed() {
    return committed;
  }

  void putLocal(String key, Value value) {
    local.put(key, value);
  }

  void putRemote(String key, Value value) {
    remote.put(key, value);
  }

  void markCommitted() {
    committed = true;
  }
}
