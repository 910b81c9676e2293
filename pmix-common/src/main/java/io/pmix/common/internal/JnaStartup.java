package io.pmix.common.internal;

import io.pmix.common.internal.connector.LocalProcess;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
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
 *       nobody has set that property. The copy is compared with the jar's bytes at every start, so
 *       a stale or damaged one is replaced; writes go through a temporary name and an atomic
 *       rename, so processes starting together never load a partial file.
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
        byte[] lib = dispatchLibrary(arch[1]);
        if (root != null && lib != null) {
          Path dir = cachedCopy(root, lib, LocalProcess.effectiveIds()[0]);
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
    dirs.removeIf(d -> !Files.isDirectory(root.resolve(d.substring(1))));
    return List.copyOf(dirs);
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
          for (String pattern : line.substring(8).trim().split("\\s+")) {
            include(root, file, pattern, dirs, depth);
          }
        }
      } else if (line.startsWith("/")) {
        dirs.add(line);
      }
    }
  }

  /** The files an {@code include} pattern names (a glob in its last component), sorted. */
  private static void include(Path root, Path from, String pattern, Set<String> dirs, int depth) {
    Path p =
        pattern.startsWith("/")
            ? root.resolve(pattern.substring(1))
            : from.getParent().resolve(pattern);
    Path dir = p.getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      return;
    }
    List<Path> files = new java.util.ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, p.getFileName().toString())) {
      s.forEach(files::add);
    } catch (IOException | RuntimeException e) {
      return;
    }
    files.sort(null);
    for (Path f : files) {
      readLdConf(root, f, dirs, depth + 1);
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

  /** JNA's native part in JNA's {@code resources} folder of its jar; null if absent. */
  private static byte @Nullable [] dispatchLibrary(String folder) {
    ClassLoader loader = JnaStartup.class.getClassLoader();
    String name = "com/sun/jna/" + folder + "/libjnidispatch.so";
    try (InputStream in =
        loader == null ? ClassLoader.getSystemResourceAsStream(name) : loader.getResourceAsStream(name)) {
      return in == null ? null : in.readAllBytes();
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * The directory under {@code root} holding {@code lib} as {@code libjnidispatch.so}, written
   * there if missing or different; null if it cannot be, or if a directory on the way is not
   * {@code uid}'s alone (another user could then swap the library we load).
   */
  static @Nullable Path cachedCopy(Path root, byte[] lib, int uid) {
    CRC32 crc = new CRC32();
    crc.update(lib);
    String id = Long.toHexString(crc.getValue()) + "-" + lib.length;
    Path base = root.resolve("pmix-java").resolve("jna");
    Path dir = base.resolve(id);
    Path file = dir.resolve("libjnidispatch.so");
    try {
      Files.createDirectories(
          dir,
          PosixFilePermissions.asFileAttribute(
              Set.of(
                  PosixFilePermission.OWNER_READ,
                  PosixFilePermission.OWNER_WRITE,
                  PosixFilePermission.OWNER_EXECUTE)));
      for (Path d : List.of(root.resolve("pmix-java"), base, dir)) {
        if (!privateTo(d, uid)) {
          return null;
        }
      }
      if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
          && Files.size(file) == lib.length
          && Arrays.equals(Files.readAllBytes(file), lib)) {
        return dir;
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
    if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    Object owner = Files.getAttribute(d, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(d, LinkOption.NOFOLLOW_LINKS);
    return owner instanceof Integer o
        && o == uid
        && !perms.contains(PosixFilePermission.GROUP_WRITE)
        && !perms.contains(PosixFilePermission.OTHERS_WRITE);
  }
}
