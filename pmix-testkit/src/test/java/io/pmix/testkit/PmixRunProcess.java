package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code bin/pmixrun} run as a user runs it, its output in files, for the ITs. */
final class PmixRunProcess implements AutoCloseable {
  private static final Pattern TAGGED =
      Pattern.compile("^\\[([^,\\]]+),(\\d+)\\]<(stdout|stderr)>: (.*)$");

  final Process process;
  final Path dir;
  final Path out;
  final Path err;
  final List<String> command;
  private final long start = System.nanoTime();
  private int exit = -1;
  private Duration elapsed = Duration.ZERO;

  private PmixRunProcess(Process process, Path dir, List<String> command) {
    this.process = process;
    this.dir = dir;
    this.out = dir.resolve("stdout");
    this.err = dir.resolve("stderr");
    this.command = command;
  }

  static Path repoRoot() {
    return Path.of(System.getProperty("pmix.repo.root", "..")).toAbsolutePath().normalize();
  }

  static Path script(String name) {
    return Path.of(System.getProperty("basedir", ".")).resolve("src/test/sh").resolve(name)
        .toAbsolutePath();
  }

  /** Starts {@code bin/pmixrun args...} in a fresh directory under target/. */
  static PmixRunProcess start(String... args) {
    return start(List.of(), Map.of(), args);
  }

  /**
   * Starts {@code wrapper... bin/pmixrun args...} in a fresh directory under target/, with {@code
   * env} added to (and overriding) the environment the other starts give it.
   */
  static PmixRunProcess start(List<String> wrapper, Map<String, String> env, String... args) {
    try {
      Path base = Path.of(System.getProperty("basedir", ".")).resolve("target/pmixrun-it");
      Files.createDirectories(base);
      Path dir = Files.createTempDirectory(base, "run-");
      List<String> cmd = new ArrayList<>(wrapper);
      cmd.add(repoRoot().resolve("bin/pmixrun").toString());
      cmd.addAll(List.of(args));
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
      pb.redirectOutput(dir.resolve("stdout").toFile());
      pb.redirectError(dir.resolve("stderr").toFile());
      pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
      pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
      // pmixrun makes its files where this test JVM does (under target/): the server's under
      // TMPDIR, the JVM's under java.io.tmpdir.
      pb.environment().remove("TEMP");
      pb.environment().remove("TMP");
      pb.environment().put("TMPDIR", System.getProperty("java.io.tmpdir"));
      String opts = pb.environment().getOrDefault("PMIXRUN_JAVA_OPTS", "");
      pb.environment().put(
          "PMIXRUN_JAVA_OPTS",
          (opts + " -Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir")).trim());
      pb.environment().putAll(env);
      return new PmixRunProcess(pb.start(), dir, cmd);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Runs it to the end (failing the test if it takes longer than {@code limit}, scaled). */
  static PmixRunProcess run(Duration limit, String... args) {
    PmixRunProcess p = start(args);
    p.await(limit);
    return p;
  }

  /** {@link #run} with {@code wrapper} and {@code env} as {@link #start(List, Map, String...)}. */
  static PmixRunProcess run(
      Duration limit, List<String> wrapper, Map<String, String> env, String... args) {
    PmixRunProcess p = start(wrapper, env, args);
    p.await(limit);
    return p;
  }

  @CanIgnoreReturnValue
  PmixRunProcess await(Duration limit) {
    Duration d = Timing.scaled(limit);
    try {
      if (!process.waitFor(d.toNanos(), TimeUnit.NANOSECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor();
        throw new AssertionError("pmixrun did not end within " + d + "\n" + describe());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    exit = process.exitValue();
    elapsed = Duration.ofNanos(System.nanoTime() - start);
    return this;
  }

  /** The process started: the wrapper's first program, else pmixrun's JVM. */
  ProcessHandle handle() {
    return process.toHandle();
  }

  int exit() {
    return exit;
  }

  Duration elapsed() {
    return elapsed;
  }

  String stdout() {
    return read(out);
  }

  String stderr() {
    return read(err);
  }

  private static String read(Path p) {
    try {
      return Files.exists(p) ? Files.readString(p, UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The stdout lines of each rank, from {@code --tag-output} lines. */
  Map<Integer, List<String>> taggedStdout() {
    Map<Integer, List<String>> m = new TreeMap<>();
    for (String line : stdout().lines().toList()) {
      Matcher x = TAGGED.matcher(line);
      if (x.matches() && x.group(3).equals("stdout")) {
        m.computeIfAbsent(Integer.parseInt(x.group(2)), k -> new ArrayList<>()).add(x.group(4));
      }
    }
    return m;
  }

  /** The namespace named in the tags (the job id). */
  String taggedJobId() {
    for (String line : stdout().lines().toList()) {
      Matcher x = TAGGED.matcher(line);
      if (x.matches()) {
        return x.group(1);
      }
    }
    throw new AssertionError("no tagged line\n" + describe());
  }

  JsonNode report(String name) {
    try {
      return new ObjectMapper().readTree(Files.readString(dir.resolve(name), UTF_8));
    } catch (IOException e) {
      throw new AssertionError("no readable report " + name + "\n" + describe(), e);
    }
  }

  String describe() {
    return "command " + command + "\nexit " + exit + " after " + elapsed.toMillis() + " ms"
        + "\n--- stdout ---\n" + tail(stdout()) + "\n--- stderr ---\n" + tail(stderr());
  }

  private static String tail(String s) {
    String[] lines = s.split("\n");
    int from = Math.max(0, lines.length - 80);
    return (from > 0 ? "[" + from + " lines]\n" : "")
        + String.join("\n", List.of(lines).subList(from, lines.length));
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }
  }
}
