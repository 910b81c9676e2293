package io.pmix.common.internal.connector;

import java.util.Map;

/**
 * One part of a {@link ConnectorSession}: a piece of one cycle's state with its own rule (the
 * threads, the connection, the replies awaited, the gets, the events, the output sinks, the job
 * requests). Each part says what it holds and releases it; the session's bookkeeping, resources
 * and teardown are nothing but the parts' put together, so a part that holds something reports
 * it or a test fails ({@code SessionPartsTest} checks every field of the session and of each
 * part: a part, immutable configuration, or a field marked {@link Bookkept} whose entries the
 * part reports).
 *
 * <p>Threading: {@link #bookkeeping} and {@link #resources} run on the progress thread while it
 * runs and on the caller's once it has ended; {@link #release} runs once the progress thread has
 * ended.
 */
public interface SessionPart {
  /**
   * What this part holds, by name: collections by their number of entries, resources as 1 when
   * held and 0 when released. All 0 after {@link #release}, whether or not the cycle used them.
   */
  Map<String, Long> bookkeeping();

  /**
   * The objects this part owns, by name, for tests that hold them weakly and check that a
   * finished cycle becomes unreachable. Default: none.
   */
  default Map<String, Object> resources() {
    return Map.of();
  }

  /** Drops everything this part holds; the progress thread has ended. */
  void release();
}
