package io.pmix.client.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code PMIx.connect}, {@code disconnect} and {@code spawn} of the Java client against Open MPI
 * 4.1's {@code mpirun}, whose runtime is a libpmix 4.2.2 server with a host that implements spawn
 * and connect: two Java ranks connect and disconnect over their namespace; a connect the other
 * rank never joins fails with the server's ERR_TIMEOUT ({@code pmix.timeout} 1 s); one the other
 * rank leaves (finalize and exit) while rank 0 waits fails with the server's
 * ERR_PARTIAL_SUCCESS; rank 0 spawns two {@code /bin/true} and reads the child's job size from
 * the spawn reply alone ({@code pmix.optional}).
 */
class MpirunConnectSpawnIT {
  @Test
  void connectDisconnectAndSpawnUnderMpirun() throws Exception {
    Path mpirun = Path.of("/usr/bin/mpirun");
    if (!Files.isExecutable(mpirun)) {
      throw CPrograms.unavailable("Open MPI's mpirun is not installed (Debian: openmpi-bin)");
    }
    List<String> cmd = new ArrayList<>(
        List.of(mpirun.toString(), "--allow-run-as-root", "--oversubscribe", "-np", "2"));
    cmd.addAll(javaMain(
        "connect", "disconnect", "connect-timeout", "connect-lost-finalize",
        "spawn", "2", "/bin/true"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("OMPI_"));
    Process p = pb.start();
    p.getOutputStream().close();
    String out;
    try {
      if (!p.waitFor(CProcess.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
      }
      out = new String(p.getInputStream().readAllBytes(), UTF_8);
    } finally {
      p.destroyForcibly();
    }
    assertEquals(0, p.waitFor(), out);
    for (int r = 0; r < 2; r++) {
      assertTrue(out.contains("CS " + r + " connect OK"), out);
      assertTrue(out.contains("CS " + r + " disconnect OK"), out);
    }
    assertTrue(out.contains("CS 0 connect-timeout OK status=-24 PMIX_ERR_TIMEOUT"), out);
    assertTrue(
        out.contains("CS 0 connect-lost-finalize OK status=-52 PMIX_ERR_PARTIAL_SUCCESS"), out);
    Matcher m = Pattern.compile("CS 0 spawn OK nspace=(\\S+) job.size=(\\d+)").matcher(out);
    assertTrue(m.find(), out);
    assertEquals("2", m.group(2), out);
    assertTrue(out.contains("CS 0 finalize OK"), out);
  }

  static List<String> javaMain(String... steps) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xss1m");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ConnectSpawnMain.class.getName());
    cmd.addAll(List.of(steps));
    return cmd;
  }
}
