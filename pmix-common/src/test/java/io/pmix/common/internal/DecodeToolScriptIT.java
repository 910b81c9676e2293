package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.TestTiming;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/pmix-decode} end to end: the script, the jar and the classpath file the package phase
 * writes. An IT because it needs the packaged jar.
 */
class DecodeToolScriptIT {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path SCRIPT = ROOT.resolve("bin/pmix-decode");

  @BeforeAll
  static void built() {
    Assumptions.assumeTrue(
        Files.isRegularFile(ROOT.resolve("pmix-common/target/classpath.txt")),
        "pmix-common is not packaged");
  }

  private record Result(int status, String out, String err) {}

  private static Result run(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(SCRIPT.toString());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE);
    pb.environment().put("LC_ALL", "C"); // the tool writes UTF-8 whatever the locale
    Process p = pb.start();
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    assertTrue(
        p.waitFor(TestTiming.seconds(60).toMillis(), TimeUnit.MILLISECONDS),
        "pmix-decode did not finish");
    return new Result(
        p.exitValue(),
        new String(out, StandardCharsets.UTF_8),
        new String(err, StandardCharsets.UTF_8));
  }

  @Test
  void decodesSeveralPackCalls() throws Exception {
    Result r =
        run("--types", "PMIX_STRING,PMIX_INT32,PMIX_INFO", "020c737061776e00020e02046b00000d01");
    assertEquals("", r.err());
    assertEquals(0, r.status());
    assertEquals(
        """
        PMIX_STRING spawn
        PMIX_INT32 7
        PMIX_INFO key=k flags=0x0
          PMIX_UINT16 1
        """,
        r.out());
  }

  @Test
  void writesUtf8AndExitCodes() throws Exception {
    Result r = run("--types", "string", "021668c3a96c6c6f20e282ac00");
    assertEquals("PMIX_STRING h\u00e9llo \u20ac\n", r.out());
    r = run("--types", "PMIX_INFO", "02046b00000d");
    assertEquals(1, r.status());
    assertTrue(
        r.err().startsWith("pmix-decode: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER at byte 6"));
    assertEquals(2, run("0200").status());
  }
}
