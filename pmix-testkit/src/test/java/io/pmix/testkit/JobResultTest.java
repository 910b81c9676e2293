package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Status;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class JobResultTest {
  private static JobResult result(
      List<Integer> codes,
      List<Integer> order,
      JobResult.@Nullable Abort abort,
      boolean timedOut,
      @Nullable String stop) {
    int n = codes.size();
    List<String> out = java.util.Collections.nCopies(n, "line one\nline two\n");
    return new JobResult("job", codes, java.util.Collections.nCopies(n, 1L), out,
        java.util.Collections.nCopies(n, ""), order, abort, timedOut, stop, 143, null, null,
        Duration.ofMillis(5), java.util.Set.of());
  }

  @Test
  void statusIsTheFirstNonZeroExitInExitOrder() {
    assertEquals(0, result(List.of(0, 0), List.of(1, 0), null, false, null).status());
    JobResult r = result(List.of(5, 0, 9), List.of(2, 1, 0), null, false, null);
    assertEquals(9, r.status());
    assertEquals(2, r.firstFailedRank().getAsInt());
    assertFalse(r.succeeded());
  }

  @Test
  void abortTimeoutAndStopWin() {
    JobResult.Abort a = new JobResult.Abort(1, Status.of(7), "why", List.of(0, 1));
    assertEquals(7, result(List.of(143, 7), List.of(1, 0), a, false, null).status());
    JobResult.Abort zero = new JobResult.Abort(1, Status.of(256), null, List.of(0, 1));
    assertEquals(1, result(List.of(143, 0), List.of(1, 0), zero, false, null).status());
    JobResult.Abort negative = new JobResult.Abort(0, Status.of(-1), null, List.of(0));
    assertEquals(255, result(List.of(1), List.of(0), negative, false, null).status());
    assertEquals(124, result(List.of(143), List.of(0), null, true, null).status());
    assertEquals(143, result(List.of(143), List.of(0), null, false, "SIGTERM").status());
  }

  @Test
  void outputAndDescription() {
    JobResult r = result(List.of(0, 137), List.of(1, 0), null, false, null);
    assertEquals(List.of("line one", "line two"), r.stdoutLines(0));
    String d = r.describe();
    assertTrue(d.contains("launcher status 137"), d);
    assertTrue(d.contains("exit 137 (signal 9)"), d);
    assertTrue(d.contains("stdout| line two"), d);
  }
}
