package io.pmix.common.internal;

import io.pmix.common.internal.connector.LocalProcess;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
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
 *       JDK's security providers). This keeps one copy per content in the user's own cache
 *       directory ({@code $XDG_CACHE_HOME} or {@code ~/.cache}, {@code pmix-java/jna/}; a
 *       directory only the user may write) and points {@code jna.boot.library.path} at it, when
 *       nobody has set that property. The copy is checked against the size and CRC-32 the jar's
 *       directory gives for it at every start, so a stale or damaged one is replaced; writes go
 *       through a temporary name and an atomic rename, so processes starting together never load
 *       a partial file.
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
        Path root = cacheRoot(System.getenv());
        Path jar = jnaJar();
        if (root != null && jar != null) {
          Path dir = cachedCopy(root, jar, "com/sun/jna/" + arch[1] + "/libjnidispatch.so",
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

  /** Where the user's cache lives ({@code $XDG_CACHE_HOME}, else {@code ~/.cache}), or null. */
  static @Nullable Path cacheRoot(Map<String, String> env) {
    String xdg = env.get("XDG_CACHE_HOME");
    if (xdg != null && xdg.startsWith("/")) {
      return Path.of(xdg);
    }
    String home = System.getProperty("user.home");
    if (home == null || !home.startsWith("/")) {
      return null;
    }
    return Path.of(home, ".cache");
  }

  /** The jar JNA's classes come from, or null (not from a jar file, or not found). */
  static @Nullable Path jnaJar() {
    try {
      // Loading the interface does not initialize JNA (that is what must come after prepare).
      CodeSource cs = com.sun.jna.Library.class.getProtectionDomain().getCodeSource();
      if (cs == null || cs.getLocation() == null || !"file".equals(cs.getLocation().getProtocol())) {
        return null;
      }
      Path jar = Path.of(cs.getLocation().toURI());
      return Files.isRegularFile(jar) ? jar : null;
    } catch (URISyntaxException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /**
   * The directory under {@code root} holding the jar's {@code entry} as {@code libjnidispatch.so},
   * written there if missing or different; null if it cannot be, if the jar has no such entry, or
   * if a directory on the way is not {@code uid}'s alone (another user could then swap the library
   * we load). The copy is checked against the entry's size and CRC-32 from the jar's directory (the
   * class loader has read that directory already: nothing is inflated unless the copy is written).
   */
  static @Nullable Path cachedCopy(Path root, Path jar, String entry, int uid) {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      ZipEntry e = zip.getEntry(entry);
      if (e == null || e.getSize() < 0 || e.getSize() > Integer.MAX_VALUE || e.getCrc() < 0) {
        return null;
      }
      String id = Long.toHexString(e.getCrc()) + "-" + e.getSize();
      Path base = root.resolve("pmix-java").resolve("jna");
      Path dir = base.resolve(id);
      Path file = dir.resolve("libjnidispatch.so");
      Files.createDirectories(
          dir,
          PosixFilePermissions.asFileAttribute(
              EnumSet.of(
                  PosixFilePermission.OWNER_READ,
                  PosixFilePermission.OWNER_WRITE,
                  PosixFilePermission.OWNER_EXECUTE)));
      for (Path d : List.of(root.resolve("pmix-java"), base, dir)) {
        if (!privateTo(d, uid)) {
          return null;
        }
      }
      if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && Files.size(file) == e.getSize()) {
        CRC32 crc = new CRC32();
        crc.update(Files.readAllBytes(file));
        if (crc.getValue() == e.getCrc()) {
          return dir;
        }
      }
      byte[] lib;
      try (InputStream in = zip.getInputStream(e)) {
        lib = in.readAllBytes();
      }
      // A name no other process uses, without SecureRandom (what this class avoids).
      Path tmp = dir.resolve("libjnidispatch.so." + ProcessHandle.current().pid() + ".tmp");
      Files.write(tmp, lib);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return dir;
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "no cached copy of JNA's native part under " + root, e);
      return null;
    }
  }

  /** Whether {@code d} is a real directory owned by {@code uid} that nobody else may write. */
  private static boolean privateTo(Path d, int uid) throws IOException {
    Map<String, Object> a = Files.readAttributes(d, "unix:uid,mode,isDirectory", LinkOption.NOFOLLOW_LINKS);
    return Boolean.TRUE.equals(a.get("isDirectory"))
        && a.get("uid") instanceof Integer o
        && o == uid
        && a.get("mode") instanceof Integer mode
        && (mode & 022) == 0;
  }
}
