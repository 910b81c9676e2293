package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.internal.connector.LocalProcess;
import java.nio.file.Path;

/**
 * A namespace registered by hand on a {@link TestingPmixServer} for a client that runs in the
 * test's own JVM as its rank 0 (the only local process), under this process's user.
 */
final class HandRegistered {
  private HandRegistered() {}

  /**
   * Registers {@code nspace}, of {@code size} processes of which rank 0 is this node's one, and
   * its rank 0; fails the test if the server refuses either.
   */
  static void rankZero(TestingPmixServer server, String nspace, int size) {
    Status st =
        server
            .server()
            .registerNspace(
                nspace,
                1,
                JobInfo.singleNode(
                    nspace,
                    size,
                    server.host().hostname(),
                    server.server().options().tmpdir(),
                    Path.of("").toAbsolutePath(),
                    server.server().options().serverNspace(),
                    server.server().options().serverRank()));
    assertTrue(st.isSuccess() || st.equals(Status.OPERATION_SUCCEEDED), st::toString);
    int[] ids = LocalProcess.effectiveIds();
    st = server.server().registerClient(Proc.of(nspace, 0), ids[0], ids[1]);
    assertTrue(st.isSuccess() || st.equals(Status.OPERATION_SUCCEEDED), st::toString);
  }
}
