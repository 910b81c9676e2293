package io.pmix.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientThreads;
import java.util.ArrayList;
import java.util.List;

/**
 * "After the last finalize nothing remains": no thread named by the library is alive, the holder
 * has no state and a zero count, and PMIx says it is not initialized.
 */
public final class TeardownChecks {
  private TeardownChecks() {}

  /** The library's live threads. */
  public static List<Thread> libraryThreads() {
    List<Thread> out = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && t.getName().startsWith(ClientThreads.NAME_PREFIX)) {
        out.add(t);
      }
    }
    return out;
  }

  /** Asserts that nothing of any cycle remains. */
  public static void assertNothingRemains() {
    assertEquals(List.of(), libraryThreads(), "library threads alive after the last finalize");
    assertTrue(ClientHolder.isEmpty(), "holder still holds a state or a count");
    assertEquals(0, ClientHolder.refCount());
    assertFalse(PMIx.initialized());
  }
}
