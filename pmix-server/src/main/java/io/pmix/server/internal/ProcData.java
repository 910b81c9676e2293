package io.pmix.server.internal;

import io.pmix.common.Value;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one process committed or what the host delivered for it: local-scope and remote-scope
 * key/values. A key put GLOBAL arrives in both. Progress thread only.
 */
final class ProcData {
  final Map<String, Value> local = new LinkedHashMap<>();
  final Map<String, Value> remote = new LinkedHashMap<>();
  /** Whether the process committed at least once (or data arrived for it from the host). */
  boolean committed;

  Map<String, Value> scope(boolean localScope) {
    return localScope ? local : remote;
  }
}
