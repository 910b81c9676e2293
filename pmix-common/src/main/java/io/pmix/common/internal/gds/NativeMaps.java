package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Segment files mapped and unmapped through {@code libpmixjava} ({@code mmap}, {@code munmap}):
 * the buffer has no cleaner, so {@link Segment#close} unmaps it at once with no JDK-internal API.
 * The JDK's own ways cost a fresh JVM more: {@code FileChannel.map} and, to unmap before garbage
 * collection, {@code sun.misc.Unsafe.invokeCleaner} through a method handle (~10 ms at a first
 * finalize on JDK 17), or a {@code java.lang.foreign.Arena} on JDK 22 and later (~15 ms more at
 * a first init on JDK 25). Used when the library is loaded; {@link Segment#map} otherwise.
 * Stateless and thread-safe.
 */
final class NativeMaps {
  /** {@code ENOENT}. */
  private static final int ENOENT = 2;

  /** {@code EFBIG}: larger than a buffer can be. */
  private static final int EFBIG = 27;

  private NativeMaps() {}

  /** Whether the library is there (loading it on first use). */
  static boolean available() {
    return JniPthreads.loaded();
  }

  /**
   * The whole file {@code p} mapped shared, read-write when {@code writable}; null when it cannot
   * be mapped this way but perhaps through the JDK (the file is empty, or its name is not ASCII,
   * whose bytes only the JDK knows how to encode).
   *
   * @throws NoSuchFileException if there is no such file
   * @throws PmixException {@code PMIX_ERR_NOT_SUPPORTED} for a file larger than a buffer (2 GiB)
   * @throws IOException for another failure, naming its {@code errno}
   */
  static @Nullable ByteBuffer map(Path p, boolean writable) throws IOException {
    String name = p.toString();
    if (!ascii(name)) {
      return null;
    }
    int[] err = new int[1];
    ByteBuffer b = map0(name.getBytes(StandardCharsets.US_ASCII), writable, err);
    if (b != null) {
      return b;
    }
    if (err[0] == 0) {
      return null;
    }
    if (err[0] == ENOENT) {
      throw new NoSuchFileException(name);
    }
    if (err[0] == EFBIG) {
      throw new PmixException(Status.ERR_NOT_SUPPORTED, "segment " + name + " is too large");
    }
    throw new IOException("cannot map " + name + ": errno " + err[0]);
  }

  /** Unmaps a buffer {@link #map} made; false if the kernel refused. */
  static boolean unmap(ByteBuffer mapped) {
    return unmap0(mapped) == 0;
  }

  /**
   * The device and inode numbers of the file {@code p} (symbolic links followed), as {@code
   * {dev, ino}}; null when they cannot be had this way (a name that is not ASCII, a kernel without
   * {@code statx}, or no such file: the caller then asks the JDK, which says why). One system
   * call, where the JDK's attributes and real path took a fresh JVM ~0.25 ms and a later init
   * ~0.06 ms (docs/architecture.md, "The ds21 lock slot through the native library").
   */
  static long @Nullable [] fileId(Path p) {
    String name = p.toString();
    if (!ascii(name)) {
      return null;
    }
    long[] id = new long[2];
    return fileId0(name.getBytes(StandardCharsets.US_ASCII), id) == 0 ? id : null;
  }

  /**
   * Atomically sets the aligned native-order int at {@code offset} of the direct buffer {@code b}
   * to {@code update} if it holds {@code expect}, as libpmix's clients claim a lock slot; the
   * offset must have been checked against the buffer. Returns null when the buffer has no address
   * (the caller then uses a {@code VarHandle}).
   */
  static @Nullable Boolean compareAndSetInt(ByteBuffer b, int offset, int expect, int update) {
    int r = compareAndSetInt0(b, offset, expect, update);
    return r < 0 ? null : r == 1;
  }

  private static boolean ascii(String name) {
    for (int i = 0; i < name.length(); i++) {
      if (name.charAt(i) >= 0x80 || name.charAt(i) == 0) {
        return false;
      }
    }
    return true;
  }

  private static native @Nullable ByteBuffer map0(byte[] path, boolean writable, int[] err);

  private static native int fileId0(byte[] path, long[] id);

  private static native int compareAndSetInt0(ByteBuffer b, int offset, int expect, int update);

  private static native int unmap0(ByteBuffer mapped);
}
