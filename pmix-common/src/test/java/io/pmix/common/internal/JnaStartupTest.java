package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.TestTiming;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JnaStartup}: the search path it gives JNA in place of ldconfig's and, in a fresh JVM, that
 * JNA then loads from the cached copy of its native part ({@link NativeCacheTest}) without spawning
 * ldconfig or unpacking to a temporary file, and that properties an application set are left
 * alone.
 */
class JnaStartupTest {

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
        LinkerPaths.platformPath(root, "x86_64-linux-gnu"));
  }

  @Test
  void anIncludeLoopEnds(@TempDir Path root) throws Exception {
    Files.createDirectories(root.resolve("etc"));
    Files.createDirectories(root.resolve("lib"));
    Files.writeString(root.resolve("etc/ld.so.conf"), "include ld.so.conf\n/lib\n");
    assertEquals(List.of("/lib"), LinkerPaths.platformPath(root, null));
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
