package io.pmix.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.internal.ClientHolder;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.TeardownContract;
import java.util.List;

/**
 * "After the last finalize nothing remains", for the client: the shared contract's checks (no
 * thread named by the library alive, the holder pristine) plus the facade's view.
 */
public final class TeardownChecks {
  private TeardownChecks() {}

  /** The library's live threads. */
  public static List<Thread> libraryThreads() {
    return TeardownContract.libraryThreads(Role.CLIENT);
  }

  /** Asserts that nothing of any cycle remains. */
  public static void assertNothingRemains() {
    TeardownContract.assertNothingRemains(ClientHolder.holder());
    assertTrue(ClientHolder.isEmpty(), "holder still holds a state or a count");
    assertEquals(0, ClientHolder.refCount());
    assertFalse(PMIx.initialized());
  }
}
