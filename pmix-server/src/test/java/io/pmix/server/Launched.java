package io.pmix.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** A child process started with a server's {@code setupFork} environment, for tests. */
final class Launched {
  final Process process;
  final Path out;
  final Path err;

  private Launched(Process process, Path out, Path err) {
    this.process = process;
    this.out = out;
    this.err = err;
  }

  /** The uid of this process (the owner of /proc/self). */
  static int myUid() {
    try {
      return (Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Skips the calling test unless this process is root (it starts processes under other uids),
   * and fails it instead where interop is required (CI=true), where a skip would hide that it
   * never ran.
   */
  static void requireRoot() {
    boolean root = myUid() == 0;
    if (!root && io.pmix.common.testing.CPrograms.interopRequired()) {
      throw new AssertionError(
          "CI=true: this test starts processes under another uid and needs root");
    }
    org.junit.jupiter.api.Assumptions.assumeTrue(
        root, "starting processes under another uid needs root");
  }

  /** The gid of this process. */
  static int myGid() {
    try {
      return (Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:gid");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts {@code exe} as another user (root only): {@code setpriv} changes the real and
   * effective uid and gid and drops the supplementary groups before the program starts, so the
   * kernel owns its sockets as that user. {@code preload}, if not null, is put in the program's
   * {@code LD_PRELOAD} (after setpriv, which must not be affected by it).
   */
  static Launched startAs(
      int uid, int gid, @Nullable Path preload, Path exe, Map<String, String> env, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        "setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "/usr/bin/env"));
    if (preload != null) {
      cmd.add("LD_PRELOAD=" + preload);
    }
    cmd.add(exe.toString());
    cmd.addAll(List.of(args));
    return start(cmd, env);
  }

  static Launched start(Path exe, Map<String, String> env, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(exe.toString());
    cmd.addAll(List.of(args));
    return start(cmd, env);
  }

  private static Launched start(List<String> cmd, Map<String, String> env) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    // A clean PMIx environment: nothing inherited may point the child at another server.
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
    pb.environment().putAll(env);
    Path out = Files.createTempFile("pmix-it", ".out");
    Path err = Files.createTempFile("pmix-it", ".err");
    pb.redirectOutput(out.toFile());
    pb.redirectError(err.toFile());
    return new Launched(pb.start(), out, err);
  }

  /** Waits for exit (killing the process after {@code timeout}); returns the exit status. */
  int await(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor();
      return -1;
    }
    return process.exitValue();
  }

  /** What {@code p} printed, both streams, for assertion messages. */
  static String describe(Launched p) {
    try {
      return "stdout:\n" + p.stdout() + "\nstderr:\n" + p.stderr();
    } catch (IOException e) {
      return e.toString();
    }
  }

  String stdout() throws IOException {
    return Files.readString(out, StandardCharsets.UTF_8);
  }

  String stderr() throws IOException {
    return Files.readString(err, StandardCharsets.UTF_8);
  }

  /** The {@code name=value} lines of stdout. */
  Map<String, String> values() throws IOException {
    Map<String, String> m = new LinkedHashMap<>();
    for (String line : com.google.common.base.Splitter.on('\n').split(stdout())) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        m.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return m;
  }

  /**
   * Waits until stdout holds the line {@code line} (e.g. a {@code sync=<name>} line of the test
   * client); false if the process exited or {@code timeout} passed first.
   */
  boolean awaitLine(String line, Duration timeout) throws IOException, InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < end) {
      if (("\n" + stdout()).contains("\n" + line + "\n")) {
        return true;
      }
      if (!process.isAlive()) {
        return ("\n" + stdout()).contains("\n" + line + "\n");
      }
      Thread.sleep(10);
    }
    return false;
  }

  /** Lets a client waiting at a sync point go on (one line on its stdin). */
  void release() throws IOException {
    process.getOutputStream().write('\n');
    process.getOutputStream().flush();
  }

  void cleanup() throws IOException {
    Files.deleteIfExists(out);
    Files.deleteIfExists(err);
  }
}
