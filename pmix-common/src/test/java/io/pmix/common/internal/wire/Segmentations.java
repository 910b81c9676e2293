package io.pmix.common.internal.wire;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The ways a peer's bytes may be cut by TCP, as decoder tests feed them: whole, one byte at a time,
 * and split in two at every position.
 */
final class Segmentations {
  private Segmentations() {}

  /** A named list of segments whose concatenation is the input. */
  record Segmentation(String name, List<byte[]> segments) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Segmentation> of(byte[] bytes) {
    List<Segmentation> all = new ArrayList<>();
    all.add(new Segmentation("whole", List.of(bytes)));
    List<byte[]> single = new ArrayList<>();
    for (byte b : bytes) {
      single.add(new byte[] {b});
    }
    all.add(new Segmentation("byte by byte", single));
    for (int i = 1; i < bytes.length; i++) {
      all.add(
          new Segmentation(
              "split at " + i,
              List.of(
                  Arrays.copyOfRange(bytes, 0, i), Arrays.copyOfRange(bytes, i, bytes.length))));
    }
    return all;
  }
}
