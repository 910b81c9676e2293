package io.pmix.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.ScriptedServer;
import io.pmix.common.testing.TeardownContract;
import io.pmix.tool.internal.ToolHolder;
import io.pmix.tool.internal.ToolState;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared teardown contract for the tool attached to a server (the scripted one): each cycle
 * registers events, pulls output and leaves both registered, so the teardown has to drop them.
 */
class ToolFakeServerTeardownTest extends TeardownContract<ToolState> {
  private static ScriptedServer server;

  @BeforeAll
  static void start() {
    server = new ScriptedServer();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Override
  protected LibraryHolder<ToolState> holder() {
    return ToolHolder.holder();
  }

  @Override
  protected void init() {
    var unused =
        ToolHolder.init(
            Map.of("PMIX_HOSTNAME", "testhost"),
            List.of(Info.of("pmix.srvr.uri", server.uri())));
  }

  @Override
  protected void finalizeOnce() {
    PMIxTool.finalize();
  }

  @Override
  protected void exercise() {
    assertTrue(PMIxTool.isConnected());
    assertEquals(List.of(ScriptedServer.JOB, "other"), PMIxTool.queryNamespaces());
    var unused = PMIxTool.registerEventHandler(List.of(), e -> {});
    CompletableFuture<IofOutput> out = new CompletableFuture<>();
    var unused2 =
        PMIxTool.iofPull(
            List.of(Proc.wildcard(ScriptedServer.JOB)), EnumSet.of(IofChannel.STDOUT), out::complete);
    try {
      assertEquals("hello out\n", out.get(10, TimeUnit.SECONDS).text());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    assertEquals(3, PMIxTool.get(Proc.wildcard(ScriptedServer.JOB), "pmix.job.size").asInt());
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIxTool.initialized());
  }
}
