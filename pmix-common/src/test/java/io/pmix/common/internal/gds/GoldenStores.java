package io.pmix.common.internal.gds;

import static java.nio.charset.StandardCharsets.US_ASCII;

import com.google.common.io.BaseEncoding;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The segment files a real libpmix 4.2.2 server (pmix-testkit's host server, two
 * pmix_client_check clients: init, put, commit, fence with collection, get of every peer's keys)
 * wrote, dumped while its clients ran: the resources {@code ds21/} and {@code ds12/} of this
 * package, one {@code .hex} file per segment (its size, then the bytes up to the last non-zero
 * one).
 */
final class GoldenStores {
  static final List<String> DS21 =
      List.of(
          "initial-pmix_shared-segment-0", "smseg-cjob-0", "smdataseg-cjob-0", "smlockseg-cjob");
  static final List<String> DS12 =
      List.of(
          "initial-pmix_shared-segment-0", "smseg-cjob-0", "smdataseg-cjob-0", "dstore_sm.lock");

  /** The job-level keys the server stored (rank WILDCARD), in order. */
  static final List<String> WILDCARD_KEYS =
      List.of(
          "pmix.job.size",
          "pmix.max.size",
          "pmix.num.nodes",
          "pmix.job.napps",
          "pmix.nspace",
          "pmix.jobid",
          "pmix.nlist",
          "pmix.bfrops.mod",
          "pmix.node.size",
          "pmix.lpeers",
          "pmix.lldr",
          "pmix.local.size",
          "pmix.pdata");

  private GoldenStores() {}

  /** The files of store {@code kind} ("ds21" or "ds12"), full size, by name. */
  static Map<String, byte[]> load(String kind) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    for (String name : kind.equals("ds21") ? DS21 : DS12) {
      out.put(name, segment(kind + "/" + name + ".hex"));
    }
    return out;
  }

  private static byte[] segment(String resource) {
    try (InputStream in = GoldenStores.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no resource " + resource);
      }
      String[] lines = new String(in.readAllBytes(), US_ASCII).split("\n");
      byte[] out = null;
      int at = 0;
      for (String l : lines) {
        if (l.startsWith("#") || l.isBlank()) {
          continue;
        }
        if (l.startsWith("size ")) {
          out = new byte[Integer.parseInt(l.substring(5).trim())];
          continue;
        }
        byte[] b = BaseEncoding.base16().lowerCase().decode(l.trim());
        System.arraycopy(b, 0, out, at, b.length);
        at += b.length;
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes {@code files} into {@code dir} (sparse where they are zeros). */
  static void write(Path dir, Map<String, byte[]> files) throws IOException {
    Files.createDirectories(dir);
    for (Map.Entry<String, byte[]> e : files.entrySet()) {
      byte[] b = e.getValue();
      int end = b.length;
      while (end > 0 && b[end - 1] == 0) {
        end--;
      }
      try (RandomAccessFile f = new RandomAccessFile(dir.resolve(e.getKey()).toFile(), "rw")) {
        f.write(b, 0, end);
        f.setLength(b.length);
      }
    }
  }

  /** Frees every ds21 reader slot of a dumped lock segment (its clients had taken them all). */
  static void freeSlots(byte[] lockSegment) {
    int n = lockSegment[8] & 0xff;
    for (int i = 0; i < 4 * n; i++) {
      lockSegment[LockSlots.IN_USE_OFFSET + i] = 0;
    }
  }
}
