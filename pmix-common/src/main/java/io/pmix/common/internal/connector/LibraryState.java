package io.pmix.common.internal.connector;

import io.pmix.common.Info;
import java.util.List;
import java.util.Map;

/**
 * What one init/finalize cycle of a library role owns: every thread, connection, collection,
 * cached choice and flag the cycle creates lives in one object implementing this, built by the
 * first init and shut down by the last finalize ({@link LibraryHolder}). Nothing of a cycle is
 * kept in a static field, so nothing can leak into the next cycle (docs/lifecycle.md
 * §6.2.8: every latch reset, every freed global nulled, every per-cycle flag reset).
 */
public interface LibraryState {
  /**
   * The last finalize: tears everything down and returns only after the cycle's threads have
   * ended. Never throws for a failed step; it logs and continues, so nothing stays running.
   *
   * @param directives the finalize directives of the caller
   */
  void shutdown(List<Info> directives);

  /** The threads this cycle started. */
  List<Thread> threads();

  /**
   * Every piece of bookkeeping this cycle constructs, with its size: collections by their number
   * of entries, resources and remembered choices as 1 when held and 0 when released. After {@link
   * #shutdown} every value must be 0, whether or not the cycle used it; the shared teardown test
   * contract asserts exactly that.
   */
  Map<String, Long> bookkeeping();

  /**
   * The objects this cycle owns (its state object aside), by name, for tests that hold them weakly
   * and check that a finished cycle becomes unreachable. Default: none listed.
   */
  default Map<String, Object> resources() {
    return Map.of();
  }
}
