package io.pmix.common.internal.gds;

import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A position in one rank's record chain and the step to its next key's record (docs/gds.md §3):
 * invalidated records are stepped over, extension slots followed (and remembered, with where each
 * pointed), every offset is checked against the segments, and the steps are bounded, so that a
 * chain that loops is a corrupt store, not an endless read. The one place the chain is stepped
 * along: by the walk of a whole chain ({@code DstoreReader}) and by {@link ChainIndex}.
 *
 * <p>Not thread-safe: used under the reader's lock by one call at a time.
 */
final class ChainCursor {
  private final List<Segment> data;
  private final long dataSize;
  private final DstoreFormat records;
  /** Where an extension slot's value lies from the slot's start. */
  private final int valueOffset;

  private int segment;
  private long at;
  private long budget;
  private long last = -1;

  /**
   * The extension slots followed, each as its segment and the offset of its value there, and where
   * each pointed: a changed store's search checks them all, so each check is one read, no division.
   */
  private Segment[] slotSegments = new Segment[4];
  private long[] slotValues = new long[4];
  private long[] links = new long[4];
  private int nslots;

  /**
   * A cursor at global offset {@code start} of the namespace's data segments {@code data} (a list
   * the reader extends as the server adds segments), all of the first one's size.
   *
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if {@code start} lies
   *     outside the data
   */
  ChainCursor(List<Segment> data, DstoreFormat records, long start) {
    this.data = data;
    this.dataSize = data.get(0).size();
    this.records = records;
    this.valueOffset = records.extensionValueOffset();
    if (start < 0 || start >= dataSize * data.size()) {
      throw Segment.corrupt(data.get(0).name(), "rank data at " + start + " beyond the data");
    }
    segment = (int) (start / dataSize);
    at = start % dataSize;
    allowSteps();
  }

  /**
   * Allows as many more steps as the segments have room for records: every step reads a record of
   * at least 17 bytes or follows an extension slot, so more steps than that means a cycle.
   */
  void allowSteps() {
    budget = dataSize * data.size() / 17 + 16;
  }

  /**
   * The next key's record, the cursor moved past it; null where the chain ends for now, at an
   * extension slot pointing nowhere, which stays the next record to read (the writer fills it, or
   * writes over it, when the rank's data goes on).
   *
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if a record does not fit
   *     its segment, a slot points outside the data, or the steps allowed are used up
   */
  DstoreFormat.@Nullable Item next() {
    long total = dataSize * data.size();
    while (true) {
      Segment seg = data.get(segment);
      if (--budget < 0) {
        throw Segment.corrupt(seg.name(), "a record chain does not end");
      }
      DstoreFormat.Item r = records.parse(seg, at);
      switch (r.kind()) {
        case INVALIDATED:
          at += r.size();
          break;
        case EXTENSION:
          long next = DstoreFormat.extensionTarget(seg, at, r, total);
          if (next == 0) {
            return null;
          }
          if (nslots == links.length) {
            slotSegments = Arrays.copyOf(slotSegments, 2 * nslots);
            slotValues = Arrays.copyOf(slotValues, 2 * nslots);
            links = Arrays.copyOf(links, 2 * nslots);
          }
          slotSegments[nslots] = seg;
          slotValues[nslots] = at + valueOffset;
          links[nslots++] = next;
          segment = (int) (next / dataSize);
          at = next % dataSize;
          break;
        case VALUE:
          last = segment * dataSize + at;
          at += r.size();
          return r;
      }
    }
  }

  /** The global offset of the record {@link #next} returned last. */
  long last() {
    return last;
  }

  /** The segment of the record {@link #next} returned last (its data lies there). */
  Segment lastSegment() {
    return data.get((int) (last / dataSize));
  }

  /** Whether every extension slot followed still points where it did. */
  boolean slotsUnchanged() {
    for (int i = 0; i < nslots; i++) {
      if (slotSegments[i].u64(slotValues[i]) != links[i]) {
        return false;
      }
    }
    return true;
  }

  /** Whether the record at global offset {@code where} is a valid record of {@code key}. */
  boolean holds(long where, byte[] key) {
    return records.isValueOf(data.get((int) (where / dataSize)), where % dataSize, key);
  }

  /**
   * The word {@code offset} bytes into the next record to read, or {@link Long#MIN_VALUE} past
   * its segment's end: what says whether that record changed.
   */
  long word(int offset) {
    Segment seg = data.get(segment);
    long local = at + offset;
    return local >= 0 && local <= seg.size() - 8 ? seg.u64(local) : Long.MIN_VALUE;
  }

  /** Whether the next record to read is a closing extension slot: the chain ends there. */
  boolean atEnd() {
    Segment seg = data.get(segment);
    try {
      DstoreFormat.Item end = records.parse(seg, at);
      return end.kind() == DstoreFormat.Kind.EXTENSION
          && end.dataLength() >= 8
          && seg.u64(end.dataAt()) == 0;
    } catch (io.pmix.common.PmixException e) {
      // Not a record: the writer left the chain without its closing slot.
      return false;
    }
  }
}
