package io.pmix.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.TeardownContract;
import io.pmix.tool.internal.ToolHolder;
import io.pmix.tool.internal.ToolState;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The shared teardown contract for the tool, unconnected ({@code pmix.tool.nocon}). */
class ToolTeardownTest extends TeardownContract<ToolState> {
  @Override
  protected LibraryHolder<ToolState> holder() {
    return ToolHolder.holder();
  }

  @Override
  protected void init() {
    var unused =
        ToolHolder.init(
            Map.of("PMIX_HOSTNAME", "testhost"), List.of(Info.of("pmix.tool.nocon", true)));
  }

  @Override
  protected void finalizeOnce() {
    PMIxTool.finalize();
  }

  @Override
  protected void exercise() {
    assertFalse(PMIxTool.isConnected());
    CompletableFuture<Event> got = new CompletableFuture<>();
    var unused = PMIxTool.registerEventHandler(List.of(), got::complete);
    PMIxTool.notifyEvent(Status.of(-4711), DataRange.PROC_LOCAL);
    try {
      assertEquals(-4711, got.get(10, TimeUnit.SECONDS).status().code());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    PmixException x = assertThrows(PmixException.class, PMIxTool::queryNamespaces);
    assertEquals(Status.ERR_UNREACH, x.status());
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIxTool.initialized());
  }
}
