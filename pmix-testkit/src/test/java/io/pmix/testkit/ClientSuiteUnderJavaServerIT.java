package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.it.ClientMain;
import io.pmix.client.it.ClientReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * pmix-client's own suite ({@link ClientMain}, from its test-jar), which its CHostServerIT runs
 * under libpmix's C host server, run here under our Java server: the same steps, the same checks.
 */
class ClientSuiteUnderJavaServerIT {
  private static final Duration WAIT = Duration.ofMinutes(4);

  @RegisterExtension final PmixTestExtension pmix = new PmixTestExtension();

  private static ClientReport report(JobResult r) {
    List<String> lines = new ArrayList<>();
    for (int rank = 0; rank < r.nprocs(); rank++) {
      lines.addAll(r.stdoutLines(rank));
    }
    return new ClientReport(lines, r::describe);
  }

  /** Init, the standard job keys, modex, publish/lookup, events, nested init, finalize. */
  @ParameterizedTest(name = "{0} Java ranks")
  @ValueSource(ints = {1, 2, 8})
  void fullClientPath(int n) {
    JobResult r =
        pmix.server()
            .job(n)
            .javaMain(ClientMain.class)
            .args(
                "init", "jobkeys", "put", "commit", "fence-collect", "peers", "publish", "lookup",
                "unpublish", "events", "nested", "blocking-from-callback", "finalize")
            .run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    ClientReport rep = report(r);
    String ns = r.nspace();
    String lpeers =
        IntStream.range(0, n).mapToObj(Integer::toString).collect(Collectors.joining(","));
    for (int rank = 0; rank < n; rank++) {
      Map<String, String> init = rep.values(rank, "init");
      assertEquals(ns, init.get("nspace"));
      assertEquals(Integer.toString(n), init.get("size"));
      Map<String, String> keys = rep.values(rank, "jobkeys");
      assertEquals(Integer.toString(n), keys.get("job.size"), r::describe);
      assertEquals(Integer.toString(n), keys.get("local.size"), r::describe);
      assertEquals(lpeers, keys.get("lpeers"), r::describe);
      assertEquals(Integer.toString(rank), keys.get("lrank"), r::describe);
      assertEquals(Integer.toString(rank), keys.get("rank"), r::describe);
      for (String step : List.of("put", "commit", "fence-collect", "unpublish", "finalize")) {
        var unused = rep.ok(rank, step);
      }
      assertEquals(Integer.toString(n), rep.values(rank, "peers").get("peers"));
      assertEquals("jvalue-" + ns, rep.values(rank, "lookup").get("value"));
      assertEquals(ns + ":0", rep.values(rank, "lookup").get("publisher"));
      assertEquals(ns + ":0", rep.values(rank, "events").get("source"));
      assertEquals("1", rep.values(rank, "nested").get("refcount"));
      assertTrue(rep.ok(rank, "blocking-from-callback").startsWith("refused"));
    }
  }

  /**
   * An explicit proc list in a fence, and the get directives optional, immediate, timeout. The
   * fence after the gets keeps a rank from finalizing while its peer still waits for its data:
   * our server answers such a wait NOT_FOUND as soon as the target has finalized.
   */
  @Test
  void explicitFenceAndGetDirectives() {
    JobResult r =
        pmix.server()
            .job(2)
            .javaMain(ClientMain.class)
            .args("init", "put", "commit", "fence-procs", "get-options", "fence", "finalize")
            .run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    ClientReport rep = report(r);
    for (int rank = 0; rank < 2; rank++) {
      assertEquals("2", rep.values(rank, "fence-procs").get("procs"));
      Map<String, String> g = rep.values(rank, "get-options");
      assertEquals("PMIX_ERR_NOT_FOUND", g.get("pmix.optional"), r::describe);
      assertEquals("PMIX_ERR_NOT_FOUND", g.get("pmix.immediate"), r::describe);
      assertEquals("PMIX_ERR_TIMEOUT", g.get("pmix.timeout"), r::describe);
      long waited = Long.parseLong(g.get("ms.pmix.timeout"));
      assertTrue(waited >= 900 && waited < 10_000, r::describe);
    }
  }

  /** Rank 0 aborts: the job ends with its status and message, as under the C server. */
  @Test
  void abortEndsTheJob() {
    JobResult r = pmix.server().job(2).javaMain(ClientMain.class).args("init", "abort").run(WAIT);
    JobResult.Abort a = r.abort().orElseThrow(() -> new AssertionError(r.describe()));
    assertEquals(0, a.rank(), r::describe);
    assertEquals(42, a.status().code(), r::describe);
    assertEquals("java abort", a.message(), r::describe);
    assertTrue(r.stdoutLines(0).stream().noneMatch(l -> l.contains(" FAIL ")), r::describe);
  }
}
