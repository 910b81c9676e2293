package io.pmix.testkit.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.internal.PlatformDependent;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.pmix.common.internal.LazyLogger;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What pmixrun's own JVM gets from {@link LauncherJvm#prepare}: no logging started for messages
 * it would not show, warnings and errors shown as before (its own and Netty's), a given logging
 * configuration obeyed, and the copy of Netty's epoll library. Each case runs in a JVM of its own
 * ({@link Child}), since the settings are process-wide.
 */
@Timeout(120)
class LauncherJvmTest {
  /** Prints java.util.logging's class loads as they happen, between the child's own lines. */
  private static final String CLASS_LOG = "-Xlog:class+load=info:stdout:none";

  @Test
  void aQuietRunStartsNoLoggingAndWarningsStillShow() throws Exception {
    Result r = child("quiet");
    String beforeWarning = r.out.substring(0, r.out.indexOf("MARK warn"));
    assertFalse(beforeWarning.contains("java.util.logging.LogManager "), r::describe);
    assertFalse(beforeWarning.contains("System$LoggerFinder"), r::describe);
    assertTrue(r.out.contains("java.util.logging.LogManager "), r::describe);
    assertTrue(r.err.contains("WARNING: pmix warning 1"), r::describe);
    assertTrue(r.err.contains("WARNING: netty warning 7 and x"), r::describe);
    assertTrue(r.err.contains("SEVERE: netty error"), r::describe);
    assertTrue(r.err.contains("java.lang.IllegalStateException: the cause"), r::describe);
    assertFalse(r.err.contains("info"), r::describe);
    assertFalse(r.err.contains("debug"), r::describe);
    assertTrue(r.out.contains("selector sun.nio.ch.EPollSelectorProvider"), r::describe);
  }

  @Test
  void aGivenConfigurationIsObeyedByTheLibrariesAndNetty(@TempDir Path tmp) throws Exception {
    Path config = tmp.resolve("logging.properties");
    Files.writeString(
        config,
        "handlers=java.util.logging.ConsoleHandler\n.level=INFO\n"
            + "java.util.logging.ConsoleHandler.level=ALL\n",
        UTF_8);
    Result r = child("configured", "-Djava.util.logging.config.file=" + config);
    assertTrue(r.err.contains("INFO: pmix info 1"), r::describe);
    assertTrue(r.err.contains("INFO: netty info 7"), r::describe);
    assertTrue(r.err.contains("WARNING: pmix warning 1"), r::describe);
    assertFalse(r.err.contains("debug"), r::describe);
  }

  @Test
  void theEpollLibraryIsCopiedWholeUnderItsLoadName(@TempDir Path tmp) throws IOException {
    Path dir = tmp.resolve("a/b.native");
    LauncherJvm.copyNettyEpollLibrary(dir);
    String name =
        System.mapLibraryName("netty_transport_native_epoll_" + PlatformDependent.normalizedArch());
    byte[] expected;
    try (InputStream in = LauncherJvm.class.getResourceAsStream("/META-INF/native/" + name)) {
      expected = in.readAllBytes();
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(dir.resolve(name)), files.toList());
    }
    assertArrayEquals(expected, Files.readAllBytes(dir.resolve(name)));
    // Again over the first copy: replaced, nothing else left.
    LauncherJvm.copyNettyEpollLibrary(dir);
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(dir.resolve(name)), files.toList());
    }
  }

  @Test
  void aCopyThatCannotBeMadeLeavesNothingAndThrowsNothing(@TempDir Path tmp) throws IOException {
    Path notADirectory = Files.writeString(tmp.resolve("file"), "x");
    LauncherJvm.copyNettyEpollLibrary(notADirectory);
    try (Stream<Path> files = Files.list(tmp)) {
      assertEquals(List.of(notADirectory), files.toList());
    }
    assertEquals("x", Files.readString(notADirectory));
  }

  @Test
  void processesStartWithoutTheJdksHelperWhereTheMechanismIsNotDeprecated() throws Exception {
    for (Path java : installedJavas()) {
      Result r = childOn(java, "spawn");
      int feature = Integer.parseInt(line(r, "feature"));
      String expected = feature < 25 ? "VFORK" : "null";
      assertEquals(expected, line(r, "mechanism"), () -> java + ": " + r.describe());
      assertEquals("hello from the child", line(r, "spawned"), () -> java + ": " + r.describe());
      assertFalse(r.err.contains("DEPRECATED"), () -> java + ": " + r.describe());
    }
  }

  @Test
  void aLaunchMechanismTheUserGaveIsKept() throws Exception {
    Result r = child("spawn", "-Djdk.lang.Process.launchMechanism=POSIX_SPAWN");
    assertEquals("POSIX_SPAWN", line(r, "mechanism"), r::describe);
    assertEquals("hello from the child", line(r, "spawned"), r::describe);
  }

  @Test
  void nettysLeakDetectionIsOffUnlessTheUserSetsIt() throws Exception {
    assertEquals("DISABLED", line(child("leak"), "leak"));
    Result given = child("leak", "-Dio.netty.leakDetection.level=paranoid");
    assertEquals("PARANOID", line(given, "leak"), given::describe);
    Result old = child("leak", "-Dio.netty.leakDetectionLevel=advanced");
    assertEquals("ADVANCED", line(old, "leak"), old::describe);
  }

  /** The JVM running the tests and every other JDK installed where Debian and CI put them. */
  private static List<Path> installedJavas() throws IOException {
    List<Path> javas = new ArrayList<>();
    javas.add(Path.of(System.getProperty("java.home"), "bin", "java").toRealPath());
    Path jvms = Path.of("/usr/lib/jvm");
    if (Files.isDirectory(jvms)) {
      try (Stream<Path> dirs = Files.list(jvms)) {
        for (Path dir : dirs.sorted().toList()) {
          Path java = dir.resolve("bin/java");
          if (Files.isExecutable(java) && !javas.contains(java.toRealPath())) {
            javas.add(java.toRealPath());
          }
        }
      }
    }
    return javas;
  }

  /** The rest of the child's line that starts with {@code name} and a space. */
  private static String line(Result r, String name) {
    for (String l : r.out.split("\n", -1)) {
      if (l.startsWith(name + " ")) {
        return l.substring(name.length() + 1);
      }
    }
    throw new AssertionError("no line " + name + ":\n" + r.describe());
  }

  private static Result child(String mode, String... jvmOptions) throws Exception {
    return childOn(Path.of(System.getProperty("java.home"), "bin", "java"), mode, jvmOptions);
  }

  private static Result childOn(Path java, String mode, String... jvmOptions) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(java.toString());
    cmd.add(CLASS_LOG);
    cmd.addAll(List.of(jvmOptions));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Child.class.getName());
    cmd.add(mode);
    File out = File.createTempFile("launcher-out", ".txt");
    File err = File.createTempFile("launcher-err", ".txt");
    try {
      Process p =
          new ProcessBuilder(cmd)
              .redirectOutput(out)
              .redirectError(err)
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      if (!p.waitFor(90, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("child did not finish: " + cmd);
      }
      Result r =
          new Result(
              p.exitValue(),
              Files.readString(out.toPath(), UTF_8),
              Files.readString(err.toPath(), UTF_8));
      assertEquals(0, r.exit, r::describe);
      return r;
    } finally {
      Files.deleteIfExists(out.toPath());
      Files.deleteIfExists(err.toPath());
    }
  }

  private record Result(int exit, String out, String err) {
    String describe() {
      return "exit " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
    }
  }

  /** The child JVM: prepares, then logs through the libraries' and Netty's loggers. */
  static final class Child {
    private Child() {}

    public static void main(String[] args) throws IOException, InterruptedException {
      LauncherJvm.prepare();
      if ("spawn".equals(args[0])) {
        spawn();
        return;
      }
      if ("leak".equals(args[0])) {
        System.out.println("leak " + ResourceLeakDetector.getLevel());
        return;
      }
      System.Logger pmix = LazyLogger.named("io.pmix.test");
      InternalLogger netty = InternalLoggerFactory.getInstance("io.netty.test");
      pmix.log(Level.DEBUG, "pmix debug 1");
      pmix.log(Level.INFO, "pmix info {0}", 1);
      netty.debug("netty debug {}", 7);
      netty.info("netty info {}", 7);
      System.out.println("selector " + System.getProperty("java.nio.channels.spi.SelectorProvider"));
      System.out.println("MARK warn");
      System.out.flush();
      pmix.log(Level.WARNING, "pmix warning {0}", 1);
      netty.warn("netty warning {} and {}", 7, "x");
      netty.error("netty error", new IllegalStateException("the cause"));
      pmix.log(Level.INFO, "pmix info after {0}", 2);
      netty.info("netty info after");
      System.exit("quiet".equals(args[0]) || "configured".equals(args[0]) ? 0 : 2);
    }

    /** Starts a process as pmixrun starts its ranks and prints what it wrote. */
    private static void spawn() throws IOException, InterruptedException {
      System.out.println("feature " + Runtime.version().feature());
      System.out.println("mechanism " + System.getProperty(LauncherJvm.LAUNCH_MECHANISM));
      Process p =
          new ProcessBuilder("/bin/sh", "-c", "echo hello from the child")
              .redirectErrorStream(true)
              .start();
      String said = new String(p.getInputStream().readAllBytes(), UTF_8).strip();
      System.out.println("spawned " + said + (p.waitFor() == 0 ? "" : " (failed)"));
    }
  }
}
