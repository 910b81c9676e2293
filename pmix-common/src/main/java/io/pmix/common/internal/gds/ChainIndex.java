package io.pmix.common.internal.gds;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the searches of one rank's record chain have read so far, so that the next search reads
 * only the records written since (docs/gds.md §7, "A search by key").
 *
 * <p>The rule it keeps: a search answers the first valid record of the key among the first {@code
 * count} valid records of the chain (the meta entry's count), as libpmix's readers walk it. The
 * index reads the chain from its start once, as far as a search needs (to the key, or to that
 * horizon), and remembers where each key's first valid record lies, where it stopped, and the
 * extension slots it followed. Then:
 *
 * <ul>
 *   <li>While the store is as the last search left it (the count, the record where it stopped,
 *       the number of data segments and the last one's free offset), only values replaced in
 *       place can have changed: a key seen is answered from the map (its record checked to be
 *       still a valid record of the key), another is read on for, or is not in the chain when the
 *       horizon was reached.
 *   <li>When the store has changed, every slot followed must still point where it did and the
 *       count must still cover the valid records passed; records are then read on from where the
 *       last search stopped, up to the new horizon, where the chain must end (a closing extension
 *       slot). Records beyond it mean that a record passed was invalidated since: libpmix
 *       invalidates a key's record when a value of another size replaces it and appends the new
 *       one, the count unchanged, so the count now reaches one record further than the records
 *       read on cover.
 *   <li>Otherwise the index is stale and the reader starts a new one, which reads the chain from
 *       its start as a walk does, and answers what the walk answers even when the chain does not
 *       end at the horizon.
 * </ul>
 *
 * <p>libpmix 4.2.2's ds21 writer does break the count (docs/libpmix-facts.md): storing a key
 * again, it also takes the key's invalidated record for it, lowering the count once more, and its
 * next append then starts a record early, re-pointing an extension slot passed long ago (the
 * records after it leave the chain) or leaving records beyond the count. Its readers see what
 * their walk sees; the checks above send such changes to a new index, which sees the same.
 *
 * <p>Not thread-safe: the reader's calls are serialised and made under the store's lock.
 */
final class ChainIndex {
  /** What {@link #find} answers when the chain does not hold the key. */
  static final long MISS = -1;

  /** What {@link #find} answers when the index is out of date: a new one must be asked. */
  static final long STALE = -2;

  private final long start;
  private final DstoreFormat records;
  /**
   * Where each key's first valid record lies, by the key's bytes as Latin-1 text (one char a
   * byte, so any bytes map one to one): a {@code String}'s hash and equality are compiled JDK code
   * in any JVM, where a wrapped byte array's ran interpreted, a call per byte, in every fresh key's
   * search.
   */
  private final Map<String, Long> keys = new HashMap<>();

  /** Where the last search stopped; null before the first search. */
  private @Nullable ChainCursor cursor;

  private long passedValid;
  /** Whether the last search read up to the horizon (no record of the count left unread). */
  private boolean atHorizon;

  /** The store as the last search left it. */
  private long seenCount;
  private int seenSegments = -1;
  private long seenFree = -1;
  private long stopWord0;
  private long stopWord8;

  /** An index of the chain of {@code records} starting at global offset {@code start}. */
  ChainIndex(long start, DstoreFormat records) {
    this.start = start;
    this.records = records;
  }

  /** The global offset of the chain's first record this index is about. */
  long start() {
    return start;
  }

  /**
   * The global offset of the first valid record of {@code key} in the chain, reading the records
   * written since the last call; {@link #MISS} when the chain does not hold it, {@link #STALE}
   * when a new index must be asked instead (never from a new index).
   *
   * @param data the namespace's data segments (the reader's list, which grows with the store)
   * @param count the meta entry's count of valid records
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if a record does not fit
   *     its segment or the chain does not end; the index must then be dropped
   */
  long find(List<Segment> data, long count, byte[] key) {
    ChainCursor c = cursor;
    boolean fresh = c == null;
    if (c == null) {
      c = new ChainCursor(data, records, start);
      cursor = c;
    }
    long free = data.get(data.size() - 1).u64(0);
    boolean changed =
        count != seenCount
            || data.size() != seenSegments
            || free != seenFree
            || c.word(0) != stopWord0
            || c.word(8) != stopWord8;
    if (changed && !fresh) {
      if (count < passedValid) {
        return STALE; // the chain now ends among the records passed
      }
      if (!c.slotsUnchanged()) {
        return STALE;
      }
      // Records may have been written after where the last search stopped.
      atHorizon = false;
    }
    long found;
    Long known = keys.get(mapKey(key));
    if (known != null) {
      found = c.holds(known, key) ? known : STALE;
    } else if (atHorizon) {
      found = MISS;
    } else {
      found = readOn(c, count, key);
      if (found == STALE && fresh) {
        // A new index reads what a walk reads: the chain as the writer left it.
        found = MISS;
      }
    }
    seenCount = count;
    seenSegments = data.size();
    seenFree = free;
    stopWord0 = c.word(0);
    stopWord8 = c.word(8);
    return found;
  }

  /**
   * Reads records from where the last search stopped until {@code key}'s or the horizon of
   * {@code count}: the key's offset, {@link #MISS}, or {@link #STALE} when the records read do
   * not account for the change (see the class comment).
   */
  private long readOn(ChainCursor c, long count, byte[] key) {
    long remaining = count - passedValid;
    c.allowSteps();
    while (remaining > 0) {
      DstoreFormat.Item r = c.next();
      if (r == null) {
        // The chain ends before its count does.
        atHorizon = true;
        return STALE;
      }
      // A key held twice (as the job-level data holds one): the first answers. A key replaced
      // since its record was passed leaves the count short of the chain's end, which the check
      // at the horizon sends to a new index.
      keys.putIfAbsent(mapKey(r.key()), c.last());
      passedValid++;
      remaining--;
      if (Arrays.equals(r.key(), key)) {
        return c.last(); // not a key known before: find answered those
      }
    }
    // At the horizon the chain must end: records beyond it mean a count the records passed do
    // not account for.
    atHorizon = true;
    return c.atEnd() ? MISS : STALE;
  }

  private static String mapKey(byte[] key) {
    return new String(key, StandardCharsets.ISO_8859_1);
  }
}
