package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Builds C programs against the installed OpenPMIx ({@code gcc <source> $(pkg-config --cflags
 * --libs pmix)}), caching the executables, so tests can launch real libpmix clients.
 *
 * <p>The executable's name carries a hash of the source, the extra gcc arguments and the
 * pkg-config flags: an unchanged program is compiled once and reused across test classes, runs
 * and builds; within one JVM each program is built at most once. Builds go to the {@linkplain
 * #cacheDirectory() cache directory} under a private name and are moved into place, so parallel
 * builds never see half a file. (This is the approach of pmix-common's test-only {@code
 * CPrograms}, in main code so that the kit and its users can rely on it.)
 *
 * <p>The kit's own C programs travel inside its jar: {@link #clientCheck()} is {@code
 * pmix_client_check} (the configurable libpmix client whose {@code STEP} lines tests read) and
 * {@link #hostServer()} is {@code pmix_host_server} (the C reference server).
 *
 * <p>Missing gcc, pkg-config or libpmix development files raise {@link
 * CToolchainUnavailableException} (which {@link PmixTestExtension} turns into a skip or, in CI, a
 * failure); a source that does not compile raises {@link IllegalStateException} with gcc's
 * output. Thread-safe.
 */
public final class CCompiler {
  /** System property naming the cache directory. */
  public static final String CACHE_PROPERTY = "pmix.testkit.cCache";

  private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(2);
  private static final String RESOURCE_DIR = "/io/pmix/testkit/c/";

  @GuardedBy("CCompiler.class")
  private static final Map<String, Path> BUILT = new HashMap<>();

  private CCompiler() {}

  /**
   * The executable built from {@code source}, compiling it if needed.
   *
   * @param source a C file, absolute or relative to the module directory (system property {@code
   *     basedir}, which surefire and failsafe set, else the working directory)
   * @param extraGccArgs more gcc arguments, after the source and before the pkg-config flags
   * @throws CToolchainUnavailableException if gcc, pkg-config or libpmix is missing
   * @throws IllegalStateException if the program does not compile
   */
  public static synchronized Path compile(Path source, String... extraGccArgs) {
    requireNonNull(source, "source");
    Path src = moduleDir().resolve(source).toAbsolutePath().normalize();
    String memo = src + "\0" + String.join("\0", extraGccArgs);
    Path exe = BUILT.get(memo);
    if (exe == null || !Files.isExecutable(exe)) {
      exe = build(src, extraGccArgs);
      BUILT.put(memo, exe);
    }
    return exe;
  }

  /** {@code pmix_client_check}, built from the copy in this kit's jar. */
  public static Path clientCheck() {
    return compileBundled("pmix_client_check.c", "-lpthread");
  }

  /** {@code pmix_host_server}, the C reference server, built from the copy in this kit's jar. */
  public static Path hostServer() {
    return compileBundled("pmix_host_server.c", "-lpthread");
  }

  /**
   * Where executables are cached: system property {@value #CACHE_PROPERTY}, else {@code
   * target/c-programs} of the module directory.
   */
  public static Path cacheDirectory() {
    String p = System.getProperty(CACHE_PROPERTY);
    if (p != null && !p.isEmpty()) {
      return Path.of(p).toAbsolutePath();
    }
    return moduleDir().resolve("target").resolve("c-programs").toAbsolutePath();
  }

  private static synchronized Path compileBundled(String name, String... extraGccArgs) {
    byte[] code;
    try (InputStream in = CCompiler.class.getResourceAsStream(RESOURCE_DIR + name)) {
      if (in == null) {
        throw new IllegalStateException("the testkit jar lacks " + RESOURCE_DIR + name);
      }
      code = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String hash = Hashing.sha256().hashBytes(code).toString().substring(0, 16);
    Path dir = cacheDirectory().resolve("src");
    Path src = dir.resolve(name.replaceFirst("\\.c$", "") + "-" + hash).resolve(name);
    try {
      if (!Files.isRegularFile(src)) {
        Files.createDirectories(src.getParent());
        Path tmp = Files.createTempFile(src.getParent(), name, ".tmp");
        Files.write(tmp, code);
        moveIntoPlace(tmp, src);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("extracting " + name, e);
    }
    return compile(src, extraGccArgs);
  }

  private static Path moduleDir() {
    String basedir = System.getProperty("basedir");
    return Path.of(basedir != null ? basedir : System.getProperty("user.dir"));
  }

  private static Path build(Path src, String[] extraGccArgs) {
    if (!Files.isRegularFile(src)) {
      throw new IllegalArgumentException("no C source " + src);
    }
    Run gcc = run(List.of("gcc", "--version"));
    if (gcc.exitCode() != 0) {
      throw new CToolchainUnavailableException(
          "gcc is not available (" + gcc.output().strip() + "); install gcc (bin/install-test-deps)");
    }
    Run pkg = run(List.of("pkg-config", "--cflags", "--libs", "pmix"));
    if (pkg.exitCode() != 0) {
      throw new CToolchainUnavailableException(
          "pkg-config cannot find OpenPMIx ("
              + pkg.output().strip()
              + "); install pkg-config and the OpenPMIx development files (Debian: libpmix-dev;"
              + " bin/install-test-deps does it)");
    }
    List<String> pmixFlags = Arrays.asList(pkg.output().trim().split("\\s+"));
    byte[] code;
    try {
      code = Files.readAllBytes(src);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Hasher h = Hashing.sha256().newHasher().putBytes(code);
    for (String s : extraGccArgs) {
      h.putString(s, UTF_8).putByte((byte) 0);
    }
    h.putString(String.join(" ", pmixFlags), UTF_8);
    String name = src.getFileName().toString().replaceFirst("\\.c$", "");
    Path dir = cacheDirectory();
    Path exe = dir.resolve(name + "-" + h.hash().toString().substring(0, 16));
    if (Files.isExecutable(exe)) {
      return exe;
    }
    try {
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, name + "-", ".tmp");
      List<String> cmd = new ArrayList<>();
      cmd.addAll(List.of("gcc", "-O1", "-g", "-Wall", "-o", tmp.toString(), src.toString()));
      cmd.addAll(Arrays.asList(extraGccArgs));
      cmd.addAll(pmixFlags);
      Run cc = run(cmd);
      if (cc.exitCode() != 0) {
        Files.deleteIfExists(tmp);
        throw new IllegalStateException(
            "gcc failed to compile " + src + " (exit " + cc.exitCode() + "):\n" + cc.output());
      }
      moveIntoPlace(tmp, exe);
      return exe;
    } catch (IOException e) {
      throw new UncheckedIOException("building " + src, e);
    }
  }

  private static void moveIntoPlace(Path tmp, Path target) throws IOException {
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private record Run(int exitCode, String output) {}

  /** Runs a tool to completion; a tool that cannot be started exits with -1. */
  private static Run run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
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
      throw new IllegalStateException("interrupted running " + command, e);
    }
  }
}
