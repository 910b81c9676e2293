package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.testing.TestTiming;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JnaStartup}: the search path it gives JNA in place of ldconfig's, the cached copy of
 * JNA's native part, and, in a fresh JVM, that JNA then loads without spawning ldconfig or
 * unpacking to a temporary file, and that properties an application set are left alone.
 */
class JnaStartupTest {
  private static final int UID = LocalProcess.effectiveIds()[0];

  @Test
  void theSearchPathListsLdConfsDirectoriesThenTheDefaultsThatExist(@TempDir Path root)
      throws Exception {
    for (String d :
        List.of(
            "opt/vendor/lib", "usr/local/lib", "usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu",
            "usr/lib", "lib", "etc/ld.so.conf.d")) {
      Files.createDirectories(root.resolve(d));
    }
    Files.writeString(
        root.resolve("etc/ld.so.conf"), "# comment\ninclude /etc/ld.so.conf.d/*.conf\n");
    Files.writeString(root.resolve("etc/ld.so.conf.d/b.conf"), "/usr/local/lib  # trailing\n");
    Files.writeString(
        root.resolve("etc/ld.so.conf.d/a.conf"), "/opt/vendor/lib\n/opt/missing/lib\n");
    Files.writeString(root.resolve("etc/ld.so.conf.d/c.txt"), "/not/a/conf\n");

    assertEquals(
        List.of(
            "/opt/vendor/lib",
            "/usr/local/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/lib/x86_64-linux-gnu",
            "/usr/lib",
            "/lib"),
        JnaStartup.platformPath(root, "x86_64-linux-gnu"));
  }

  @Test
  void anIncludeLoopEnds(@TempDir Path root) throws Exception {
    Files.createDirectories(root.resolve("etc"));
    Files.createDirectories(root.resolve("lib"));
    Files.writeString(root.resolve("etc/ld.so.conf"), "include ld.so.conf\n/lib\n");
    assertEquals(List.of("/lib"), JnaStartup.platformPath(root, null));
  }

  private static final String ENTRY = "com/sun/jna/linux-x86-64/libjnidispatch.so";

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
    Path dir = JnaStartup.cachedCopy(root, jar, ENTRY, UID);
    assertNotNull(dir);
    Path file = dir.resolve("libjnidispatch.so");
    assertArrayEquals(lib, Files.readAllBytes(file));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    long written = Files.getLastModifiedTime(file).toMillis();

    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(written - 60_000));
    assertEquals(dir, JnaStartup.cachedCopy(root, jar, ENTRY, UID));
    assertEquals(written - 60_000, Files.getLastModifiedTime(file).toMillis(), "rewritten");

    // Same length, other bytes (a damaged copy): replaced.
    byte[] damaged = lib.clone();
    damaged[3] ^= 1;
    Files.write(file, damaged);
    assertEquals(dir, JnaStartup.cachedCopy(root, jar, ENTRY, UID));
    assertArrayEquals(lib, Files.readAllBytes(file));
    try (var s = Files.list(dir)) {
      assertEquals(List.of(file), s.toList(), "no temporary file left");
    }
    assertNull(JnaStartup.cachedCopy(root, jar, "com/sun/jna/other/libjnidispatch.so", UID));
  }

  @Test
  void aDirectoryOthersMayWriteOrAnotherOwnerIsNotUsed(@TempDir Path tmp) throws Exception {
    Path root = tmp.resolve("cache");
    Path jar = jar(tmp, new byte[] {1, 2, 3});
    Path shared = Files.createDirectories(root.resolve("pmix-java"));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
    assertNull(JnaStartup.cachedCopy(root, jar, ENTRY, UID));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertNotNull(JnaStartup.cachedCopy(root, jar, ENTRY, UID));
    assertNull(JnaStartup.cachedCopy(root, jar, ENTRY, UID + 1), "owned by someone else");
  }

  @Test
  void theCacheIsTheXdgOneElseTheHomeOne() {
    assertEquals(Path.of("/x/cache"), JnaStartup.cacheRoot(Map.of("XDG_CACHE_HOME", "/x/cache")));
    assertEquals(
        Path.of(System.getProperty("user.home"), ".cache"),
        JnaStartup.cacheRoot(Map.of("XDG_CACHE_HOME", "relative")));
  }

  @Test
  void aFreshJvmLoadsJnaFromTheCopyWithoutLdconfig(@TempDir Path home) throws Exception {
    List<String> out = runFresh(home, List.of());
    // The child's own pid, as libc's getpid answered it through JNA: JNA works.
    assertEquals(out.get(out.size() - 1), value(out, "pid "), String.join("\n", out));
    String boot = value(out, "boot=");
    assertTrue(boot.startsWith(home.resolve("cache/pmix-java/jna/").toString()), boot);
    assertTrue(Files.isRegularFile(Path.of(boot, "libjnidispatch.so")), boot);
    assertTrue(value(out, "platform=").contains("/lib"), String.join("\n", out));
    // What the JVM loaded: no subprocess (JNA's ldconfig) and no SecureRandom (its temp file).
    assertTrue(out.stream().noneMatch(l -> l.contains("java.lang.ProcessBuilder ")), "ldconfig ran");
    assertTrue(out.stream().noneMatch(l -> l.contains("java.security.SecureRandom ")), "unpacked");
  }

  @Test
  void propertiesTheApplicationSetAreKept(@TempDir Path home) throws Exception {
    List<String> out =
        runFresh(home, List.of("-Djna.platform.library.path=/lib", "-Djna.boot.library.path=/nowhere"));
    assertEquals("/lib", value(out, "platform="));
    assertEquals("/nowhere", value(out, "boot="));
    assertTrue(Files.notExists(home.resolve("cache/pmix-java")));
  }

  private static String value(List<String> lines, String prefix) {
    return lines.stream()
        .filter(l -> l.startsWith(prefix))
        .map(l -> l.substring(prefix.length()))
        .findFirst()
        .orElseThrow(() -> new AssertionError(prefix + " not printed: " + lines));
  }

  /** Runs {@link Main} in a new JVM with the test's class path and XDG_CACHE_HOME=home/cache. */
  private static List<String> runFresh(Path home, List<String> jvmArgs) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    cmd.add("-Xlog:class+load=info:stdout");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("XDG_CACHE_HOME", home.resolve("cache").toString());
    Process p = pb.start();
    p.getOutputStream().close();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(TestTiming.seconds(60).toMillis(), TimeUnit.MILLISECONDS), "hung");
    assertEquals(0, p.exitValue(), text);
    // The program's own lines first, then the class-load log, filtered to what the test reads.
    List<String> mine = new ArrayList<>();
    List<String> log = new ArrayList<>();
    for (String l : text.split("\n")) {
      (l.startsWith("[") ? log : mine).add(l);
    }
    mine.addAll(log);
    mine.add(Long.toString(p.pid()));
    return mine;
  }

  /** Prepares, loads libc through JNA, calls getpid, prints what the test checks. */
  public static final class Main {
    /** A C function through JNA's interface mapping, as pmix-java's lock code uses it. */
    public interface LibC extends com.sun.jna.Library {
      /** getpid(2). */
      int getpid();
    }

    private Main() {}

    /** Entry point. */
    public static void main(String[] args) {
      JnaStartup.prepare();
      LibC c = com.sun.jna.Native.load("c", LibC.class);
      System.out.println("pid " + c.getpid());
      System.out.println("platform=" + System.getProperty("jna.platform.library.path"));
      System.out.println("boot=" + System.getProperty("jna.boot.library.path"));
    }
  }
}
