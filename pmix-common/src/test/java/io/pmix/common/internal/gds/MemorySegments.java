package io.pmix.common.internal.gds;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/** Segments held in memory (heap buffers), for tests that need no files and no native locks. */
final class MemorySegments implements SegmentSource {
  final Map<String, byte[]> files;

  MemorySegments(Map<String, byte[]> files) {
    this.files = new LinkedHashMap<>(files);
  }

  @Override
  public Segment open(String fileName, boolean writable) {
    byte[] b = files.get(fileName);
    if (b == null) {
      throw new PmixException(Status.ERR_NOT_AVAILABLE, "no segment " + fileName);
    }
    return new Segment(fileName, ByteBuffer.wrap(b));
  }

  @Override
  public long size(String fileName) {
    byte[] b = files.get(fileName);
    return b == null ? -1 : b.length;
  }

  @Override
  public String identity(String fileName) {
    return "memory:" + fileName;
  }
}
