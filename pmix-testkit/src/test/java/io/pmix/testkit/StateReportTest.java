package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pmix.common.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateReportTest {
  private static final String SNAPSHOT =
      "{\"peers\":[{\"index\":0,\"nspace\":\"job\",\"rank\":0,\"role\":\"client\","
          + "\"state\":\"tombstone\"},{\"index\":1,\"nspace\":\"job\",\"rank\":1,"
          + "\"role\":\"client\",\"state\":\"lost\"}],\"namespaces\":[{\"nspace\":\"job\","
          + "\"nlocalprocs\":1,\"nfinalized\":1,\"localAppFiniFired\":false,\"ranks\":["
          + "{\"rank\":0,\"procCount\":0,\"peerIndex\":0},"
          + "{\"rank\":1,\"procCount\":0,\"peerIndex\":1}]}],\"stores\":["
          + "{\"module\":\"ds21\",\"directory\":\"/t/pmix_dstor_ds21_7.1\",\"retired\":false,"
          + "\"namespaces\":[]},"
          + "{\"module\":\"ds21\",\"directory\":\"/t/pmix_dstor_ds21_7\",\"retired\":true,"
          + "\"namespaces\":[\"job\",\"job2\"]}]}";

  @Test
  void writesTheJobAndBothSnapshots(@TempDir Path dir) throws Exception {
    JobResult r =
        new JobResult("job", List.of(0, 7), List.of(10L, 11L), List.of("", ""), List.of("", ""),
            List.of(1, 0), new JobResult.Abort(1, Status.of(7), "bye", List.of(0, 1)), false,
            null, 0, null, null, Duration.ofMillis(1234), java.util.Set.of());
    Path f = dir.resolve("state.json");
    StateReport.write(f, r);
    JsonNode n = new ObjectMapper().readTree(Files.readString(f));
    assertEquals("job", n.path("job").path("nspace").asText());
    assertEquals(7, n.path("job").path("status").asInt());
    assertEquals(1, n.path("job").path("abort").path("rank").asInt());
    assertEquals("bye", n.path("job").path("abort").path("message").asText());
    assertTrue(n.path("beforeDeregister").isNull());
    assertTrue(n.path("afterDeregister").isNull());
    assertTrue(StateReport.table(n).contains("(no snapshot: the server was not running)"));
  }

  @Test
  void tables() throws Exception {
    ObjectMapper m = new ObjectMapper();
    JsonNode report =
        m.readTree("{\"job\":{\"nspace\":\"job\",\"nprocs\":2,\"status\":0,\"exitCodes\":[0,0],"
            + "\"elapsedMillis\":12,\"timedOut\":false,\"stopReason\":null,\"abort\":null},"
            + "\"beforeDeregister\":" + SNAPSHOT + ","
            + "\"afterDeregister\":{\"peers\":[],\"namespaces\":[]}}");
    String t = StateReport.table(report);
    assertTrue(t.startsWith("job job: 2 processes, exit status 0, 12 ms\n"), t);
    assertTrue(
        t.contains(
            """
                index  nspace  rank  role    state
                0      job     0     client  tombstone
                1      job     1     client  lost
            """),
        t);
    assertTrue(
        t.contains(
            """
                nspace  nlocalprocs  nfinalized  localAppFiniFired  ranks
                job     1            1           false              2
            """),
        t);
    assertTrue(t.contains("  ranks of job\n    rank  procCount  peerIndex\n"), t);
    assertTrue(
        t.contains(
            """
              shared-memory stores
                module  retired  namespaces  directory
                ds21    false    -           /t/pmix_dstor_ds21_7.1
                ds21    true     job,job2    /t/pmix_dstor_ds21_7
            """),
        t);
    assertTrue(
        t.endsWith(
            """
            server state after deregistration
              peers: none
              namespaces: none
            """),
        t);
  }
}
