package io.pmix.common.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Compiles the C programs of the repository (test peers, reference servers and clients) against the
 * installed OpenPMIx, for tests that talk to the real C library.
 *
 * <p>{@link #compile} runs {@code gcc <source> $(pkg-config --cflags --libs pmix)} into {@code
 * target/c-programs/} of the calling module; {@code $CC} and {@code $PKG_CONFIG} replace gcc and
 * pkg-config when set. The executable's name carries a hash of the source, the compiler, the extra
 * arguments and the pkg-config flags, so an unchanged program is compiled once and then reused,
 * across test classes and across builds; within one JVM each program is compiled at most once.
 *
 * <p>When the compiler, pkg-config or the OpenPMIx development files are missing, the test cannot
 * run. It is then <em>skipped</em> (a JUnit assumption fails, and the reason is printed once on
 * stderr) on a developer machine, but <em>fails</em> when interop is required: environment variable
 * {@code CI=true} or system property {@code pmix.interop.required=true} (the parent pom passes
 * {@code CI} through). A C source that does not compile always fails: that is a bug in the
 * repository, not a missing tool.
 *
 * <p>Call it where a skip should happen. JUnit Jupiter: {@code @BeforeEach} or the test (surefire
 * and failsafe count the tests of a class aborted in {@code @BeforeAll} as neither run nor
 * skipped). jqwik: a {@code @Provide} method or the property's first statement (jqwik reports an
 * abort in {@code @BeforeContainer} or a lifecycle hook as an error). Thread-safe.
 */
public final class CPrograms {
  private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(2);

  @GuardedBy("CPrograms.class")
  private static final Map<String, Path> COMPILED = new HashMap<>();

  /** Why the toolchain cannot be used ("" when it can), once probed. */
  @GuardedBy("CPrograms.class")
  private static @Nullable String toolchainProblem;

  @GuardedBy("CPrograms.class")
  private static @Nullable List<String> pmixFlags;

  @GuardedBy("CPrograms.class")
  private static final Set<String> REPORTED = new HashSet<>();

  private CPrograms() {}

  /**
   * The executable built from {@code source}, compiling it if needed.
   *
   * @param source the C file: absolute, or relative to the module directory (system property {@code
   *     basedir}, which surefire and failsafe set, else the working directory), e.g. {@code
   *     "src/test/c/codec_peer.c"}
   * @param extraGccArgs more arguments for gcc, after the source and before the pkg-config flags
   *     (e.g. {@code "-DVERBOSE"}, {@code "-lm"})
   * @return the path of the executable
   * @throws org.opentest4j.TestAbortedException if the toolchain or libpmix is missing and interop
   *     is not required (the test is skipped)
   * @throws AssertionError if the toolchain is missing and interop is required, or if the program
   *     does not compile
   */
  public static synchronized Path compile(String source, String... extraGccArgs) {
    Path src = moduleDir().resolve(source).toAbsolutePath().normalize();
    String key = src + "\0" + String.join("\0", extraGccArgs);
    Path exe = COMPILED.get(key);
    if (exe == null) {
      // Not cached when it throws: every caller gets its own skip or failure.
      exe = build(src, extraGccArgs);
      COMPILED.put(key, exe);
    }
    return exe;
  }

  /** Whether a missing C toolchain or libpmix must fail tests rather than skip them. */
  public static boolean interopRequired() {
    return "true".equals(System.getenv("CI"))
        || "true".equals(System.getProperty("pmix.interop.required"));
  }

  /**
   * Skips the calling test (or fails it, when interop is required) because something it needs from
   * the C side is missing.
   *
   * @param reason what is missing and how to get it
   * @return never returns normally; declared so callers can write {@code throw unavailable(..)}
   */
  public static AssertionError unavailable(String reason) {
    if (interopRequired()) {
      Assertions.fail(
          reason + " (interop is required here: CI=true or pmix.interop.required=true)");
    }
    synchronized (CPrograms.class) {
      // Test reports rarely show why a test was skipped: say it once on stderr.
      if (REPORTED.add(reason)) {
        System.err.println("[pmix interop] skipping tests that need the C library: " + reason);
      }
    }
    Assumptions.abort(reason);
    throw new AssertionError("unreachable");
  }

