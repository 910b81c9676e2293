package io.pmix.common.internal.gds;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
  /** Where an extension slot's value lies from the slot's start. */
  private final int valueOffset;
  private final Map<ByteBuffer, Long> keys = new HashMap<>();

  /** The extension slots followed (global offsets) and where each pointed. */
  private long[] slots = new long[8];
  private long[] links = new long[8];
  private int nslots;

  /** The next record to read; {@code segment} -1 before the first search. */
  private int segment = -1;
  private long at;
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
    this.valueOffset = records.extensionValueOffset();
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
   * @param data the namespace's data segments, all of {@code dataSize} bytes
   * @param count the meta entry's count of valid records
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if a record does not fit
   *     its segment or the chain does not end; the index must then be dropped
   */
  long find(List<Segment> data, long dataSize, long count, byte[] key) {
    boolean fresh = segment < 0;
    long total = dataSize * data.size();
    if (fresh) {
      if (start < 0 || start >= total) {
        throw Segment.corrupt(data.get(0).name(), "rank data at " + start + " beyond the data");
      }
      segment = (int) (start / dataSize);
      at = start % dataSize;
    }
    long free = data.get(data.size() - 1).u64(0);
    boolean changed =
        count != seenCount
            || data.size() != seenSegments
            || free != seenFree
            || peek(data.get(segment), at) != stopWord0
            || peek(data.get(segment), at + 8) != stopWord8;
    if (changed && !fresh) {
      if (count < passedValid) {
        return STALE; // the chain now ends among the records passed
      }
      for (int i = 0; i < nslots; i++) {
        long slot = slots[i];
        if (data.get((int) (slot / dataSize)).u64(slot % dataSize + valueOffset) != links[i]) {
          return STALE;
        }
      }
      // Records may have been written after where the last search stopped.
      atHorizon = false;
    }
    long found;
    Long known = keys.get(ByteBuffer.wrap(key));
    if (known != null) {
      found =
          records.isValueOf(data.get((int) (known / dataSize)), known % dataSize, key)
              ? known
              : STALE;
    } else if (atHorizon) {
      found = MISS;
    } else {
      found = readOn(data, dataSize, total, count, key);
      if (found == STALE && fresh) {
        // A new index reads what a walk reads: the chain as the writer left it.
        found = MISS;
      }
    }
    seenCount = count;
    seenSegments = data.size();
    seenFree = free;
    stopWord0 = peek(data.get(segment), at);
    stopWord8 = peek(data.get(segment), at + 8);
    return found;
  }

  /**
   * Reads records from where the last search stopped until {@code key}'s or the horizon of
   * {@code count}: the key's offset, {@link #MISS}, or {@link #STALE} when the records read do
   * not account for the change (see the class comment).
   */
  private long readOn(List<Segment> data, long dataSize, long total, long count, byte[] key) {
    long remaining = count - passedValid;
    // As in a full walk: every step reads a record of at least 17 bytes or follows an extension
    // slot, so more steps than the segments have room for records means a cycle.
    long budget = total / 17 + 16;
    while (remaining > 0) {
      if (--budget < 0) {
        throw Segment.corrupt(data.get(segment).name(), "a record chain does not end");
      }
      Segment seg = data.get(segment);
      DstoreFormat.Item r = records.parse(seg, at);
      switch (r.kind()) {
        case INVALIDATED:
          at += r.size();
          break;
        case EXTENSION:
          long next = DstoreFormat.extensionTarget(seg, at, r, total);
          if (next == 0) {
            // The chain ends before its count does.
            atHorizon = true;
            return STALE;
          }
          if (nslots == slots.length) {
            slots = Arrays.copyOf(slots, 2 * nslots);
            links = Arrays.copyOf(links, 2 * nslots);
          }
          slots[nslots] = segment * dataSize + at;
          links[nslots++] = next;
          segment = (int) (next / dataSize);
          at = next % dataSize;
          break;
        case VALUE:
          long here = segment * dataSize + at;
          ByteBuffer k = ByteBuffer.wrap(r.key());
          // A key held twice (as the job-level data holds one): the first answers. A key
          // replaced since its record was passed leaves the count short of the chain's end, which
          // the check at the horizon sends to a new index.
          keys.putIfAbsent(k, here);
          passedValid++;
          remaining--;
          at += r.size();
          if (Arrays.equals(r.key(), key)) {
            return here; // not a key known before: find answered those
          }
          break;
      }
    }
    // At the horizon the chain must end: records beyond it mean a count the records passed do
    // not account for.
    atHorizon = true;
    return endsAt(data.get(segment), at) ? MISS : STALE;
  }

  /** Whether the record at {@code local} of {@code seg} is a closing extension slot. */
  private boolean endsAt(Segment seg, long local) {
    try {
      DstoreFormat.Item end = records.parse(seg, local);
      return end.kind() == DstoreFormat.Kind.EXTENSION
          && end.dataLength() >= 8
          && seg.u64(end.dataAt()) == 0;
    } catch (io.pmix.common.PmixException e) {
      // Not a record: the writer left the chain without its closing slot.
      return false;
    }
  }

  /** The word at {@code local} of {@code seg}, or {@link Long#MIN_VALUE} past its end. */
  private static long peek(Segment seg, long local) {
    return local >= 0 && local <= seg.size() - 8 ? seg.u64(local) : Long.MIN_VALUE;
  }
}
