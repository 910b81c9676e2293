package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a Java client's first init loads, in a fresh JVM under {@code bin/pmixrun} (whose server
 * offers ds21, so the shared-memory reader is on the path too): a deterministic
 * proxy of its start-up time (issue #15; the time itself is {@code bin/bench-client}'s). The
 * connector runs on its own poll loop and byte arrays, so no Netty class and no Guava class
 * may load, and the classes taken from the class path stay far below the ~1,000 the Netty
 * connector needed.
 * No record's generated {@code equals}, {@code hashCode} or {@code toString} may run either, in
 * the ranks or in pmixrun's server: the value types write theirs out (docs/architecture.md,
 * "Start-up of the client"). The ranks attach the ds21 store and lock it through pmix-java's own
 * native library, loading no JNA class, connect and wait through it too, loading neither NIO's
 * selector nor its socket channel, read small files without the JDK's file channels, and link
 * no lambda of the library (a class costs a fresh JVM less than a lambda's first call).
 */
@Timeout(120)
class ClientStartupIT {
  /**
   * Classes from the application class path a whole client cycle may load (today ~155 on ds21,
   * nearly all of them ours): each costs a fresh JVM ~0.2 ms (docs/architecture.md, "What the
   * class loader costs").
   */
  private static final int MAX_APP_CLASSES = 180;

  @Test
  void aClientCycleLoadsNoNettyNoGuavaAndFewClasses() throws IOException {
    // pmixrun's own JVM too: the server serves the cycle's requests.
    CycleRun run = runCycle("classes-", " -Xlog:class+load=info:file=server-classes.txt");
    PmixRunProcess p = run.pmixrun();
    List<Path> logs = run.logs();
    List<String> server = Files.readAllLines(p.out.getParent().resolve("server-classes.txt"));
    assertTrue(
        server.stream().anyMatch(l -> l.contains(" io.pmix.server.PMIxServer ")),
        "the server's class-load log does not show the server's classes loading");
    assertNoneLoaded(
        server,
        " java.lang.runtime.ObjectMethods ",
        "a record's generated equals/hashCode/toString ran in pmixrun's server");
    for (Path log : logs) {
      List<String> lines = Files.readAllLines(log);
      assertTrue(
          lines.stream().anyMatch(l -> l.contains(" io.pmix.client.PMIx ")),
          log + " does not show the client's classes loading");
      assertNoneLoaded(lines, " io.netty.", log + ": Netty classes loaded by a client");
      // No Guava class at all: its first one opens Guava's jar and those before it on the class
      // path (~1 ms of a fresh JVM).
      assertNoneLoaded(lines, " com.google.common.", log + ": Guava classes loaded by a client");
      // A record's generated equals, hashCode and toString bootstrap through this class; its first
      // use builds java.lang.invoke's method-handle trees, 20-30 ms of a fresh JVM (issue #15).
      assertNoneLoaded(
          lines,
          " java.lang.runtime.ObjectMethods ",
          log + ": a record's generated equals/hashCode/toString ran in a client cycle");
      // The shared-memory reader's locks go through pmix-java's own native library: JNA's first
      // call costs a fresh JVM ~60 ms, the library's ~1 ms (issue #15).
      assertTrue(
          lines.stream().anyMatch(l -> l.contains(" io.pmix.common.internal.gds.Ds21Lock ")),
          log + ": the rank did not attach pmixrun's ds21 store");
      assertTrue(
          lines.stream().anyMatch(l -> l.contains(" io.pmix.common.internal.gds.JniPthreads ")),
          log + ": the ds21 locks did not go through libpmixjava");
      assertNoneLoaded(lines, " com.sun.jna.", log + ": JNA classes loaded by a client");
      // Its socket and progress thread's wait go through that library too: a fresh JVM's first
      // Selector and SocketChannel cost 20-30 ms, and reading small files through Files 4-7 ms
      // (the JDK's file channels), against under 1 ms through java.io (issue #15).
      assertNoneLoaded(lines, " java.nio.channels.Selector ", log + ": NIO's selector loaded");
      assertNoneLoaded(
          lines, " sun.nio.ch.SocketChannelImpl ", log + ": NIO's socket channel loaded");
      assertNoneLoaded(
          lines, " sun.nio.ch.FileChannelImpl ", log + ": the JDK's file channels loaded");
      // Nor, for the ds21 lock slot's claim, a VarHandle over a byte buffer: the claim goes
      // through that library as well (the view's classes and set-up cost a first init ~0.9 ms,
      // docs/architecture.md).
      assertNoneLoaded(
          lines,
          " java.lang.invoke.VarHandleByteArrayAsInts ",
          log + ": a byte-buffer VarHandle loaded for a slot");
      // Nor ProcessHandle (9-12 ms at its first use): the pid and executable come from /proc.
      assertNoneLoaded(
          lines, " java.lang.ProcessHandleImpl ", log + ": ProcessHandle's support loaded");
      // Nor does it link a lambda of the library: each costs a fresh JVM 0.1-0.3 ms at its first
      // call, more than a class (docs/architecture.md, "First requests"). The JDK's own may.
      List<String> lambdas =
          lines.stream().filter(l -> l.contains(" io.pmix.") && l.contains("$$Lambda")).toList();
      assertEquals(
          List.of(),
          lambdas.subList(0, Math.min(5, lambdas.size())),
          log + ": the library linked lambdas in a client cycle (" + lambdas.size() + ")");
      // Nor classes only another path uses, loaded by the verifier to check a subtype: the NIO
      // poller (the native one runs here) and the server's Netty-backed wire buffer.
      assertNoneLoaded(
          lines, " io.pmix.common.internal.connector.NioPoller ", log + ": the NIO poller loaded");
      assertNoneLoaded(
          lines, " io.pmix.common.codec.ByteBufWireBuffer ", log + ": a Netty buffer view loaded");
      long app = lines.stream().filter(l -> l.contains("source: file:")).count();
      assertTrue(
          app <= MAX_APP_CLASSES,
          log + ": " + app + " classes from the class path, more than " + MAX_APP_CLASSES);
    }
  }

  /**
   * The jars a client's classes come from store their classes rather than deflate them: a fresh
   * JVM's class loader then reads each of the ~110 classes a first init loads without inflating it
   * (3 ms of a first init, docs/architecture.md). Run by Maven, which puts the modules' jars on
   * the class path.
   */
  @Test
  void theClientsClassesComeFromJarsThatStoreThem() throws IOException {
    Set<Path> jars = new TreeSet<>();
    for (Path log : runCycle("jars-", "").logs()) {
      for (String l : Files.readAllLines(log)) {
        int at = l.indexOf(" source: file:");
        if (l.contains(" io.pmix.") && at >= 0 && l.endsWith(".jar")) {
          jars.add(Path.of(l.substring(at + " source: file:".length())));
        }
      }
    }
    assertTrue(
        jars.stream().anyMatch(j -> j.getFileName().toString().startsWith("pmix-common-")),
        "the client's classes did not come from pmix-common's jar: " + jars);
    for (Path jar : jars) {
      try (ZipFile zip = new ZipFile(jar.toFile())) {
        List<String> deflated =
            zip.stream()
                .filter(e -> e.getName().endsWith(".class") && e.getMethod() != ZipEntry.STORED)
                .map(ZipEntry::getName)
                .limit(5)
                .toList();
        assertEquals(List.of(), deflated, jar + ": classes deflated");
      }
    }
  }

  /**
   * Where pmix-java's library does not load (another architecture), or when asked with {@code
   * -Dio.pmix.connector.poller=nio}, the connector runs on NIO: the same client cycle works there.
   */
  @Test
  void aClientCycleOnTheNioPollerWorksToo() throws IOException {
    List<Path> logs = runCycle("nio-classes-", "", "-Dio.pmix.connector.poller=nio").logs();
    for (Path log : logs) {
      List<String> lines = Files.readAllLines(log);
      String nio = " io.pmix.common.internal.connector.NioPoller$Socket ";
      assertTrue(
          lines.stream().anyMatch(l -> l.contains(nio)), log + ": the rank did not connect by NIO");
      assertNoneLoaded(
          lines,
          " io.pmix.common.internal.connector.NativePoller$Socket ",
          log + ": the native poller's socket was used though NIO was asked for");
    }
  }

  /** A 2-rank job of {@link JavaClientMain} under pmixrun, and the ranks' class-load logs. */
  private record CycleRun(PmixRunProcess pmixrun, List<Path> logs) {}

  /**
   * Runs the job, the ranks' JVMs with {@code rankOptions} and a class-load log each, named {@code
   * prefix<pid>.txt}, pmixrun's with {@code serverOptions} appended; fails unless it succeeded
   * with two logs.
   */
  private static CycleRun runCycle(String prefix, String serverOptions, String... rankOptions)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.addAll(List.of("-n", "2", "--timeout", "60", "--"));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of(rankOptions));
    // Relative: each rank writes in pmixrun's working directory, under target/.
    cmd.add("-Xlog:class+load=info:file=" + prefix + "%p.txt");
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path")));
    cmd.add(JavaClientMain.class.getName());
    PmixRunProcess p =
        PmixRunProcess.run(
            Duration.ofSeconds(90),
            List.of(),
            Map.of(
                "PMIXRUN_JAVA_OPTS",
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir") + serverOptions),
            cmd.toArray(new String[0]));
    assertEquals(0, p.exit(), p::describe);
    List<Path> logs;
    try (Stream<Path> s = Files.list(p.out.getParent())) {
      logs = s.filter(f -> f.getFileName().toString().startsWith(prefix)).sorted().toList();
    }
    assertEquals(2, logs.size(), "one class-load log per rank: " + logs);
    return new CycleRun(p, logs);
  }

  /** Fails naming the first few classes loaded whose line holds {@code prefix}. */
  private static void assertNoneLoaded(List<String> lines, String prefix, String what) {
    List<String> hits = lines.stream().filter(l -> l.contains(prefix)).toList();
    assertEquals(
        List.of(), hits.subList(0, Math.min(5, hits.size())), what + " (" + hits.size() + ")");
  }
}
