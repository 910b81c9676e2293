package io.pmix.client.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Proc;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs a job under the real C host server ({@code pmix_host_server.c} of pmix-testkit, compiled
 * against the installed libpmix at test time) and collects what its children print. The children
 * are usually forked JVMs running {@link ClientMain}, with this JVM's class path.
 */
final class HostServerRun {
  final int exitCode;
  final List<String> lines;
  final String stderr;

  private HostServerRun(int exitCode, List<String> lines, String stderr) {
    this.exitCode = exitCode;
    this.lines = lines;
    this.stderr = stderr;
  }

  /** The C host server, built for this test run. */
  static Path hostServer() {
    return CPrograms.compile("../pmix-testkit/src/main/c/pmix_host_server.c");
  }

  /** The C client of the test kit. */
  static Path cClient() {
    return CPrograms.compile("../pmix-testkit/src/main/c/pmix_client_check.c");
  }

  /** The command line of a forked JVM running {@link ClientMain} with these steps. */
  static List<String> javaClient(String... steps) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xss1m");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ClientMain.class.getName());
    Collections.addAll(cmd, steps);
    return cmd;
  }

  private static final Pattern READY =
      Pattern.compile("HOST READY nspace=(\\S+) .* tmpdir=(\\S+) uri=(\\S+) usec=.*");

  /**
   * A C host server whose job of one has a launched child that only sleeps, so this JVM can
   * connect in that child's place with {@link #env}: the environment the server gave the child.
   *
   * @param server the running server; closing the standby stops it
   * @param env what a client of rank 0 finds in its environment
   * @param rank0 the job's one process
   */
  record Standby(CProcess server, Map<String, String> env, Proc rank0) implements AutoCloseable {
    @Override
    public void close() {
      server.close();
    }
  }

  /** Starts a {@link Standby} server that ends itself after {@code lifetime} (scaled). */
  static Standby standby(Duration lifetime) {
    return standby(lifetime, false);
  }

  /**
   * Starts a {@link Standby} server that ends itself after {@code lifetime} (scaled); with {@code
   * logUpcalls} it logs every host upcall on stderr ({@code HOSTDBG ...} lines, for {@link
   * CProcess#watchStderr}).
   */
  static Standby standby(Duration lifetime, boolean logUpcalls) {
    String secs = Long.toString(CProcess.scaled(lifetime).toSeconds());
    CProcess.Builder b = CProcess.builder(hostServer()).args("-n", "1", "--timeout", secs);
    if (logUpcalls) {
      b.args("-v");
    }
    CProcess server = b.args("--", "sleep", secs).name("pmix_host_server").start();
    String line = server.readLine(Duration.ofSeconds(60));
    Matcher m = READY.matcher(line);
    if (!m.matches()) {
      server.close();
      throw new AssertionError("unexpected first line of the host server: " + line);
    }
    Map<String, String> env = new HashMap<>();
    env.put("PMIX_NAMESPACE", m.group(1));
    env.put("PMIX_RANK", "0");
    env.put("PMIX_SERVER_URI41", m.group(3));
    env.put("PMIX_SERVER_URI4", m.group(3));
    env.put("PMIX_SECURITY_MODE", "native");
    env.put("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_NON_DESC");
    env.put("PMIX_GDS_MODULE", "hash");
    env.put("PMIX_SERVER_TMPDIR", m.group(2));
    return new Standby(server, Map.copyOf(env), Proc.of(m.group(1), 0));
  }

  /** Runs {@code pmix_host_server -n N [serverArgs] -- command} and waits for it. */
  static HostServerRun run(int n, List<String> serverArgs, List<String> command, Duration timeout)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(hostServer().toString());
    cmd.add("-n");
    cmd.add(Integer.toString(n));
    cmd.add("--timeout");
    cmd.add(Long.toString(CProcess.scaled(timeout).toSeconds()));
    cmd.addAll(serverArgs);
    cmd.add("--");
    cmd.addAll(command);
    ProcessBuilder pb = new ProcessBuilder(cmd);
    // A test JVM started under a PMIx server must not hand its own identity to the children.
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
    Process p = pb.start();
    StringBuilder err = new StringBuilder();
    Thread drain =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(new InputStreamReader(p.getErrorStream(), UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                  synchronized (err) {
                    if (err.length() < 200_000) {
                      err.append(l).append('\n');
                    }
                  }
                }
              } catch (IOException e) {
                // the process is gone
              }
            },
            "host-server-stderr");
    drain.setDaemon(true);
    drain.start();
    // The server enforces its --timeout itself; this bounds a server that hangs regardless (a
    // libpmix deadlock in PMIx_server_finalize was seen), so the test fails instead of hanging.
    Thread watchdog =
        new Thread(
            () -> {
              try {
                if (!p.waitFor(CProcess.scaled(timeout).toSeconds() + 60, TimeUnit.SECONDS)) {
                  p.destroyForcibly();
                }
              } catch (InterruptedException e) {
                p.destroyForcibly();
              }
            },
            "host-server-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8))) {
      for (String l; (l = r.readLine()) != null; ) {
        lines.add(l);
      }
    }
    if (!p.waitFor(CProcess.scaled(timeout).toSeconds() + 30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    drain.join(5000);
    synchronized (err) {
      return new HostServerRun(p.exitValue(), lines, err.toString());
    }
  }

  /** Everything the children and the server printed, for failure messages. */
  String describe() {
    return "exit " + exitCode + "\n--- stdout ---\n" + String.join("\n", lines)
        + "\n--- stderr (tail) ---\n" + tail(stderr, 6000);
  }

  private static String tail(String s, int n) {
    return s.length() <= n ? s : s.substring(s.length() - n);
  }

  /** The detail of rank {@code rank}'s line for {@code step}, asserting that it says OK. */
  String ok(int rank, String step) {
    return new ClientReport(lines, this::describe).ok(rank, step);
  }

  /** The key=value pairs of rank {@code rank}'s OK line for {@code step}. */
  Map<String, String> values(int rank, String step) {
    return new ClientReport(lines, this::describe).values(rank, step);
  }

  /** Asserts the server and every child exited 0. */
  void assertSuccess() {
    assertEquals(0, exitCode, this::describe);
    assertTrue(lines.stream().anyMatch(l -> l.equals("HOST EXIT 0")), this::describe);
  }
}
