package io.pmix.common.internal.gds;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The ds21 lock slots this process holds. libpmix never frees a slot: a process that claimed
 * slot i of a lock segment keeps it for the segment's life, and a libpmix client that initialises
 * again claims another, until none is left and it silently falls back to ds12 (docs/gds.md
 * section 5). So the slot is claimed once per process and lock segment and reused by every later
 * reader, across init/finalize cycles; threads of this process share it through its Java lock.
 *
 * <p>Process-wide by nature (what it records belongs to the process, not to one library cycle);
 * one small entry per lock segment ever attached. Thread-safe.
 */
final class LockSlots {
  /** Offset of the in-use array in a ds21 lock segment. */
  static final int IN_USE_OFFSET = 32;

  /** A slot: its index and the Java lock that serialises this process's users of it. */
  static final class Slot {
    final int index;
    final ReentrantLock jvmLock = new ReentrantLock();

    Slot(int index) {
      this.index = index;
    }
  }

  @GuardedBy("LockSlots.class")
  private static final Map<String, Slot> HELD = new HashMap<>();

  private LockSlots() {}

  /**
   * This process's slot in the lock segment {@code seg} (identified by {@code identity}): the one
   * claimed before, or the first free one, claimed now.
   *
   * @param numLocks how many slots the segment has (already checked against its size)
   * @return the slot, or {@code null} when every slot is taken
   */
  static synchronized @Nullable Slot claim(String identity, Segment seg, int numLocks) {
    Slot held = HELD.get(identity);
    if (held != null && held.index < numLocks && seg.i32(inUse(held.index)) == 1) {
      return held;
    }
    for (int i = 0; i < numLocks; i++) {
      seg.check(inUse(i), 4);
      // The C clients claim with an atomic compare-and-swap of the same int.
      if (compareAndSet(seg.buffer(), inUse(i), 0, 1)) {
        Slot s = new Slot(i);
        HELD.put(identity, s);
        return s;
      }
    }
    return null;
  }

  /**
   * The compare-and-swap, through {@code libpmixjava} when it is loaded: a {@code VarHandle} on a
   * byte buffer costs a fresh JVM four classes of java.lang.invoke and their set-up, ~0.8 ms of
   * its first init under a ds21 server (docs/architecture.md, "The ds21 lock slot through the
   * native library").
   */
  private static boolean compareAndSet(ByteBuffer b, int offset, int expect, int update) {
    if (b.isDirect() && NativeMaps.available()) {
      Boolean done = NativeMaps.compareAndSetInt(b, offset, expect, update);
      if (done != null) {
        return done;
      }
    }
    return Ints.VIEW.compareAndSet(b, offset, expect, update);
  }

  /** The JDK's view, made only where the native call is not there. */
  private static final class Ints {
    static final VarHandle VIEW =
        MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private Ints() {}
  }

  private static int inUse(int i) {
    return IN_USE_OFFSET + 4 * i;
  }
}
