package io.pmix.common.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/** The segments of one store directory (a libpmix {@code pmix_dstor_<module>_<pid>}). */
final class DirectorySegments implements SegmentSource {
  private final Path dir;

  DirectorySegments(Path dir) {
    this.dir = requireNonNull(dir, "dir");
  }

  /** The directory. */
  Path dir() {
    return dir;
  }

  Path path(String fileName) {
    // File names are built from a namespace: one that leaves the directory is refused earlier
    // (DstoreReader.checkNamespace); this is the last line of defence.
    Path p = dir.resolve(fileName).normalize();
    if (!dir.normalize().equals(p.getParent())) {
      throw new PmixException(Status.ERR_BAD_PARAM, "segment name " + fileName + " leaves " + dir);
    }
    return p;
  }

  @Override
  public Segment open(String fileName, boolean writable) {
    Path p = path(fileName);
    try {
      Segment s = Segment.mapFile(fileName, p, writable);
      return s != null ? s : mapThroughJdk(fileName, p, writable);
    } catch (NoSuchFileException e) {
      throw new PmixException(Status.ERR_NOT_AVAILABLE, "no gds segment " + p, e);
    } catch (IOException e) {
      throw new PmixException(
          Status.ERR_NOT_AVAILABLE, "cannot map gds segment " + p + ": " + e.getMessage(), e);
    }
  }

  private static Segment mapThroughJdk(String fileName, Path p, boolean writable)
      throws IOException {
    try (FileChannel ch =
        writable
            ? FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)
            : FileChannel.open(p, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size > Integer.MAX_VALUE) {
        throw new PmixException(
            Status.ERR_NOT_SUPPORTED, "segment " + p + " of " + size + " bytes is too large");
      }
      // The mapping outlives the channel: closing the descriptor does not unmap.
      return Segment.map(
          fileName, ch, writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY,
          size);
    }
  }

  @Override
  public long size(String fileName) {
    try {
      return Files.size(path(fileName));
    } catch (IOException e) {
      return -1;
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>The path and the file's device and inode numbers: those name the file, and the path keeps a
   * new segment that got a deleted one's inode under another name from passing as the one a slot
   * was claimed in. Through {@code libpmixjava} when it is loaded (one {@code statx}), else the
   * JDK's attributes and real path (so does a name that is not ASCII, every time). Should the
   * two ways ever name one segment differently, the process claims a second slot in it: one slot
   * lost, nothing shared.
   */
  @Override
  public String identity(String fileName) {
    Path p = path(fileName);
    long[] id = NativeMaps.available() ? NativeMaps.fileId(p) : null;
    if (id != null) {
      return p + "#" + Long.toHexString(id[0]) + ":" + Long.toUnsignedString(id[1]);
    }
    try {
      Object key = Files.readAttributes(p, BasicFileAttributes.class).fileKey();
      return p.toRealPath() + "#" + key;
    } catch (IOException e) {
      throw new PmixException(Status.ERR_NOT_AVAILABLE, "no gds segment " + p, e);
    }
  }
}
