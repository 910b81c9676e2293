package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Proc;
import io.pmix.common.Status;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * A launcher learns of a PMIx_Abort before the caller is answered: the caller exits as soon as it
 * has its answer, and its exit must not overtake the abort (else the job ends as a plain failure
 * and the other nodes are not told).
 */
class HostAbortOrderTest {

  @Test
  void theLauncherHasTheAbortBeforeTheCallerHasItsAnswer() throws Exception {
    List<String> told = new CopyOnWriteArrayList<>();
    try (SingleNodeHost host = new SingleNodeHost("node")) {
      host.addJob(
          "job",
          List.of(2),
          1000,
          1000,
          new SingleNodeHost.JobListener() {
            @Override
            public void aborted(
                Proc caller, Status status, @Nullable String message, List<Proc> targets) {
              told.add("abort " + caller.rank() + " " + status.code() + " " + message);
            }

            @Override
            public void kill(Proc requester, List<Integer> ranks) {}

            @Override
            public void signal(Proc requester, List<Integer> ranks, int signal) {}

            @Override
            public void terminate(Proc requester) {}
          });
      CompletionStage<Void> answer =
          host.abort(Proc.of("job", 1), null, Status.of(7), "bye", List.of());
      assertTrue(answer.toCompletableFuture().isDone());
      assertEquals(List.of("abort 1 7 bye"), told);
    }
  }
}
