package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kill -9 at any moment, bounded (issue #18): {@code bin/chaos-kill}'s driver ({@code
 * bin/lib/chaos_kill.py}) runs 5 trials with a fixed seed under {@code bin/pmixrun} only: jobs of 8
 * libpmix 4.2.2 clients with random ranks SIGKILLed in init, before a fence, in the gets or around
 * finalize. Every trial must end with a non-zero status and a message naming the killed rank, no
 * survivor may hang, and the state report's counters must match what the ranks printed.
 */
@ExtendWith(PmixTestExtension.class)
class ChaosKillIT {
  private static final int TRIALS = 5;

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void fiveTrialsKeepTheInvariants() throws IOException, InterruptedException {
    Path root = PmixRunProcess.repoRoot();
    Path out = Path.of(System.getProperty("basedir", ".")).resolve("target/chaos-kill-it");
    Files.createDirectories(out);
    List<String> cmd =
        List.of(
            "python3", root.resolve("bin/lib/chaos_kill.py").toString(),
            "--servers", "java", "--trials", Integer.toString(TRIALS), "--seed", "1818",
            "--job-timeout", "40", "--client-timeout", "10",
            "--out", out.toAbsolutePath().toString(),
            "--client", CCompiler.clientCheck().toString(),
            "--chost", CCompiler.hostServer().toString(),
            "--pmixrun", root.resolve("bin/pmixrun").toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(out.toFile());
    Path log = out.resolve("driver.txt");
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
    // the servers' and JVMs' files go under target/, as PmixRunProcess arranges
    pb.environment().put("TMPDIR", System.getProperty("java.io.tmpdir"));
    pb.environment().put(
        "PMIXRUN_JAVA_OPTS", "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    Process p = pb.start();
    Duration limit = Timing.scaled(Duration.ofMinutes(4));
    if (!p.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor();
      throw new AssertionError("chaos-kill did not end within " + limit + "\n" + read(log));
    }
    String text = read(log);
    List<String> trials = text.lines().filter(l -> l.startsWith("trial ")).toList();
    assertEquals(TRIALS, trials.size(), text);
    for (String t : trials) {
      assertTrue(t.contains("java: ended rc=") && !t.contains("java: ended rc=0 "), t);
      assertTrue(t.contains(" exact"), t);
      assertFalse(t.contains("PROBLEMS"), t);
      assertFalse(t.contains("hung"), t);
    }
    assertEquals(0, p.exitValue(), text);
  }

  private static String read(Path f) throws IOException {
    return new String(Files.readAllBytes(f), UTF_8);
  }
}
