package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;

/**
 * Where a store's segments come from: the files of one directory ({@link DirectorySegments}), or,
 * in tests, bytes in memory.
 */
interface SegmentSource extends AutoCloseable {
  /**
   * The segment called {@code fileName}, mapped read-only (or read-write when {@code writable}, for
   * lock segments).
   *
   * @throws PmixException {@code PMIX_ERR_NOT_AVAILABLE} if it does not exist or cannot be mapped
   */
  Segment open(String fileName, boolean writable);

  /** The size of the segment called {@code fileName}, or -1 if it does not exist. */
  long size(String fileName);

  /** A name that identifies one instance of {@code fileName} (path and inode), for lock slots. */
  String identity(String fileName);

  /** Releases what the source itself holds (not the segments it handed out). */
  @Override
  default void close() {}
}
