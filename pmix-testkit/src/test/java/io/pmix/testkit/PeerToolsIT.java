package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The tools of OpenPMIx 6.1.0 and master (../shared/peers), which announce bfrops {@code v61},
 * attach to {@code bin/pmixrun --tool-support} without {@code PMIX_MCA_bfrops=v41}: {@code pps
 * --pid} lists the job, {@code simptool} (found by its search of TMPDIR) runs its query, which
 * pmixrun answers NOT_FOUND as it does any query it has no answer to, and finalizes.
 */
@ExtendWith(PmixTestExtension.class)
class PeerToolsIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"v6.1.0", "master"})
  @Timeout(150)
  void v61ToolsAttach(String version, @TempDir Path tmp) throws Exception {
    Path pps = Peers.program(version, "pps");
    Path simptool = Peers.program(version, "simptool");
    Path libs = Peers.libraryPath(version);
    Path stop = tmp.resolve("stop");
    try (PmixRunProcess p =
        PmixRunProcess.start(List.of(), Map.of("TMPDIR", tmp.toString()), "--tool-support",
            "-n", "1", "--timeout", "80", "--", "sh", "-c",
            "while [ ! -e " + stop + " ]; do sleep 0.1; done")) {
      String suffix = ".tool." + p.process.pid();
      Await.condition("pmixrun's rendezvous file under " + tmp,
          () -> {
            try (Stream<Path> s = Files.walk(tmp)) {
              return s.anyMatch(f -> f.getFileName().toString().endsWith(suffix));
            } catch (IOException | UncheckedIOException e) {
              return false; // a directory went while we looked
            }
          },
          Timing.scaled(Duration.ofSeconds(60)));
      String ppsOut = tool(tmp, libs, "pps", pps.toString(), "--pid",
          Long.toString(p.process.pid()));
      assertTrue(ppsOut.contains("jrun-") && ppsOut.contains("@1"), ppsOut);
      String simpOut = tool(tmp, libs, "simptool", simptool.toString());
      assertTrue(simpOut.contains("PMIx_Query_info failed: -46"), simpOut);
      assertTrue(simpOut.contains("PMIx_Finalize successfully completed"), simpOut);
      Files.createFile(stop);
      p.await(LIMIT);
      assertEquals(0, p.exit(), p::describe);
    }
  }

  /** Runs a peer tool with the peers' libraries and only TMPDIR to find pmixrun; its output. */
  private static String tool(Path tmp, Path libs, String name, String... cmd) throws Exception {
    Path out = tmp.resolve(name + ".out");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
    pb.environment().remove("TEMP");
    pb.environment().remove("TMP");
    pb.environment().put("TMPDIR", tmp.toString());
    pb.environment().put("LD_LIBRARY_PATH", libs.toString());
    Process t = pb.start();
    if (!t.waitFor(Timing.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)) {
      t.destroyForcibly();
      throw new AssertionError(name + " hung: " + Files.readString(out, UTF_8));
    }
    String text = Files.readString(out, UTF_8);
    assertEquals(0, t.exitValue(), () -> name + ": " + text);
    return text;
  }
}
