package io.pmix.tool.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The C reference host server of pmix-testkit ({@code pmix_host_server.c}, compiled against the
 * installed libpmix at test time) with tool and system support, running a job whose children only
 * sleep, in a tmpdir of its own (mode 0755: libpmix 4.2.2 removes a tmpdir below that mode).
 */
final class CHostServer implements AutoCloseable {
  private static final Pattern READY =
      Pattern.compile(
          "HOST READY nspace=(\\S+) nprocs=(\\d+) server=(\\S+)\\.(\\d+) pid=(\\d+) tmpdir=(\\S+)"
              + " uri=(\\S+) usec=.*");

  final CProcess process;
  final String jobNspace;
  final int nprocs;
  final String serverNspace;
  final long pid;
  final Path tmpdir;
  final String uri;

  private CHostServer(CProcess process, Matcher m) {
    this.process = process;
    this.jobNspace = m.group(1);
    this.nprocs = Integer.parseInt(m.group(2));
    this.serverNspace = m.group(3);
    this.pid = Long.parseLong(m.group(5));
    this.tmpdir = Path.of(m.group(6));
    this.uri = m.group(7);
  }

  /** The compiled server (skips, or fails in CI, when gcc or libpmix is missing). */
  static Path executable() {
    return CPrograms.compile("../pmix-testkit/src/main/c/pmix_host_server.c");
  }

  /** Starts a server with {@code nprocs} sleeping children in a fresh directory below {@code base}. */
  static CHostServer start(Path base, int nprocs) throws IOException {
    Path dir = Files.createTempDirectory(base, "chost-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    CProcess p =
        CProcess.builder(executable())
            .args(
                "--tool-support",
                "--system-support",
                "--tmpdir",
                dir.toString(),
                "-n",
                Integer.toString(nprocs),
                "--timeout",
                "900",
                "--",
                "sleep",
                "900")
            .name("pmix_host_server")
            .start();
    String line = p.readLine(Duration.ofSeconds(60));
    Matcher m = READY.matcher(line == null ? "" : line);
    assertTrue(m.matches(), () -> "server did not start: " + line + "\n" + p.describe());
    return new CHostServer(p, m);
  }

  @Override
  public void close() {
    process.close();
  }
}
