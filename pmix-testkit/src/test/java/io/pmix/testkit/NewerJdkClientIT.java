package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The library is built for Java 17 and must stay quiet on the newest JDKs: Java ranks on a JDK 22
 * or later (the newest one in {@code /usr/lib/jvm}; these machines have a JDK 25) under {@code
 * bin/pmixrun}, whose server offers ds21, so the ranks map and unmap the shared-memory store. With
 * {@code --enable-native-access=ALL-UNNAMED} (what PMIx's javadoc tells applications to pass: the
 * store's locks load pmix-java's native library with {@code System.load}, a restricted method) a
 * rank prints no JVM warning at all; without it, only the JVM's notice of that restricted call. Before, pmix-common itself unmapped through {@code sun.misc.Unsafe.invokeCleaner},
 * and JDK 24+ printed "terminally deprecated" warnings naming our class in every rank's stderr.
 * And pmixrun's own JVM on such a JDK prints no warning either. Fails rather than skips under CI
 * when no such JDK is found.
 */
@Timeout(120)
class NewerJdkClientIT {
  private static final Pattern VERSION = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)");

  @Test
  void javaRanksOnANewJdkPrintNoWarningOfOurs() throws IOException {
    Path java = newestJdk(22).resolve("bin/java");
    PmixRunProcess quiet =
        PmixRunProcess.run(Duration.ofSeconds(90), "-n", "2", "--timeout", "60", "--",
            java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), JavaClientMain.class.getName());
    assertEquals(0, quiet.exit(), quiet::describe);
    assertEquals(List.of(), warnings(quiet), quiet.describe());

    PmixRunProcess plain =
        PmixRunProcess.run(Duration.ofSeconds(90), "-n", "2", "--timeout", "60", "--",
            java.toString(), "-cp", System.getProperty("java.class.path"),
            JavaClientMain.class.getName());
    assertEquals(0, plain.exit(), plain::describe);
    List<String> ours =
        warnings(plain).stream()
            .filter(w -> !restrictedCall(w))
            .filter(w -> w.contains("io.pmix") || w.contains("Unsafe"))
            .toList();
    assertEquals(List.of(), ours, plain.describe());
  }

  @Test
  void pmixrunOnANewJdkPrintsNoWarning() throws IOException {
    // pmixrun's own JVM on that JDK (JAVA_HOME): the server loads Netty's epoll transport and
    // pmix-java's native library, restricted calls that pmixrun's JVM options allow. The first
    // run on that JDK also makes its class-data sharing archive.
    Path jdk = newestJdk(24);
    PmixRunProcess p =
        PmixRunProcess.run(Duration.ofSeconds(90), List.of(), Map.of("JAVA_HOME", jdk.toString()),
            "-n", "2", "--timeout", "60", "--", "/bin/sh", "-c", "echo rank $PMIX_RANK");
    assertEquals(0, p.exit(), p::describe);
    assertEquals(2, p.stdout().lines().filter(l -> l.startsWith("rank ")).count(), p::describe);
    assertEquals(List.of(), warnings(p), p.describe());
  }

  @Test
  void pmixrunOnJdk25StartsFromAnAotCacheItMadeItself() throws IOException {
    // JDK 25's AOT cache (JEPs 483, 514, 515) replaces the dynamic archive there. The JVM drops
    // a cache silently when its options differ from the training's (native access, say), so the
    // second run logs the cache's errors: there must be none, and the cache must be mapped.
    Path jdk = newestJdk(25);
    Path cds = Path.of(System.getProperty("basedir", ".")).resolve("target/cds");
    PmixRunProcess first =
        PmixRunProcess.run(Duration.ofSeconds(90), List.of(), Map.of("JAVA_HOME", jdk.toString()),
            "-n", "1", "--", "/bin/true");
    assertEquals(0, first.exit(), first::describe);
    try (Stream<Path> s = Files.list(cds)) {
      assertTrue(
          s.anyMatch(f -> f.getFileName().toString().matches("pmixrun-[0-9]+\\.aot")),
          "no AOT cache in " + cds);
    }
    PmixRunProcess second =
        PmixRunProcess.run(Duration.ofSeconds(90), List.of(),
            Map.of("JAVA_HOME", jdk.toString(), "PMIXRUN_JAVA_OPTS",
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir") + " -Xlog:aot=info"),
            "-n", "1", "--", "/bin/true");
    assertEquals(0, second.exit(), second::describe);
    String log = second.stdout() + second.stderr();
    assertEquals(
        List.of(), log.lines().filter(l -> l.contains("[error]")).toList(), second.describe());
    assertTrue(log.contains("Opened AOT cache"), second.describe());
    assertTrue(log.contains("full module graph: enabled"), second.describe());
  }

  /** A line of the JVM's notice that a restricted method ran without native access (JEP 472). */
  private static boolean restrictedCall(String line) {
    return line.contains("A restricted method in java.lang.System has been called")
        || line.contains("java.lang.System::load has been called by")
        || line.contains("--enable-native-access")
        || line.contains("Restricted methods will be blocked");
  }

  private static List<String> warnings(PmixRunProcess p) {
    return (p.stdout() + "\n" + p.stderr()).lines().filter(l -> l.contains("WARNING")).toList();
  }

  /** The JDK of the highest feature version >= {@code min} in /usr/lib/jvm. */
  private static Path newestJdk(int min) throws IOException {
    Optional<Path> best = Optional.empty();
    Path root = Path.of("/usr/lib/jvm");
    if (Files.isDirectory(root)) {
      try (Stream<Path> s = Files.list(root)) {
        best =
            s.filter(d -> version(d) >= min && Files.isExecutable(d.resolve("bin/java")))
                .max(Comparator.comparingInt(NewerJdkClientIT::version));
      }
    }
    if (best.isEmpty()) {
      String why = "no JDK " + min + " or later in " + root;
      if (PmixTestExtension.interopRequired()) {
        fail(why);
      }
      Assumptions.abort(why);
    }
    return best.get();
  }

  private static int version(Path jdk) {
    try {
      Matcher m = VERSION.matcher(Files.readString(jdk.resolve("release"), UTF_8));
      return m.find() ? Integer.parseInt(m.group(1)) : -1;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
