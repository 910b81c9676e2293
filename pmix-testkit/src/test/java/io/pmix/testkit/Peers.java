package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The relocatable builds of newer real OpenPMIx peers ({@code ../shared/peers} beside the
 * repository, or the directory named by the system property {@code pmix.peers.dir} or the
 * variable {@code PMIX_PEERS_DIR}): a test that needs them is skipped when they are absent, and
 * fails instead under {@code CI=true}.
 */
final class Peers {
  private Peers() {}

  /** The peers' directory, or a skipped (CI: failed) test. */
  static Path dir() {
    String p = System.getProperty("pmix.peers.dir", System.getenv("PMIX_PEERS_DIR"));
    Path d =
        p != null && !p.isEmpty()
            ? Path.of(p)
            : PmixRunProcess.repoRoot().resolve("../shared/peers").normalize();
    if (!Files.isDirectory(d)) {
      String why = "the OpenPMIx peers are not at " + d + " (set pmix.peers.dir)";
      if (PmixTestExtension.interopRequired()) {
        fail(why);
      }
      Assumptions.abort(why);
    }
    return d;
  }

  /** {@code VERSION/bin/NAME} (e.g. {@code v5.0.11}, {@code simpdmodex}). */
  static Path program(String version, String name) {
    Path exe = dir().resolve(version).resolve("bin").resolve(name);
    if (!Files.isExecutable(exe)) {
      String why = exe + " is missing";
      if (PmixTestExtension.interopRequired()) {
        fail(why);
      }
      Assumptions.abort(why);
    }
    return exe;
  }

  /**
   * A directory for {@code LD_LIBRARY_PATH} that makes {@code VERSION}'s libraries loadable.
   * The copy of the peers this was written against holds its library symlinks as small text
   * files naming their target ({@code libpmix.so.2} containing {@code libpmix.so.2.13.11}), which
   * the loader rejects ("file too short"); for each such file this directory (under target/)
   * holds a real symlink to the file it names. With intact symlinks it is empty and harmless.
   */
  static Path libraryPath(String version) {
    Path lib = dir().resolve(version).resolve("lib");
    Path out =
        Path.of(System.getProperty("basedir", ".")).resolve("target/peer-libs").resolve(version)
            .toAbsolutePath();
    try {
      Files.createDirectories(out);
      try (Stream<Path> s = Files.list(lib)) {
        for (Path f : s.toList()) {
          if (Files.isSymbolicLink(f) || !Files.isRegularFile(f) || Files.size(f) > 255) {
            continue;
          }
          String target = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1).trim();
          Path real = lib.resolve(target);
          if (target.contains("/") || !Files.isRegularFile(real)) {
            continue;
          }
          Path link = out.resolve(f.getFileName());
          Files.deleteIfExists(link);
          Files.createSymbolicLink(link, real.toAbsolutePath());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot mend the links of " + lib, e);
    }
    return out;
  }

  /**
   * {@code VERSION/bin/NAME} made runnable: the copy the tests were written against holds some
   * programs as small text files naming their target ({@code prterun} containing {@code prte}),
   * like its libraries; for such a file this gives a real symlink under target/peer-bin to the
   * program it names (which, like PRRTE's, may act on the name it was run as). An intact program
   * is returned as is.
   */
  static Path mendedProgram(String version, String name) {
    Path bin = dir().resolve(version).resolve("bin");
    Path exe = bin.resolve(name);
    try {
      if (Files.isExecutable(exe)) {
        return exe;
      }
      if (!isTextLink(exe)) {
        String why = exe + " is missing";
        if (PmixTestExtension.interopRequired()) {
          fail(why);
        }
        Assumptions.abort(why);
      }
      String target = new String(Files.readAllBytes(exe), StandardCharsets.ISO_8859_1).trim();
      Path out =
          Path.of(System.getProperty("basedir", ".")).resolve("target/peer-bin").resolve(version)
              .toAbsolutePath();
      Files.createDirectories(out);
      Path link = out.resolve(name);
      Files.deleteIfExists(link);
      Files.createSymbolicLink(link, bin.resolve(target).toAbsolutePath());
      return link;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot mend " + exe, e);
    }
  }

  private static boolean isTextLink(Path f) throws IOException {
    return Files.isRegularFile(f) && !Files.isSymbolicLink(f) && Files.size(f) <= 255
        && !Files.isExecutable(f);
  }

  /** {@code LD_LIBRARY_PATH} for Open MPI 5.0.10's programs: its, PRRTE's and 5.0.11's libraries. */
  static String ompiLibraryPath() {
    return libraryPath("ompi-5.0.10") + ":" + libraryPath("prrte-3.0.14") + ":"
        + libraryPath("v5.0.11");
  }

  /**
   * Compiles an MPI program against Open MPI 5.0.10 of the peers, into target/c-programs as
   * {@code NAME-ompi5}: gcc with its headers and libmpi, as its {@code mpicc --showme} says (the
   * wrapper itself links against the copy's unmended {@code libmpi.so}, which ld cannot read).
   * The program names libmpi, libopen-pal and libpmix itself, found through an RPATH (searched
   * before LD_LIBRARY_PATH) in the mended directories: a job that mpirun's MPI_Comm_spawn starts
   * gets the copy's own lib/ put first in its LD_LIBRARY_PATH, where the text-file links would
   * stop the loader ("file too short").
   */
  static Path ompiCompile(Path src) throws IOException, InterruptedException {
    Path ompi = dir().resolve("ompi-5.0.10");
    String name = src.getFileName().toString().replaceFirst("\\.c$", "") + "-ompi5";
    Path exe = Path.of(System.getProperty("basedir", ".")).resolve("target/c-programs/" + name)
        .toAbsolutePath();
    Files.createDirectories(exe.getParent());
    Path mpi = libraryPath("ompi-5.0.10");
    Path pmix = libraryPath("v5.0.11");
    Process p =
        new ProcessBuilder("gcc", "-O1", "-I" + ompi.resolve("include"), "-o", exe.toString(),
            src.toAbsolutePath().toString(), "-L" + mpi, "-L" + pmix, "-Wl,--no-as-needed",
            "-Wl,--disable-new-dtags", "-Wl,-rpath," + mpi + ":" + pmix, "-lmpi", "-lopen-pal",
            "-lpmix")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new AssertionError("cannot compile " + src + " against Open MPI 5.0.10:\n" + out);
    }
    return exe;
  }

