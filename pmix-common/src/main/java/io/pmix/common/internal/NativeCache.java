package io.pmix.common.internal;

import io.pmix.common.internal.connector.LocalProcess;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.CodeSource;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.jspecify.annotations.Nullable;

/**
 * Verified copies of native libraries that ship inside jars, kept in the user's cache directory
 * ({@code $XDG_CACHE_HOME} or {@code ~/.cache}, under {@code pmix-java/<kind>/}) so that a process
 * can load them without unpacking a new temporary file at every start: JNA's native part ({@link
 * JnaStartup}) and pmix-java's own ({@link PmixNativeLibrary}).
 *
 * <p>A copy lives in a directory named after the entry's CRC-32 and size, which only the user may
 * write (another user could otherwise swap the library we load); it is checked against the size
 * and CRC-32 the jar's directory gives at every use, so a stale or damaged one is replaced; writes
 * go through a temporary name and an atomic rename, so processes starting together never load a
 * partial file. Stateless.
 */
public final class NativeCache {
  private static final System.Logger LOG = LazyLogger.of(NativeCache.class);

  private NativeCache() {}

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

  /**
   * Where {@code c} was loaded from (a jar file or a class directory), or null when that is not a
   * local file or cannot be told.
   */
  static @Nullable Path codeSourceOf(Class<?> c) {
    try {
      CodeSource cs = c.getProtectionDomain().getCodeSource();
      URL url = cs == null ? null : cs.getLocation();
      if (url == null || !"file".equals(url.getProtocol())) {
        return null;
      }
      // A path the class loader had to escape nothing in is the file's own: parsing the URI
      // (java.net.URI and the file system's URI conversion) costs a fresh JVM 2-3 ms, every
      // first init.
      String raw = url.getPath();
      Path p =
          raw.indexOf('%') < 0 && raw.startsWith("/") && url.getQuery() == null
              ? Path.of(raw)
              : Path.of(url.toURI());
      return Files.exists(p) ? p : null;
    } catch (URISyntaxException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /**
   * The directory under {@code root}/pmix-java/{@code kind} holding the jar's {@code entry} as
   * {@code fileName}, written there if missing or different; null if it cannot be, if the jar has
   * no such entry, or if a directory on the way is not {@code uid}'s alone. The copy is checked
   * against the entry's size and CRC-32 from the jar's directory (nothing is inflated unless the
   * copy is written).
   */
  static @Nullable Path cachedCopy(
      Path root, String kind, Path jar, String entry, String fileName, int uid) {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      ZipEntry e = zip.getEntry(entry);
      if (e == null || e.getSize() < 0 || e.getSize() > Integer.MAX_VALUE || e.getCrc() < 0) {
        return null;
      }
      String id = Long.toHexString(e.getCrc()) + "-" + e.getSize();
      Path base = root.resolve("pmix-java").resolve(kind);
      Path dir = base.resolve(id);
      Path file = dir.resolve(fileName);
      // Made once; checking first skips createDirectories' exception per existing level (a few
      // milliseconds of a fresh JVM's first init).
      if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
        createPrivateDirectories(dir);
      }
      for (Path d : List.of(root.resolve("pmix-java"), base, dir)) {
        if (!privateTo(d, uid)) {
          return null;
        }
      }
      if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && Files.size(file) == e.getSize()) {
        CRC32 crc = new CRC32();
        // java.io, not Files.readAllBytes: a first init would load the JDK's file channels for it.
        try (FileInputStream in = new FileInputStream(file.toFile())) {
          crc.update(in.readAllBytes());
        }
        if (crc.getValue() == e.getCrc()) {
          return dir;
        }
      }
      byte[] lib;
      try (InputStream in = zip.getInputStream(e)) {
        lib = in.readAllBytes();
      }
      // A name no other process uses, without SecureRandom (which initializes the JDK's security
      // providers: tens of milliseconds in a fresh JVM).
      Path tmp = dir.resolve(fileName + "." + LocalProcess.pid() + ".tmp");
      Files.write(tmp, lib);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return dir;
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "no cached copy of " + entry + " under " + root, e);
      return null;
    }
  }

  /** {@code dir} and its missing parents, each readable, writable and searchable by us alone. */
  private static void createPrivateDirectories(Path dir) throws IOException {
    Files.createDirectories(
        dir,
        PosixFilePermissions.asFileAttribute(
            EnumSet.of(
                PosixFilePermission.OWNER_READ,
                PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE)));
  }

  /** Whether {@code d} is a real directory owned by {@code uid} that nobody else may write. */
  private static boolean privateTo(Path d, int uid) throws IOException {
    Map<String, Object> a =
        Files.readAttributes(d, "unix:uid,mode,isDirectory", LinkOption.NOFOLLOW_LINKS);
    return Boolean.TRUE.equals(a.get("isDirectory"))
        && a.get("uid") instanceof Integer o
        && o == uid
        && a.get("mode") instanceof Integer mode
        && (mode & 022) == 0;
  }
}
