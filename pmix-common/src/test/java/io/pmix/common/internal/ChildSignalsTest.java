package io.pmix.common.internal;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process started between {@link ChildSignals#unblockAll} and {@link ChildSignals#restore}
 * begins with no signal blocked, one started outside inherits the Java thread's blocked SIGQUIT,
 * and the thread gets its own mask back.
 */
@Timeout(60)
class ChildSignalsTest {
  private static final long SIGQUIT = 1L << (3 - 1);

  @Test
  void aProcessStartedInBetweenHasNoSignalBlockedAndTheThreadGetsItsMaskBack() throws Exception {
    assertTrue(PmixNativeLibrary.load(), PmixNativeLibrary::failure);
    long threadBefore = blocked(Files.readString(Path.of("/proc/thread-self/status"), US_ASCII));
    assertNotEquals(0, threadBefore & SIGQUIT, "HotSpot blocks SIGQUIT in a Java thread");

    assertEquals(threadBefore & SIGQUIT, childBlocked() & SIGQUIT, "started as the JDK does");

    long had = ChildSignals.unblockAll();
    long child;
    try {
      assertEquals(0, blocked(Files.readString(Path.of("/proc/thread-self/status"), US_ASCII)));
      child = childBlocked();
    } finally {
      ChildSignals.restore(had);
    }
    assertEquals(threadBefore, had);
    assertEquals(0, child, "a child started in between blocks nothing");
    assertEquals(
        threadBefore, blocked(Files.readString(Path.of("/proc/thread-self/status"), US_ASCII)));
  }

  /** The blocked signals a freshly started {@code cat} reports for itself. */
  private static long childBlocked() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("cat", "/proc/self/status").redirectErrorStream(true).start();
    String status = new String(p.getInputStream().readAllBytes(), US_ASCII);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return blocked(status);
  }

  private static long blocked(String status) {
    for (String line : status.split("\n", -1)) {
      if (line.startsWith("SigBlk:")) {
        return Long.parseUnsignedLong(line.substring("SigBlk:".length()).strip(), 16);
      }
    }
    throw new AssertionError("no SigBlk line in " + status);
  }
}
