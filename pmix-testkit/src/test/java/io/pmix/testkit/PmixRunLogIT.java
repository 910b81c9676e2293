package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code PMIx_Log} under {@code bin/pmixrun} (LogChannels): stdout and stderr entries reach the
 * launcher's stdout and stderr, once each; a channel the launcher does not have (syslog) is
 * NOT_SUPPORTED, required or not, and nothing of it is written; {@code pmix.log.once} writes the
 * first entry only; Open MPI 5's show-help aggregation ({@code pmix.log.key}/{@code
 * pmix.log.val}) shows a message once and counts the rest. Clients: libpmix 4.2.2 ({@code
 * src/test/c/log_client.c}, which sends every log to its server) and pmix-client ({@link
 * LogMain}).
 */
@ExtendWith(PmixTestExtension.class)
class PmixRunLogIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);
  private static final int NOT_SUPPORTED = Status.ERR_NOT_SUPPORTED.code();

  @Test
  @Timeout(120)
  void cClientsLogToTheLaunchersStdoutAndStderr() {
    Path client = CCompiler.compile(Path.of("src/test/c/log_client.c"));
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "60", "--", client.toString(),
            "pmix.log.stderr", "pmix.log.stdout", "pmix.log.syslog", "!pmix.log.syslog",
            "!pmix.log.stderr", "+", "agg:f", "agg:f");
    assertEquals(0, p.exit(), p::describe);
    List<String> out = p.stdout().lines().toList();
    List<String> err = p.stderr().lines().toList();
    for (int r = 0; r < 2; r++) {
      for (String answer : List.of("pmix.log.stderr 0", "pmix.log.stdout 0",
          "pmix.log.syslog " + NOT_SUPPORTED, "!pmix.log.syslog " + NOT_SUPPORTED,
          "!pmix.log.stderr 0", "+ 0", "fence 0")) {
        assertEquals(1, count(out, "LOG " + r + " " + answer), answer + "\n" + p.describe());
      }
      assertEquals(2, count(out, "LOG " + r + " agg:f 0"), p::describe);
      // The plain stdout log; '+' (stderr then stdout, once) writes its stderr entry only.
      assertEquals(1, count(out, "pmix.log.stdout from rank " + r), p::describe);
      // Plain, required and '+': once each (PRRTE writes the first two twice).
      assertEquals(3, count(err, "pmix.log.stderr from rank " + r), p::describe);
    }
    // The four aggregated messages: the first shown, three counted.
    assertEquals(1, count(err, "help f from rank 0") + count(err, "help f from rank 1"),
        p::describe);
    assertEquals(1, count(err, "3 more processes have sent help message f / topic"),
        p::describe);
    assertFalse(p.stdout().contains("pmix.log.syslog from") || p.stderr().contains(
        "pmix.log.syslog from"), p::describe);
  }

  @Test
  @Timeout(120)
  void taggedOutputTagsTheLoggedLines() {
    Path client = CCompiler.compile(Path.of("src/test/c/log_client.c"));
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "1", "--tag-output", "--timeout", "60", "--",
            client.toString(), "pmix.log.stderr", "pmix.log.stdout");
    assertEquals(0, p.exit(), p::describe);
    String job = p.taggedJobId();
    assertTrue(p.stderr().lines().anyMatch(
        l -> l.equals("[" + job + ",0]<stderr>: pmix.log.stderr from rank 0")), p::describe);
    assertTrue(p.stdout().lines().anyMatch(
        l -> l.equals("[" + job + ",0]<stdout>: pmix.log.stdout from rank 0")), p::describe);
  }

  @Test
  @Timeout(120)
  void javaClientsLogToo() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "60", "--",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
            System.getProperty("java.class.path"), LogMain.class.getName());
    assertEquals(0, p.exit(), p::describe);
    List<String> out = p.stdout().lines().toList();
    List<String> err = p.stderr().lines().toList();
    for (int r = 0; r < 2; r++) {
      assertEquals(1, count(err, "java stderr from rank " + r), p::describe);
      assertEquals(1, count(out, "java stdout from rank " + r), p::describe);
      assertEquals(1, count(out, "LOG " + r + " stderr 0"), p::describe);
      assertEquals(1, count(out, "LOG " + r + " stdout 0"), p::describe);
      assertEquals(1, count(out, "LOG " + r + " !syslog " + NOT_SUPPORTED), p::describe);
    }
    assertFalse(p.stdout().contains("java syslog") || p.stderr().contains("java syslog"),
        p::describe);
  }

  /**
   * Open MPI 5.0.10 (../shared/peers, on PMIx 5.0.11) reports MPI_Abort's help message through
   * {@code PMIx_Log_nb}: under pmixrun it reaches pmixrun's stderr, and not through the rank's
   * own stderr (which {@code --output-filename} keeps in a file): the launcher wrote it.
   */
  @Test
  @Timeout(180)
  void anOpenMpi5HelpMessageReachesTheLaunchersStderr(@TempDir Path tmp) throws Exception {
    Path peers = Peers.dir();
    Path unusedInfo = Peers.program("ompi-5.0.10", "ompi_info"); // fails (CI) or skips if absent
    List<Path> libs = List.of(Peers.libraryPath("ompi-5.0.10"), Peers.libraryPath("v5.0.11"),
        Peers.libraryPath("prrte-3.0.14"));
    String path = libs.stream().map(Path::toString).collect(Collectors.joining(":"));
    Path exe = Path.of(System.getProperty("basedir", "."))
        .resolve("target/c-programs/mpi5_abort_help").toAbsolutePath();
    Files.createDirectories(exe.getParent());
    Process gcc =
        new ProcessBuilder("gcc", "-O1", "-o", exe.toString(),
                Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/mpi_abort_help.c")
                    .toString(),
                "-I" + peers.resolve("ompi-5.0.10/include"), "-L" + libs.get(0), "-lmpi",
                "-Wl,-rpath-link," + path)
            .redirectErrorStream(true)
            .start();
    String gccOut = new String(gcc.getInputStream().readAllBytes(), UTF_8);
    assertEquals(0, gcc.waitFor(), gccOut);
    Map<String, String> env = Map.of(
        "LD_LIBRARY_PATH", path,
        "OPAL_PREFIX", peers.resolve("ompi-5.0.10").toString(),
        "PMIX_PREFIX", peers.resolve("v5.0.11").toString());
    try (PmixRunProcess p =
        PmixRunProcess.start(List.of(), env, "--no-slurm-env", "-n", "2", "--timeout", "60",
            "--output-filename", tmp.toString(), "--", exe.toString())) {
      p.await(LIMIT);
      assertEquals(3, p.exit(), p::describe);
      assertTrue(
          p.stderr().contains("MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD"),
          p::describe);
      Path own =
          tmp.resolve("1").resolve(Launch.Output.FileOutput.rankDir(1, 2)).resolve("stderr");
      assertFalse(Files.readString(own, UTF_8).contains("MPI_ABORT"), p::describe);
    }
  }

  private static long count(List<String> lines, String line) {
    return lines.stream().filter(line::equals).count();
  }
}