  /**
   * Runs {@code program args} at {@code -n n} under Open MPI 5.0.10's own {@code mpirun} (as
   * root, oversubscribed), which execs PRRTE 3.0.14's prterun: named by {@code OMPI_PRTERUN}
   * because the copy's {@code prterun} may be a text file naming {@code prte} ({@link
   * #mendedProgram}). The programs get Open MPI's, PRRTE's and 5.0.11's libraries and {@code
   * OPAL_PREFIX}; output through {@link #run} (files under {@code work}).
   */
  static Run mpirun(int n, Path work, Duration limit, String program, String... args)
      throws IOException, InterruptedException {
    Path ompi = dir().resolve("ompi-5.0.10");
    List<String> cmd = new ArrayList<>(List.of(program("ompi-5.0.10", "mpirun").toString(),
        "--allow-run-as-root", "--oversubscribe", "-x", "LD_LIBRARY_PATH", "-n",
        Integer.toString(n), program));
    cmd.addAll(List.of(args));
    return run(
        cmd,
        Map.of("LD_LIBRARY_PATH", ompiLibraryPath(), "OPAL_PREFIX", ompi.toString(),
            "PRTE_PREFIX", dir().resolve("prrte-3.0.14").toString(),
            "OMPI_PRTERUN", mendedProgram("prrte-3.0.14", "prterun").toString()),
        work,
        limit);
  }

  /** What a command run by {@link #run} printed (stdout and stderr together), and its exit. */
  record Run(int exit, String out) {}

  /**
   * Runs {@code cmd} as a peer runtime's own launch would: none of this JVM's PMIx, Open MPI or
   * PRRTE variables, TMPDIR this test's, {@code env} added (over those), stdin /dev/null, output
   * through a file under {@code dir}. Killed with its descendants, and an AssertionError, if it has not ended
   * within {@code limit} (scaled).
   */
  static Run run(List<String> cmd, Map<String, String> env, Path dir, Duration limit)
      throws IOException, InterruptedException {
    Files.createDirectories(dir);
    Path out = Files.createTempFile(dir, "out-", ".txt");
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.redirectOutput(out.toFile());
      pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
      pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("OMPI_")
          || k.startsWith("PRTE_"));
      pb.environment().put("TMPDIR", System.getProperty("java.io.tmpdir"));
      pb.environment().putAll(env);
      Process p = pb.start();
      if (!p.waitFor(Timing.scaled(limit).toMillis(), TimeUnit.MILLISECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor();
        throw new AssertionError(
            cmd.get(0) + " did not end:\n" + Files.readString(out, StandardCharsets.UTF_8));
      }
      return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
