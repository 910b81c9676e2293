package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What a killed rank started is found in one walk of the process table, grandchildren too. */
@Timeout(60)
class LaunchDescendantsTest {

  @Test
  void findsChildrenAndGrandchildrenOfEveryRoot() throws Exception {
    // Each root starts a child that starts a grandchild, then prints both pids and waits.
    String script = "sh -c 'sleep 60 & echo $!; wait' & echo $!; wait";
    Process a = new ProcessBuilder("sh", "-c", script).start();
    Process b = new ProcessBuilder("sh", "-c", script).start();
    try {
      // Every pid printed: the processes exist by then ($! is a started process).
      Set<Long> expected = Set.of(pid(a), pid(a), pid(b), pid(b));
      Set<Long> found =
          Launch.descendantsOf(List.of(a, b)).stream()
              .map(ProcessHandle::pid)
              .collect(Collectors.toSet());
      // The two inner shells and their sleeps: two levels under each root, nothing else.
      assertEquals(expected, found);
    } finally {
      for (Process p : List.of(a, b)) {
        Launch.descendantsOf(List.of(p)).forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
      }
    }
  }

  /** The next pid {@code p} printed (one per line; unbuffered: a line at a time). */
  private static long pid(Process p) throws Exception {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = p.getInputStream().read()) != '\n') {
      if (c < 0) {
        throw new AssertionError("the script ended early");
      }
      line.append((char) c);
    }
    return Long.parseLong(line.toString().trim());
  }
}
