package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
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
 * The soak, bounded (issue #18): {@code bin/soak}'s driver ({@code bin/lib/soak.py}) with 400
 * cycles per phase against one pmixrun server: libpmix 4.2.2 clients (4 ranks x 100
 * init/put/commit/fence/get/finalize), pmix-client Java clients (4 JVMs x 100) and pmix-tool
 * attach/query/detach (400, then 40 runs of libpmix's {@code pps --pid}), and 80 jobs of 4 C
 * clients a tool spawns one after the other. Every cycle must succeed; at every idle sample (every
 * 100 cycles, every 10 jobs) the server's fds and threads equal the phase's start; the lowest
 * live heap of the second half's samples is at most 0.5 MiB above the first half's, and its RSS
 * outside the heap grew at most 8 MiB from the middle to the end (the 80 jobs find a launcher
 * that keeps every ended job: it did, 35 KiB each); and the state report shows no peer connected,
 * no tool left and every rank finalized. No timing is asserted.
 * Missing {@code pps} or {@code jcmd} skip it, and fail it under CI=true.
 */
@ExtendWith(PmixTestExtension.class)
class SoakIT {
  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void fourHundredCyclesPerPhaseStayFlat() throws IOException, InterruptedException {
    Path client = CCompiler.clientCheck(); // a missing C toolchain skips, or fails in CI
    Path pps = onPath("pps");
    DriverScript.require(pps != null, "libpmix's pps is not on the PATH (Debian: libpmix-bin)");
    Path out = DriverScript.outDir("soak-it");
    List<String> cmd = DriverScript.quickCommand("soak.py", out, client, "--pps", pps.toString());
    DriverScript.Result r = DriverScript.run("soak", cmd, out, Duration.ofMinutes(4), Map.of());
    String text = r.text();
    for (String phase : List.of("c", "java", "tool")) {
      assertTrue(text.contains("soak: " + phase + " phase flat (400 cycles"), text);
    }
    assertTrue(text.contains("soak: jobs phase flat (80 cycles"), text);
    assertTrue(text.contains("tool: 40 pps runs, 0 failed"), text);
    assertTrue(
        text.contains("soak: every cycle succeeded, every phase flat, state report counters exact"),
        text);
    assertEquals(0, r.exit(), text);
  }

  private static Path onPath(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path f = Path.of(dir.isEmpty() ? "." : dir, name);
      if (Files.isExecutable(f)) {
        return f;
      }
    }
    return null;
  }
}
