package io.pmix.common.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Where the system's dynamic linker looks for shared libraries after an object's own search
 * paths and {@code LD_LIBRARY_PATH}: the directories {@code ldconfig} builds its cache from
 * ({@code /etc/ld.so.conf} and the files it includes) and the default ones. Read from the files,
 * without running {@code ldconfig} (a process) and without regular expressions (this runs in
 * fresh JVMs, where compiling one costs more than the rest of this class).
 */
public final class LinkerPaths {
  private LinkerPaths() {}

  /**
   * Debian's multiarch directory name of this JVM's architecture ({@code x86_64-linux-gnu}), or
   * null for one this class does not know.
   */
  public static @Nullable String triplet() {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    return switch (arch) {
      case "amd64", "x86_64" -> "x86_64-linux-gnu";
      case "aarch64" -> "aarch64-linux-gnu";
      case "ppc64le" -> "powerpc64le-linux-gnu";
      case "s390x" -> "s390x-linux-gnu";
      case "riscv64" -> "riscv64-linux-gnu";
      default -> null;
    };
  }

  /**
   * The directories the dynamic linker's cache is made from (what JNA's ldconfig call would list), under {@code root} ("/" but in tests): those
   * named in {@code etc/ld.so.conf} and the files it includes, the multiarch directories of
   * {@code triplet} (when known), then {@code lib64} and {@code lib} of {@code /usr} and of the
   * root; only those that exist, each once, in that order.
   */
  public static List<String> platformPath(Path root, @Nullable String triplet) {
    Set<String> dirs = new LinkedHashSet<>();
    readLdConf(root, root.resolve("etc/ld.so.conf"), dirs, 0);
    if (triplet != null) {
      dirs.add("/usr/lib/" + triplet);
      dirs.add("/lib/" + triplet);
    }
    dirs.addAll(List.of("/usr/lib64", "/lib64", "/usr/lib", "/lib"));
    List<String> existing = new ArrayList<>();
    for (String d : dirs) {
      if (Files.isDirectory(root.resolve(d.substring(1)))) {
        existing.add(d);
      }
    }
    return List.copyOf(existing);
  }

  /** Adds the directories of one ld.so.conf file, following its {@code include} lines. */
  private static void readLdConf(Path root, Path file, Set<String> dirs, int depth) {
    List<String> lines;
    try {
      lines = lines(file);
    } catch (IOException | RuntimeException e) {
      return;
    }
    for (String raw : lines) {
      int hash = raw.indexOf('#');
      String line = (hash >= 0 ? raw.substring(0, hash) : raw).trim();
      if (line.startsWith("include") && line.length() > 7
          && Character.isWhitespace(line.charAt(7))) {
        if (depth < 4) {
          for (String pattern : words(line.substring(8))) {
            include(root, file, pattern, dirs, depth);
          }
        }
      } else if (line.startsWith("/")) {
        dirs.add(line);
      }
    }
  }

  /**
   * The lines of {@code file}, read through {@code java.io}: {@code Files.readAllLines} would load
   * the JDK's file-channel classes, ~30 of them, in a JVM that may need none (a client's init,
   * pmixrun's start).
   */
  private static List<String> lines(Path file) throws IOException {
    byte[] bytes;
    try (FileInputStream in = new FileInputStream(file.toFile())) {
      bytes = in.readAllBytes();
    }
    List<String> out = new ArrayList<>();
    int from = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == '\n') {
        if (i > from || i < bytes.length) {
          out.add(new String(bytes, from, i - from, UTF_8));
        }
        from = i + 1;
      }
    }
    return out;
  }

  /** The blank-separated words of {@code s} (no regular expression: see {@link #include}). */
  private static List<String> words(String s) {
    List<String> out = new ArrayList<>();
    int i = 0;
    while (i < s.length()) {
      while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
        i++;
      }
      int start = i;
      while (i < s.length() && !Character.isWhitespace(s.charAt(i))) {
        i++;
      }
      if (i > start) {
        out.add(s.substring(start, i));
      }
    }
    return out;
  }

  /**
   * The files an {@code include} pattern names, sorted: a {@code *} in its last component matches
   * any run of characters (ld.so.conf's patterns are globs; Debian's is {@code
   * /etc/ld.so.conf.d/*.conf}); other glob characters are taken literally. No regular expression:
   * this runs in a fresh JVM, where compiling one costs more than the rest of this class.
   */
  private static void include(Path root, Path from, String pattern, Set<String> dirs, int depth) {
    Path p =
        pattern.startsWith("/")
            ? root.resolve(pattern.substring(1))
            : from.getParent().resolve(pattern);
    Path dir = p.getParent();
    String name = p.getFileName().toString();
    int star = name.indexOf('*');
    List<String> names = new ArrayList<>();
    if (star < 0) {
      names.add(name);
    } else if (dir != null) {
      String[] listed = dir.toFile().list();
      String head = name.substring(0, star);
      String tail = name.substring(name.lastIndexOf('*') + 1);
      for (String n : listed == null ? new String[0] : listed) {
        if (n.length() >= head.length() + tail.length() && n.startsWith(head) && n.endsWith(tail)) {
          names.add(n);
        }
      }
    }
    names.sort(null);
    for (String n : names) {
      readLdConf(root, dir == null ? Path.of(n) : dir.resolve(n), dirs, depth + 1);
    }
  }
}