  /** The directory relative source paths are resolved against. */
  static Path moduleDir() {
    String basedir = System.getProperty("basedir");
    return Path.of(basedir != null ? basedir : System.getProperty("user.dir"));
  }

  @GuardedBy("CPrograms.class")
  private static Path build(Path src, String[] extraGccArgs) {
    if (!Files.isRegularFile(src)) {
      throw new AssertionError("no C source " + src);
    }
    List<String> cc = Arrays.asList(tool("CC", "gcc").split("\\s+"));
    List<String> flags = probeToolchain(cc);
    byte[] code;
    try {
      code = Files.readAllBytes(src);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Hasher h = Hashing.sha256().newHasher().putBytes(code).putString(cc.toString(), UTF_8);
    for (String s : extraGccArgs) {
      h.putString(s, UTF_8).putByte((byte) 0);
    }
    h.putString(String.join(" ", flags), UTF_8);
    String name = src.getFileName().toString().replaceFirst("\\.c$", "");
    Path dir = moduleDir().resolve("target").resolve("c-programs");
    Path exe = dir.resolve(name + "-" + h.hash().toString().substring(0, 16));
    if (Files.isExecutable(exe)) {
      return exe;
    }

    try {
      Files.createDirectories(dir);
      // Build under a private name, then move into place: parallel builds never see half a file.
      Path tmp = Files.createTempFile(dir, name + "-", ".tmp");
      List<String> cmd = new ArrayList<>();
      cmd.addAll(cc);
      cmd.addAll(List.of("-O1", "-g", "-Wall", "-o", tmp.toString(), src.toString()));
      cmd.addAll(Arrays.asList(extraGccArgs));
      cmd.addAll(flags);
      Run compiled = run(cmd);
      if (compiled.exitCode() != 0) {
        Files.deleteIfExists(tmp);
        throw new AssertionError(
            String.join(" ", cmd)
                + " failed (exit "
                + compiled.exitCode()
                + "):\n"
                + compiled.output());
      }
      try {
        Files.move(tmp, exe, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, exe, StandardCopyOption.REPLACE_EXISTING);
      }
      return exe;
    } catch (IOException e) {
      throw new UncheckedIOException("building " + src, e);
    }
  }

  /** The flags pkg-config gives for OpenPMIx; probed once per JVM, and so is a failure. */
  @GuardedBy("CPrograms.class")
  private static List<String> probeToolchain(List<String> cc) {
    if (toolchainProblem == null) {
      List<String> version = new ArrayList<>(cc);
      version.add("--version");
      Run gcc = run(version);
      Run pkg = run(List.of(tool("PKG_CONFIG", "pkg-config"), "--cflags", "--libs", "pmix"));
      if (gcc.exitCode() != 0) {
        toolchainProblem =
            "C compiler "
                + String.join(" ", cc)
                + " is not available ("
                + gcc.output().strip()
                + ")";
      } else if (pkg.exitCode() != 0) {
        toolchainProblem =
            "pkg-config cannot find OpenPMIx ("
                + pkg.output().strip()
                + "); install pkg-config and the OpenPMIx development files (Debian: libpmix-dev)";
      } else {
        toolchainProblem = "";
        pmixFlags = Arrays.asList(pkg.output().trim().split("\\s+"));
      }
    }
    if (!toolchainProblem.isEmpty()) {
      throw unavailable(toolchainProblem);
    }
    return requireNonNull(pmixFlags);
  }

  /** The command an environment variable names, or the default. */
  private static String tool(String variable, String fallback) {
    String v = System.getenv(variable);
    return v != null && !v.isBlank() ? v.trim() : fallback;
  }

  private record Run(int exitCode, String output) {}

  /** Runs a tool to completion; a tool that cannot be started exits with -1. */
  private static Run run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      // Outputs here are small (version lines, flags, compiler diagnostics): read them all.
      String out = new String(p.getInputStream().readAllBytes(), UTF_8);
      if (!p.waitFor(TOOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        return new Run(-1, String.join(" ", command) + " did not finish in " + TOOL_TIMEOUT);
      }
      return new Run(p.exitValue(), out);
    } catch (IOException e) {
      return new Run(-1, command.get(0) + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted running " + command, e);
    }
  }
}
