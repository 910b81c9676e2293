package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

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

  /** A prerequisite of a driver: when missing, fails under CI (interop required), else skips. */
  static void require(boolean ok, String why) {
    if (!ok) {
      if (PmixTestExtension.interopRequired()) {
        throw new AssertionError(why + " (required here: CI=true or pmix.interop.required=true)");
      }
      Assumptions.abort(why);
    }
  }

  /** {@code target/<name>} of the module under test, created: the driver's directory. */
  static Path outDir(String name) throws IOException {
    Path out = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("target/" + name);
    Files.createDirectories(out);
    return out;
  }

  /**
   * The arguments every driver takes, in its bounded form: {@code python3 bin/lib/<driver>
   * --quick --out OUT --client CLIENT --java JAVA --jcmd JCMD --cp CP} (the kit's own classes and
   * its runtime dependencies, what bin/pmixrun runs on), then {@code extra}. Requires jcmd.
   */
  static List<String> quickCommand(String driver, Path out, Path client, String... extra)
      throws IOException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    require(Files.isExecutable(jcmd), "jcmd is not in " + jcmd.getParent());
    Path module = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
    String cp =
        module.resolve("target/classes") + File.pathSeparator
            + Files.readString(module.resolve("target/classpath.txt"), UTF_8).strip();
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "python3", PmixRunProcess.repoRoot().resolve("bin/lib/" + driver).toString(),
                "--quick", "--out", out.toString(), "--client", client.toString(),
                "--java", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--jcmd", jcmd.toString(), "--cp", cp));
    cmd.addAll(List.of(extra));
    return cmd;
  }

  private static String read(Path f) throws IOException {
    return new String(Files.readAllBytes(f), UTF_8);
  }
}
