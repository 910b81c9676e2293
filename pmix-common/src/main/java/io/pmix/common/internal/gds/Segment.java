package io.pmix.common.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One shared-memory segment of a libpmix store: the bytes of one file, mapped, read with bounds
 * checks. Another process writes these bytes, so every offset and length read from them is
 * checked before it is used: an access outside the segment is a {@link PmixException} with {@code
 * PMIX_ERR_UNPACK_FAILURE}, never an unchecked exception.
 *
 * <p>{@link #close} unmaps a mapped segment at once (not at some later garbage collection), so a
 * process cycling init/finalize does not accumulate mappings; the owner must make sure nobody
 * reads it afterwards. Not thread-safe: its owner serialises access.
 */
final class Segment implements AutoCloseable {
  /**
   * How a mapping is made and unmapped before garbage collection when {@code libpmixjava} is not
   * loaded (with it, {@link #mapFile} maps through {@link NativeMaps}). From Java 22 on: the file
   * mapped into a shared {@code java.lang.foreign.Arena}, closed to unmap (reached through method
   * handles, since this code is compiled for 17; not a restricted method, so no warning). Before
   * 22: {@code FileChannel.map} and {@code sun.misc.Unsafe.invokeCleaner}, the one way Java 17
   * has; JDK 24 and later warn at its first use ("terminally deprecated"), which a rank on JDK 25
   * printed on its stderr, hence the arena there.
   */
  private static final class Mapping {
    static final @Nullable MethodHandle OF_SHARED;
    static final @Nullable MethodHandle MAP;
    static final @Nullable MethodHandle AS_BYTE_BUFFER;
    static final @Nullable MethodHandle CLOSE;

    static {
      MethodHandle ofShared = null;
      MethodHandle map = null;
      MethodHandle asByteBuffer = null;
      MethodHandle close = null;
      if (Runtime.version().feature() >= 22) {
        try {
          MethodHandles.Lookup l = MethodHandles.publicLookup();
          Class<?> arena = Class.forName("java.lang.foreign.Arena");
          Class<?> memorySegment = Class.forName("java.lang.foreign.MemorySegment");
          ofShared = l.findStatic(arena, "ofShared", MethodType.methodType(arena));
          map =
              l.findVirtual(
                  FileChannel.class,
                  "map",
                  MethodType.methodType(
                      memorySegment, FileChannel.MapMode.class, long.class, long.class, arena));
          asByteBuffer =
              l.findVirtual(memorySegment, "asByteBuffer", MethodType.methodType(ByteBuffer.class));
          close = l.findVirtual(arena, "close", MethodType.methodType(void.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
          ofShared = null;
        }
      }
      OF_SHARED = ofShared;
      MAP = map;
      AS_BYTE_BUFFER = asByteBuffer;
      CLOSE = close;
    }

    private Mapping() {}
  }

  /**
   * {@code sun.misc.Unsafe.invokeCleaner}, for JDKs without arenas; found on first use (never on a
   * JDK that maps into arenas); {@code null} if the JDK does not offer it, and then mappings go
   * with the garbage collector.
   */
  private static final class Cleaner {
    static final @Nullable MethodHandle INVOKE_CLEANER = findInvokeCleaner();

    private Cleaner() {}
  }

  private static @Nullable MethodHandle findInvokeCleaner() {
    try {
      Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
      Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
      theUnsafe.setAccessible(true);
      return MethodHandles.lookup()
          .findVirtual(
              unsafeClass, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
          .bindTo(theUnsafe.get(null));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Maps {@code size} bytes of {@code ch} from its start (the mapping outlives the channel) as
   * the segment {@code name}, to be unmapped by {@link #close}.
   *
   * @throws IOException if the mapping fails
   */
  static Segment map(String name, FileChannel ch, FileChannel.MapMode mode, long size)
      throws IOException {
    MethodHandle ofShared = Mapping.OF_SHARED;
    if (ofShared != null) {
      Object arena;
      try {
        arena = ofShared.invoke();
      } catch (Throwable e) {
        throw new IOException("cannot make an arena: " + e, e);
      }
      try {
        Object segment = requireNonNull(Mapping.MAP).invoke(ch, mode, 0L, size, arena);
        ByteBuffer b = (ByteBuffer) requireNonNull(Mapping.AS_BYTE_BUFFER).invoke(segment);
        return new Segment(name, b, arena, false);
      } catch (IOException | RuntimeException | Error e) {
        closeArena(arena);
        throw e;
      } catch (Throwable e) {
        closeArena(arena);
        throw new IOException("cannot map: " + e, e);
      }
    }
    return new Segment(name, ch.map(mode, 0, size), null, false);
  }

  private static void closeArena(Object arena) {
    try {
      requireNonNull(Mapping.CLOSE).invoke(arena);
    } catch (Throwable e) {
      // Not unmapped now (a thread still in it): the arena's owner is gone, the GC unmaps.
    }
  }

  private final String name;
  private final ByteBuffer original;
  private final ByteBuffer bytes;
  /** The {@code Arena} of its mapping ({@link #map} on Java 22 and later), else null. */
  private final @Nullable Object arena;
  /** Whether {@link NativeMaps} mapped it (and unmaps it). */
  private final boolean nativeMapping;
  private boolean closed;

  /**
   * A segment over {@code bytes} (positions 0 to capacity), read in the machine's byte order.
   *
   * @param name what messages call it (the file name)
   */
  Segment(String name, ByteBuffer bytes) {
    this(name, bytes, null, false);
  }

  private Segment(
      String name, ByteBuffer bytes, @Nullable Object arena, boolean nativeMapping) {
    requireNonNull(bytes, "bytes");
    this.name = requireNonNull(name, "name");
    this.bytes = bytes.duplicate().order(ByteOrder.nativeOrder());
    this.original = bytes;
    this.arena = arena;
    this.nativeMapping = nativeMapping;
  }

  /**
   * The file {@code p} mapped whole through {@link NativeMaps} as the segment {@code name}, to be
   * unmapped by {@link #close}; null when that way is not available for it ({@link #map} then).
   *
   * @throws java.nio.file.NoSuchFileException if there is no such file
   * @throws IOException if the mapping fails
   */
  static @Nullable Segment mapFile(String name, java.nio.file.Path p, boolean writable)
      throws IOException {
    if (!NativeMaps.available()) {
      return null;
    }
    ByteBuffer b = NativeMaps.map(p, writable);
    return b == null ? null : new Segment(name, b, null, true);
  }

  /** The file name. */
  String name() {
    return name;
  }

  /** The size in bytes. */
  int size() {
    return bytes.capacity();
  }

  /** The buffer itself (for native locks and atomic updates of a lock segment). */
  ByteBuffer buffer() {
    return original;
  }

  /** The unsigned 64-bit {@code size_t} at {@code offset}, as a long (may be negative). */
  long u64(long offset) {
    check(offset, 8);
    return bytes.getLong((int) offset);
  }

  /** The 32-bit integer at {@code offset}. */
  int i32(long offset) {
    check(offset, 4);
    return bytes.getInt((int) offset);
  }

  /** The byte at {@code offset}. */
  byte u8(long offset) {
    check(offset, 1);
    return bytes.get((int) offset);
  }

  /** A copy of {@code length} bytes at {@code offset}. */
  byte[] copy(long offset, long length) {
    check(offset, length);
    byte[] out = new byte[(int) length];
    bytes.get((int) offset, out);
    return out;
  }

  /** Writes the 64-bit {@code value} at {@code offset} (a writable mapping: the server's). */
  void putU64(long offset, long value) {
    check(offset, 8);
    bytes.putLong((int) offset, value);
  }

  /** Writes the 32-bit {@code value} at {@code offset}. */
  void putI32(long offset, int value) {
    check(offset, 4);
    bytes.putInt((int) offset, value);
  }

  /** Writes {@code data} at {@code offset}. */
  void put(long offset, byte[] data) {
    check(offset, data.length);
    bytes.put((int) offset, data);
  }

  /** How many bytes {@link #cString} reads at first: any key libpmix writes, nearly. */
  private static final int C_STRING_CHUNK = 64;

  /**
   * The bytes from {@code offset} up to the first NUL before {@code limit} (without it), or null
   * when there is none there. Read in bulk and scanned in an array: read a byte at a time through
   * the buffer, ~10 calls a byte, a search's keys cost a fresh JVM ~1 µs a byte interpreted
   * (docs/gds.md, "A search by key").
   */
  byte @Nullable [] cString(long offset, long limit) {
    check(offset, 0);
    long end = Math.min(limit, size());
    if (end <= offset) {
      return null;
    }
    int n = (int) Math.min(end - offset, C_STRING_CHUNK);
    byte[] b = new byte[n];
    bytes.get((int) offset, b);
    for (int i = 0; i < n; i++) {
      if (b[i] == 0) {
        return Arrays.copyOf(b, i);
      }
    }
    if (offset + n == end) {
      return null;
    }
    // A longer one: the rest at once (a caller's limit keeps this to a key's bound).
    byte[] all = Arrays.copyOf(b, (int) (end - offset));
    bytes.get((int) offset + n, all, n, all.length - n);
    for (int i = n; i < all.length; i++) {
      if (all[i] == 0) {
        return Arrays.copyOf(all, i);
      }
    }
    return null;
  }

  /**
   * Whether the bytes at {@code offset} are {@code key} followed by a NUL, all before {@code
   * limit}: compared without parsing the record (one bulk read, as {@link #cString}).
   */
  boolean holdsKey(long offset, byte[] key, long limit) {
    long nul = offset + key.length;
    if (nul >= Math.min(limit, size())) {
      return false;
    }
    check(offset, key.length + 1L);
    byte[] here = new byte[key.length + 1];
    bytes.get((int) offset, here);
    return here[key.length] == 0 && Arrays.equals(here, 0, key.length, key, 0, key.length);
  }

  /** Fails unless {@code [offset, offset + length)} lies inside the segment. */
  void check(long offset, long length) {
    if (closed) {
      throw new IllegalStateException(name + " is closed");
    }
    if (offset < 0 || length < 0 || offset > size() || length > size() - offset) {
      throw corrupt(name, "range " + offset + "+" + length + " outside its " + size() + " bytes");
    }
  }

  /** A corrupt-store failure about {@code segment}. */
  static PmixException corrupt(String segment, String what) {
    return new PmixException(Status.ERR_UNPACK_FAILURE, "gds segment " + segment + ": " + what);
  }

  /** Unmaps a mapped segment; idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (nativeMapping) {
      // Refused only for a buffer that is not such a mapping: nothing then to unmap.
      boolean unused = NativeMaps.unmap(original);
      return;
    }
    if (arena != null) {
      closeArena(arena);
      return;
    }
    if (!(original instanceof MappedByteBuffer)) {
      return;
    }
    MethodHandle cleaner = Cleaner.INVOKE_CLEANER;
    if (cleaner != null) {
      // Unmaps now; without it the mapping lives until the buffer is garbage collected.
      try {
        cleaner.invokeExact(original);
      } catch (Throwable e) {
        // Not unmapped now (the JDK refused): the garbage collector will do it.
      }
    }
  }
}
