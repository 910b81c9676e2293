package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of the reliability scripts' drivers (bin/lib/*.py) for a bounded IT: in {@code out},
 * output to {@code out/driver.txt}, no PMIx variables inherited, the files of servers and JVMs
 * under target/ (TMPDIR), killed with every descendant when it outlives its (scaled) limit.
 */
final class DriverScript {
  private DriverScript() {}

  /** What the driver printed and its exit status. */
  record Result(String text, int exit) {}

  /**
   * Runs {@code cmd} to its end.
   *
   * @throws AssertionError naming {@code what} if it does not end within {@code limit} (scaled)
   */
  static Result run(
      String what, List<String> cmd, Path out, Duration limit, Map<String, String> env)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(out.toFile());
    Path log = out.resolve("driver.txt");
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
    pb.environment().put("TMPDIR", System.getProperty("java.io.tmpdir"));
    pb.environment().putAll(env);
    Process p = pb.start();
    Duration scaled = Timing.scaled(limit);
    if (!p.waitFor(scaled.toNanos(), TimeUnit.NANOSECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor();
      throw new AssertionError(what + " did not end within " + scaled + "\n" + read(log));
    }
    return new Result(read(log), p.exitValue());
  }

  private static String read(Path f) throws IOException {
    return new String(Files.readAllBytes(f), UTF_8);
  }
}
