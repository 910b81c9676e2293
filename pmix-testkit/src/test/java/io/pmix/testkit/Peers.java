package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
}
