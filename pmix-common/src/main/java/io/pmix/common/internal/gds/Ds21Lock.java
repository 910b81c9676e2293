package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * ds21's reader lock (docs/gds.md section 5): this process's pair of process-shared mutexes in
 * the lock segment {@code smlockseg-<own namespace>}. Read lock: the slot's "signal" mutex, then
 * its main mutex, then the signal mutex released; unlock: the main mutex. The server's writer
 * takes every signal mutex and then every main mutex, so it waits for current readers and stops
 * new ones.
 *
 * <p>Threads of this process share the slot through its Java lock. Thread-safe.
 */
final class Ds21Lock implements ReaderLock {
  /** Offsets in the segment header. */
  static final int SEG_SIZE = 0;

  static final int NUM_LOCKS = 8;
  static final int ALIGN_SIZE = 16;
  static final int MUTEX_OFFS = 24;

  /** Upper bound of the distance between mutexes that we accept. */
  private static final long MAX_ALIGN = 4096;

  private final Segment seg;
  private final LockSlots.Slot slot;
  private final long signal;
  private final long main;
  private final String what;
  // The names a failure gives, made once: a reader locks and unlocks at every get, and building
  // them there was most of a lock's cost (docs/gds.md §7, "A search by key").
  private final String whatSignal;
  private final String whatMain;

  private Ds21Lock(Segment seg, LockSlots.Slot slot, long align, long mutexOffs) {
    this.seg = seg;
    this.slot = slot;
    this.signal = PosixLocks.address(seg.buffer(), mutexOffs + align * (2L * slot.index));
    this.main = PosixLocks.address(seg.buffer(), mutexOffs + align * (2L * slot.index + 1));
    this.what = "ds21 lock " + seg.name() + " slot " + slot.index;
    this.whatSignal = what + " (signal)";
    this.whatMain = what + " (main)";
  }

  /**
   * Attaches the lock segment of namespace {@code ownNspace} and claims (or reuses) this
   * process's slot.
   *
   * @throws PmixException {@code PMIX_ERR_NOT_AVAILABLE} if the segment is missing or every slot
   *     is taken (libpmix then falls back to another module), {@code PMIX_ERR_UNPACK_FAILURE} if
   *     its header is inconsistent
   */
  static Ds21Lock attach(SegmentSource source, String ownNspace) {
    String file = "smlockseg-" + ownNspace;
    String identity = source.identity(file);
    Segment seg = source.open(file, true);
    try {
      long segSize = seg.u64(SEG_SIZE);
      long numLocks = Integer.toUnsignedLong(seg.i32(NUM_LOCKS));
      long align = seg.u64(ALIGN_SIZE);
      long mutexOffs = seg.u64(MUTEX_OFFS);
      if (segSize <= 0 || segSize > seg.size()) {
        throw Segment.corrupt(file, "segment size " + segSize + " but " + seg.size() + " mapped");
      }
      if (numLocks < 1 || numLocks > (segSize - LockSlots.IN_USE_OFFSET) / 4) {
        throw Segment.corrupt(file, "lock count " + numLocks);
      }
      if (align < PosixLocks.MUTEX_SIZE || align > MAX_ALIGN || align % 8 != 0) {
        throw Segment.corrupt(file, "mutex spacing " + align);
      }
      if (mutexOffs < LockSlots.IN_USE_OFFSET + 4 * numLocks
          || mutexOffs % 8 != 0
          || mutexOffs > segSize
          || (segSize - mutexOffs) / align < 2 * numLocks) {
        throw Segment.corrupt(file, "mutex array at " + mutexOffs + " does not fit");
      }
      LockSlots.Slot slot = LockSlots.claim(identity, seg, (int) numLocks);
      if (slot == null) {
        throw new PmixException(
            Status.ERR_NOT_AVAILABLE, file + ": all " + numLocks + " reader slots are taken");
      }
      return new Ds21Lock(seg, slot, align, mutexOffs);
    } catch (RuntimeException e) {
      seg.close();
      throw e;
    }
  }

  /** This process's slot index. */
  int slotIndex() {
    return slot.index;
  }

  @Override
  public void lock(Duration timeout) {
    long deadline = PosixLocks.deadline(timeout);
    try {
      if (!slot.jvmLock.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new PmixException(Status.ERR_TIMEOUT, what + ": busy in this process");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PmixException(Status.ERR_TIMEOUT, what + ": interrupted", e);
    }
    try {
      PosixLocks.lockMutex(signal, deadline, whatSignal);
      try {
        PosixLocks.lockMutex(main, deadline, whatMain);
      } finally {
        PosixLocks.unlockMutex(signal, whatSignal);
      }
    } catch (RuntimeException e) {
      slot.jvmLock.unlock();
      throw e;
    }
  }

  @Override
  public void unlock() {
    try {
      PosixLocks.unlockMutex(main, whatMain);
    } finally {
      slot.jvmLock.unlock();
    }
  }

  @Override
  public void close() {
    // The slot stays ours (libpmix never frees one): only the mapping goes.
    seg.close();
  }
}
