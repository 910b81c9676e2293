package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Java clients (forked JVMs running {@link ClientMain}) under the real C host server of the test
 * kit, built on OpenPMIx 4.2.2: the first end-to-end path of the client, and the mixed Java/C job.
 */
class CHostServerIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(4);

  @BeforeAll
  static void build() {
    var unused = HostServerRun.hostServer();
  }

  /**
   * N ranks: init, the standard job keys, put/commit/fence(collect)/get of every peer's data,
   * publish/lookup/unpublish, an event from rank 0 to all, nested init/finalize, a blocking call
   * from a callback (refused), finalize.
   */
  @ParameterizedTest(name = "{0} Java ranks")
  @ValueSource(ints = {1, 2, 8})
  void fullClientPathUnderCServer(int n) throws Exception {
    HostServerRun run =
        HostServerRun.run(
            n,
            List.of(),
            HostServerRun.javaClient(
                "init", "jobkeys", "put", "commit", "fence-collect", "peers", "peers-again",
                "publish", "lookup",
                "unpublish", "events", "nested", "blocking-from-callback", "finalize"),
            TIMEOUT);
    run.assertSuccess();
    String lpeers = IntStream.range(0, n).mapToObj(Integer::toString).collect(Collectors.joining(","));
    String host = null;
    for (int r = 0; r < n; r++) {
      Map<String, String> init = run.values(r, "init");
      assertEquals("cjob", init.get("nspace"));
      assertEquals(Integer.toString(r), init.get("rank"));
      assertEquals(Integer.toString(n), init.get("size"));
      Map<String, String> keys = run.values(r, "jobkeys");
      assertEquals(Integer.toString(n), keys.get("job.size"), run::describe);
      assertEquals(Integer.toString(n), keys.get("univ.size"), run::describe);
      assertEquals(Integer.toString(n), keys.get("local.size"), run::describe);
      assertEquals(lpeers, keys.get("lpeers"), run::describe);
      assertEquals("cjob", keys.get("jobid"), run::describe);
      assertEquals(Integer.toString(r), keys.get("lrank"), run::describe);
      assertEquals(Integer.toString(r), keys.get("nrank"), run::describe);
      assertEquals("0", keys.get("appnum"), run::describe);
      assertEquals("0", keys.get("nodeid"), run::describe);
      assertEquals(Integer.toString(r), keys.get("rank"), run::describe);
      if (host == null) {
        host = keys.get("hname");
      }
      assertEquals(host, keys.get("hname"), "every rank on the same node");
      for (String step : List.of("put", "commit", "fence-collect", "unpublish", "finalize")) {
        var unused = run.ok(r, step);
      }
      assertEquals(Integer.toString(n), run.values(r, "peers").get("peers"));
      // Asked again, each other rank's key is answered on the calling thread (hash store).
      assertEquals(Integer.toString(n - 1), run.values(r, "peers-again").get("answered"));
      assertEquals("jvalue-cjob", run.values(r, "lookup").get("value"));
      assertEquals("cjob:0", run.values(r, "lookup").get("publisher"));
      assertEquals("cjob:0", run.values(r, "events").get("source"));
      assertEquals("1", run.values(r, "nested").get("refcount"));
      assertTrue(run.ok(r, "blocking-from-callback").startsWith("refused"));
    }
  }

  /**
   * A job of two Java and two C ranks (pmix_client_check.c) exchanging the same modex keys: each
   * side reads the other's values with their exact types (string, bool, uint32, double, byte
   * object, int64).
   */
  @Test
  void mixedJavaAndCRanksExchangeModexData(@TempDir Path dir) throws Exception {
    Path c = HostServerRun.cClient();
    List<String> java =
        HostServerRun.javaClient("init", "cput", "commit", "fence-collect", "cpeers", "finalize");
    Path script = dir.resolve("rank.sh");
    String quotedJava = java.stream().map(CHostServerIT::quote).collect(Collectors.joining(" "));
    Files.writeString(
        script,
        "#!/bin/sh\n"
            + "if [ $((PMIX_RANK % 2)) = 0 ]; then exec "
            + quotedJava
            + "; else exec "
            + quote(c.toString())
            + " --init --put --commit --fence-collect --get-peers --finalize; fi\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    HostServerRun run = HostServerRun.run(4, List.of(), List.of(script.toString()), TIMEOUT);
    run.assertSuccess();
    for (int r : new int[] {0, 2}) {
      assertEquals("20", run.values(r, "cpeers").get("gets"), run::describe);
      var unused = run.ok(r, "finalize");
    }
    long cOk =
        run.lines.stream()
            .filter(l -> l.startsWith("STEP get-peers OK") && l.contains("gets=20"))
            .count();
    assertEquals(2, cOk, run::describe);
    assertTrue(run.lines.stream().noneMatch(l -> l.contains(" FAIL ")), run::describe);
  }

  /**
   * 200 init/finalize cycles in one JVM per rank (2 ranks), each with put/commit/fence/get: every
   * cycle ends with no library thread alive and an empty holder, and the JVM's live thread count
   * does not grow.
   */
  @Test
  void twoHundredCyclesLeaveNothingBehind() throws Exception {
    HostServerRun run =
        HostServerRun.run(
            2,
            List.of(),
            HostServerRun.javaClient("init", "finalize", "barrier", "cycles", "200", "threads"),
            TIMEOUT);
    run.assertSuccess();
    for (int r = 0; r < 2; r++) {
      Map<String, String> c = run.values(r, "cycles");
      assertEquals("200", c.get("cycles"));
      int baseline = Integer.parseInt(c.get("baseline.threads"));
      assertTrue(Integer.parseInt(c.get("max.threads")) <= baseline, run::describe);
      assertTrue(Integer.parseInt(c.get("end.threads")) <= baseline, run::describe);
      assertEquals("0", run.values(r, "threads").get("library"), run::describe);
    }
  }

  /** An explicit proc list in a fence, and the get directives optional, immediate, timeout. */
  @Test
  void explicitFenceAndGetDirectives() throws Exception {
    HostServerRun run =
        HostServerRun.run(
            2,
            List.of(),
            HostServerRun.javaClient(
                "init", "put", "commit", "fence-procs", "get-options", "fence", "finalize"),
            TIMEOUT);
    run.assertSuccess();
    for (int r = 0; r < 2; r++) {
      assertEquals("2", run.values(r, "fence-procs").get("procs"));
      Map<String, String> g = run.values(r, "get-options");
      // Optional: answered locally; immediate: the server says NOT_FOUND at once; timeout: the
      // server waits for a commit that never comes, one second.
      assertEquals("PMIX_ERR_NOT_FOUND", g.get("pmix.optional"), run::describe);
      assertEquals("PMIX_ERR_NOT_FOUND", g.get("pmix.immediate"), run::describe);
      assertEquals("PMIX_ERR_TIMEOUT", g.get("pmix.timeout"), run::describe);
      long waited = Long.parseLong(g.get("ms.pmix.timeout"));
      assertTrue(waited >= 900 && waited < 10_000, run::describe);
    }
  }

  /**
   * The same path with fully described buffers, which the C server honours per peer: the client
   * announces them when its environment asks for them (the host's setup_fork always says
   * NON_DESC, so a wrapper overrides it).
   */
  @Test
  void fullyDescribedBuffers() throws Exception {
    String java =
        HostServerRun.javaClient(
                "init", "jobkeys", "put", "commit", "fence-collect", "peers", "peers-again",
                "publish", "lookup",
                "events", "finalize")
            .stream()
            .map(CHostServerIT::quote)
            .collect(Collectors.joining(" "));
    HostServerRun run =
        HostServerRun.run(
            2,
            List.of(),
            List.of(
                "/bin/sh",
                "-c",
                "PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_FULLY_DESC; export PMIX_BFROP_BUFFER_TYPE; exec "
                    + java),
            TIMEOUT);
    run.assertSuccess();
    for (int r = 0; r < 2; r++) {
      assertEquals("2", run.values(r, "jobkeys").get("job.size"));
      assertEquals("2", run.values(r, "peers").get("peers"));
      assertEquals("jvalue-cjob", run.values(r, "lookup").get("value"));
      assertEquals("cjob:0", run.values(r, "events").get("source"));
    }
  }

  /** Rank 0 aborts the job: the host is told status and message and ends every rank. */
  @Test
  void abortReachesTheHost() throws Exception {
    HostServerRun run =
        HostServerRun.run(2, List.of(), HostServerRun.javaClient("init", "abort"), TIMEOUT);
    assertEquals(42, run.exitCode, run::describe);
    assertTrue(
        run.lines.stream()
            .anyMatch(l -> l.startsWith("HOST ABORT proc=cjob:0 status=42") && l.endsWith("msg=java abort")),
        run::describe);
    assertTrue(run.lines.stream().noneMatch(l -> l.contains(" FAIL ")), run::describe);
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
