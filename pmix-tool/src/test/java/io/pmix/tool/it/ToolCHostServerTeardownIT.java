package io.pmix.tool.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.TeardownContract;
import io.pmix.tool.PMIxTool;
import io.pmix.tool.internal.ToolHolder;
import io.pmix.tool.internal.ToolState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The shared teardown contract for the tool attached (by pid) to the C host server. */
class ToolCHostServerTeardownIT extends TeardownContract<ToolState> {
  @TempDir static Path base;
  private static CHostServer server;

  @BeforeAll
  static void startServer() throws IOException {
    server = CHostServer.start(base, 2);
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected LibraryHolder<ToolState> holder() {
    return ToolHolder.holder();
  }

  @Override
  protected void init() {
    var unused =
        ToolHolder.init(
            Map.of("PMIX_SYSTEM_TMPDIR", server.tmpdir.toString()),
            List.of(Info.of("pmix.srvr.pidinfo", Value.pid((int) server.pid))));
  }

  @Override
  protected void finalizeOnce() {
    PMIxTool.finalize();
  }

  @Override
  protected void exercise() {
    assertTrue(PMIxTool.queryNamespaces().contains(server.jobNspace));
    assertEquals(2, PMIxTool.get(Proc.wildcard(server.jobNspace), "pmix.job.size").asInt());
    var unused = PMIxTool.registerEventHandler(List.of(), e -> {});
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIxTool.initialized());
  }
}
