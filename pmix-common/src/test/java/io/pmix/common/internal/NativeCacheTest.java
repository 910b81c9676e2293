package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pmix.common.internal.connector.LocalProcess;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link NativeCache}: the verified copy of a jar's native library in a private cache directory,
 * written once, reused, replaced when it differs, refused where others may write.
 */
class NativeCacheTest {
  private static final int UID = LocalProcess.effectiveIds()[0];

  private static final String ENTRY = "com/sun/jna/linux-x86-64/libjnidispatch.so";
  private static final String FILE = "libjnidispatch.so";

  /** A jar holding {@code lib} as JNA's native part. */
  private static Path jar(Path dir, byte[] lib) throws Exception {
    Path jar = dir.resolve("jna.jar");
    try (var out = new java.util.zip.ZipOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(new java.util.zip.ZipEntry(ENTRY));
      out.write(lib);
      out.closeEntry();
    }
    return jar;
  }

  @Test
  void theCopyIsWrittenOnceReusedAndReplacedWhenItDiffers(@TempDir Path tmp) throws Exception {
    byte[] lib = "not really an ELF file".getBytes(StandardCharsets.US_ASCII);
    Path root = tmp.resolve("cache");
    Path jar = jar(tmp, lib);
    Path dir = NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID);
    assertNotNull(dir);
    Path file = dir.resolve(FILE);
    assertArrayEquals(lib, Files.readAllBytes(file));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    long written = Files.getLastModifiedTime(file).toMillis();

    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(written - 60_000));
    assertEquals(dir, NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID));
    assertEquals(written - 60_000, Files.getLastModifiedTime(file).toMillis(), "rewritten");

    // Same length, other bytes (a damaged copy): replaced.
    byte[] damaged = lib.clone();
    damaged[3] ^= 1;
    Files.write(file, damaged);
    assertEquals(dir, NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID));
    assertArrayEquals(lib, Files.readAllBytes(file));
    try (var s = Files.list(dir)) {
      assertEquals(List.of(file), s.toList(), "no temporary file left");
    }
    assertNull(NativeCache.cachedCopy(root, "jna", jar, "com/sun/jna/other/libjnidispatch.so", FILE, UID));
  }

  @Test
  void aDirectoryOthersMayWriteOrAnotherOwnerIsNotUsed(@TempDir Path tmp) throws Exception {
    Path root = tmp.resolve("cache");
    Path jar = jar(tmp, new byte[] {1, 2, 3});
    Path shared = Files.createDirectories(root.resolve("pmix-java"));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
    assertNull(NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertNotNull(NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID));
    assertNull(NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID + 1), "owned by someone else");
  }

  /** A class with nothing to load but Object, for a loader of its own. */
  static final class Marker {}

  @Test
  void theCodeSourceIsTheJarOrDirectoryEvenWhereItsNameWasEscaped(@TempDir Path tmp)
      throws Exception {
    // The class directory or jar of these tests: the path the class loader escaped nothing in.
    assertEquals(
        Path.of(NativeCacheTest.class.getProtectionDomain().getCodeSource().getLocation().toURI()),
        NativeCache.codeSourceOf(NativeCacheTest.class));
    // A jar below a directory whose name its URL escapes (space, percent, hash).
    Path jar = Files.createDirectories(tmp.resolve("a b%c#d")).resolve("m.jar");
    String entry = Marker.class.getName().replace('.', '/') + ".class";
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        InputStream in = NativeCacheTest.class.getClassLoader().getResourceAsStream(entry)) {
      out.putNextEntry(new JarEntry(entry));
      in.transferTo(out);
      out.closeEntry();
    }
    try (URLClassLoader own = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
      Class<?> c = own.loadClass(Marker.class.getName());
      assertEquals(own, c.getClassLoader());
      assertEquals(jar, NativeCache.codeSourceOf(c));
    }
  }

  @Test
  void theCacheIsTheXdgOneElseTheHomeOne() {
    assertEquals(Path.of("/x/cache"), NativeCache.cacheRoot(Map.of("XDG_CACHE_HOME", "/x/cache")));
    assertEquals(
        Path.of(System.getProperty("user.home"), ".cache"),
        NativeCache.cacheRoot(Map.of("XDG_CACHE_HOME", "relative")));
  }

  @Test
  void copiesOfOneContentForTwoKindsLiveApart(@TempDir Path tmp) throws Exception {
    Path root = tmp.resolve("cache");
    Path jar = jar(tmp, new byte[] {7});
    Path a = NativeCache.cachedCopy(root, "jna", jar, ENTRY, FILE, UID);
    Path b = NativeCache.cachedCopy(root, "native", jar, ENTRY, "libother.so", UID);
    assertNotNull(a);
    assertNotNull(b);
    assertEquals(root.resolve("pmix-java/jna"), a.getParent());
    assertEquals(root.resolve("pmix-java/native"), b.getParent());
    assertArrayEquals(new byte[] {7}, Files.readAllBytes(b.resolve("libother.so")));
  }
}
