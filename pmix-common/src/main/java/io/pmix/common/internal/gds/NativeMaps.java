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
    for (int i = 0; i < name.length(); i++) {
      if (name.charAt(i) >= 0x80 || name.charAt(i) == 0) {
        return null;
      }
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

  private static native @Nullable ByteBuffer map0(byte[] path, boolean writable, int[] err);

  private static native int unmap0(ByteBuffer mapped);
}
