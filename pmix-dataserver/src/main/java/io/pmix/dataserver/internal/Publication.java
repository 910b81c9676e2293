package io.pmix.dataserver.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataRange;
import io.pmix.common.Info;
import io.pmix.dataserver.Identity;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One stored publication: the data one publish stored, with the rules it was published under.
 * Mutable (keys leave it as they are read or unpublished) and confined to the store's thread.
 * Identity-based equality: two publications are never the same item.
 */
public final class Publication {
  private final long id;
  private final Identity publisher;
  private final DataRange range;
  private final Access access;
  private final Retention retention;
  private final LinkedHashMap<String, Info> data;
  private final Map<String, Long> charges = new LinkedHashMap<>();
  private long charge;
  private long lastAccess;

  /** A publication of {@code data}, charged and stamped {@code now}. */
  public Publication(
      long id,
      Identity publisher,
      DataRange range,
      Access access,
      Retention retention,
      Map<String, Info> data,
      long now) {
    this.id = id;
    this.publisher = requireNonNull(publisher, "publisher");
    this.range = requireNonNull(range, "range");
    this.access = requireNonNull(access, "access");
    this.retention = requireNonNull(retention, "retention");
    this.data = new LinkedHashMap<>(data);
    this.charge = Sizes.ITEM_OVERHEAD + Sizes.ID_BYTES * access.idCount();
    for (Info i : data.values()) {
      long c = Sizes.datum(i);
      charges.put(i.key(), c);
      charge += c;
    }
    this.lastAccess = now;
  }

  /** The order of publication: lower ids were published earlier. */
  public long id() {
    return id;
  }

  /** Who published it, and so who owns it. */
  public Identity publisher() {
    return publisher;
  }

  /** The publisher's range. */
  public DataRange range() {
    return range;
  }

  /** Who may read it. */
  public Access access() {
    return access;
  }

  /** How long it is kept. */
  public Retention retention() {
    return retention;
  }

  /** The data still held, by key (live view; the store's to change). */
  public Map<String, Info> data() {
    return data;
  }

  /** What it is charged against its publisher's uid now. */
  public long charge() {
    return charge;
  }

  /** When it was last of use: published, or returned by a lookup. */
  public long lastAccess() {
    return lastAccess;
  }

  /** Restamps the last use. */
  public void touch(long now) {
    lastAccess = now;
  }

  /**
   * Takes one key out, returning what that takes off the charge (0 if the key was not held).
   */
  public long remove(String key) {
    if (data.remove(key) == null) {
      return 0;
    }
    Long c = charges.remove(key);
    long freed = c == null ? 0 : c;
    charge -= freed;
    return freed;
  }

  @Override
  public String toString() {
    return "Publication#"
        + id
        + "{"
        + publisher.proc()
        + " uid="
        + Integer.toUnsignedString(publisher.uid())
        + " "
        + range
        + " "
        + retention.pmixName()
        + " keys="
        + data.keySet()
        + "}";
  }
}
