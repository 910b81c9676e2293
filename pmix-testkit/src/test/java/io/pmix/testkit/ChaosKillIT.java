package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
    DriverScript.Result r =
        DriverScript.run(
            "chaos-kill",
            cmd,
            out,
            Duration.ofMinutes(4),
            Map.of(
                "PMIXRUN_JAVA_OPTS",
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir")));
    String text = r.text();
    List<String> trials = text.lines().filter(l -> l.startsWith("trial ")).toList();
    assertEquals(TRIALS, trials.size(), text);
    for (String t : trials) {
      assertTrue(t.contains("java: ended rc=") && !t.contains("java: ended rc=0 "), t);
      assertTrue(t.contains(" exact"), t);
      assertFalse(t.contains("PROBLEMS"), t);
      assertFalse(t.contains("hung"), t);
    }
    assertEquals(0, r.exit(), text);
  }
}
