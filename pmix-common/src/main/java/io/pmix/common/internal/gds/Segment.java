package io.pmix.common.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
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
   * {@code sun.misc.Unsafe.invokeCleaner}, the JDK's one way to unmap a {@link MappedByteBuffer}
   * before it is garbage collected (Java 17 has no public API for it); {@code null} if the JDK
   * does not offer it, and then mappings go with the garbage collector.
   */
  private static final @Nullable MethodHandle INVOKE_CLEANER = findInvokeCleaner();

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

  private final String name;
  private final ByteBuffer original;
  private final ByteBuffer bytes;
  private boolean closed;

  /**
   * A segment over {@code bytes} (positions 0 to capacity), read in the machine's byte order.
   *
   * @param name what messages call it (the file name)
   */
  Segment(String name, ByteBuffer bytes) {
    requireNonNull(bytes, "bytes");
    this.name = requireNonNull(name, "name");
    this.bytes = bytes.duplicate().order(ByteOrder.nativeOrder());
    this.original = bytes;
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

  /**
   * The offset of the first NUL byte at or after {@code offset} and before {@code limit}, or -1.
   */
  long indexOfNul(long offset, long limit) {
    check(offset, 0);
    long end = Math.min(limit, size());
    for (long i = offset; i < end; i++) {
      if (bytes.get((int) i) == 0) {
        return i;
      }
    }
    return -1;
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
    MethodHandle cleaner = INVOKE_CLEANER;
    if (original instanceof MappedByteBuffer && cleaner != null) {
      // Unmaps now; without it the mapping lives until the buffer is garbage collected.
      try {
        cleaner.invokeExact(original);
      } catch (Throwable e) {
        // Not unmapped now (the JDK refused): the garbage collector will do it.
      }
    }
  }
}
