package io.pmix.common.internal;

import io.pmix.common.internal.connector.LocalProcess;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Makes JNA's first use in a process cheap; {@link #prepare} runs before any class of JNA is
 * initialized (the classes that call C through JNA call it in their static initializers).
 *
 * <p>A fresh JNA spends two avoidable costs in every process, measured on the 2-core test machine
 * as about a third of its ~120 ms first load (docs/architecture.md, "Start-up of the client"):
 *
 * <ul>
 *   <li><b>{@code /sbin/ldconfig -p} in a subprocess</b>, from {@code NativeLibrary}'s static
 *       initializer, only to list the directories of the linker's cache as fallback search paths
 *       ({@code jna.platform.library.path}). The libraries pmix-java loads (libc) are found by
 *       {@code dlopen} itself, which reads the same cache. This sets the property, when nobody
 *       has, to the directories ldconfig reads ({@code /etc/ld.so.conf} and the files it includes)
 *       and the system's default ones: what the subprocess would have listed, without it.
 *   <li><b>Unpacking its native part</b> ({@code libjnidispatch.so}) from its jar to a new
 *       temporary file at every start, named through {@code SecureRandom} (which initializes the
 *       JDK's security providers). This keeps one verified copy in the user's own cache ({@link
 *       NativeCache}, {@code pmix-java/jna/}) and points {@code jna.boot.library.path} at it,
 *       when nobody has set that property.
 * </ul>
 *
 * <p>Whatever fails here (no home directory, a read-only one, a directory someone else owns)
 * leaves JNA to its own defaults: the first load is slower, nothing else changes.
 */
public final class JnaStartup {
  private static final System.Logger LOG = LazyLogger.of(JnaStartup.class);

  /** JNA's property for its fallback library search path. */
  static final String PLATFORM_PATH = "jna.platform.library.path";

  /** JNA's property for where to look for its native part before unpacking it. */
  static final String BOOT_PATH = "jna.boot.library.path";

  private static boolean prepared;

  private JnaStartup() {}

  /**
   * Sets JNA's start-up properties as the class comment says, once per process; never overrides a
   * property the application set. Cheap after the first call.
   */
  public static synchronized void prepare() {
    if (prepared) {
      return;
    }
    prepared = true;
    String[] arch = architecture();
    if (!"Linux".equals(System.getProperty("os.name")) || arch == null) {
      return;
    }
    try {
      if (System.getProperty(PLATFORM_PATH) == null) {
        System.setProperty(PLATFORM_PATH, String.join(":", platformPath(Path.of("/"), arch[0])));
      }
      if (System.getProperty(BOOT_PATH) == null && System.getProperty("jna.nounpack") == null) {
        Path root = NativeCache.cacheRoot(System.getenv());
        // Loading the interface does not initialize JNA (that is what must come after prepare).
        Path jar = NativeCache.codeSourceOf(com.sun.jna.Library.class);
        if (root != null && jar != null && Files.isRegularFile(jar)) {
          Path dir =
              NativeCache.cachedCopy(
                  root,
                  "jna",
                  jar,
                  "com/sun/jna/" + arch[1] + "/libjnidispatch.so",
                  "libjnidispatch.so",
                  LocalProcess.effectiveIds()[0]);
          if (dir != null) {
            System.setProperty(BOOT_PATH, dir.toString());
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "JNA start-up shortcuts not taken", e);
    }
  }

  /**
   * The directories JNA's ldconfig call would list, under {@code root} ("/" but in tests): those
   * named in {@code etc/ld.so.conf} and the files it includes, the multiarch directories of
   * {@code triplet} (when known), then {@code lib64} and {@code lib} of {@code /usr} and of the
   * root; only those that exist, each once, in that order.
   */
  static List<String> platformPath(Path root, @Nullable String triplet) {
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
      lines = Files.readAllLines(file);
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

  /**
   * This JVM's architecture as {Debian's multiarch directory name, JNA's resource folder}, or
   * null for one this class does not know.
   */
  private static String @Nullable [] architecture() {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    return switch (arch) {
      case "amd64", "x86_64" -> new String[] {"x86_64-linux-gnu", "linux-x86-64"};
      case "aarch64" -> new String[] {"aarch64-linux-gnu", "linux-aarch64"};
      case "ppc64le" -> new String[] {"powerpc64le-linux-gnu", "linux-ppc64le"};
      case "s390x" -> new String[] {"s390x-linux-gnu", "linux-s390x"};
      case "riscv64" -> new String[] {"riscv64-linux-gnu", "linux-riscv64"};
      default -> null;
    };
  }
}
