package io.pmix.server.internal.modex;

import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one process committed or what the host delivered for it: local-scope and remote-scope
 * key/values. A key put GLOBAL arrives in both. Written only by the modex part ({@link Modex} for
 * commits, {@link NamespaceData#storeRemote} for what the host delivers); read by anyone. Progress
 * thread only.
 *
 * <p>A PMIx 5+ qualified value ({@code pmix.qual.val}: a data array of the primary key/value,
 * then the qualifiers) is held under a map key of its own per primary key and qualifier set, as
 * 5.x's hash store keeps one entry per (key, qualifiers): two values of one key with different
 * qualifiers both stay, the same qualifiers replace. Whoever packs the maps uses {@link
 * #wireKey}; whoever looks a key up uses {@link #holds}.
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
    local.put(storeKey(key, value), value);
  }

  void putRemote(String key, Value value) {
    remote.put(storeKey(key, value), value);
  }

  // Separates the parts of a qualified value's map key; no PMIx key contains it.
  private static final char SEP = '\u0000';

  /** The map key of {@code key}'s value: the key itself, or a qualified value's identity. */
  static String storeKey(String key, Value value) {
    if (!key.equals(Keys.QUALIFIED_VALUE.name())
        || !(value instanceof DataArray a)
        || a.items().isEmpty()
        || !(a.items().get(0) instanceof Info primary)) {
      return key;
    }
    StringBuilder b = new StringBuilder(key).append(SEP).append(primary.key());
    for (Value q : a.items().subList(1, a.items().size())) {
      if (q instanceof Info i) {
        // The qualifier's key and value make the identity, as 5.x compares them.
        b.append(SEP).append(i.key()).append('=').append(i.value());
      }
    }
    return b.toString();
  }

  /** The key to put on the wire for a map key of {@link #local} or {@link #remote}. */
  public static String wireKey(String mapKey) {
    int i = mapKey.indexOf(SEP);
    return i < 0 ? mapKey : mapKey.substring(0, i);
  }

  /**
   * Whether {@code values} (a scope of this class) holds {@code key}: as a plain value, or as the
   * primary key of a qualified value (a 5.x client asks for the primary key with qualifiers).
   */
  public static boolean holds(Map<String, Value> values, String key) {
    if (values.containsKey(key)) {
      return true;
    }
    String prefix = Keys.QUALIFIED_VALUE.name() + SEP + key;
    for (String k : values.keySet()) {
      if (k.startsWith(prefix)
          && (k.length() == prefix.length() || k.charAt(prefix.length()) == SEP)) {
        return true;
      }
    }
    return false;
  }

  void markCommitted() {
    committed = true;
  }
}
