package io.pmix.client.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The only process-wide state of the client library: a reference count and the current {@link
 * ClientState}. The first init builds the state; nested inits only count; the last finalize shuts
 * the state down (waiting for its threads) and drops it, leaving the holder exactly as it was
 * before the first init, so the next init starts from a clean slate (init-finalize-lifecycle.txt
 * section 6.2.8). There is no other static mutable field in the client: every latch, flag and
 * counter of a cycle lives in its {@code ClientState}.
 *
 * <p>Thread-safe. Init and finalize serialise on one lock, which is never held while application
 * code runs (callbacks run on the client's callback thread, which cannot init or finalize: those
 * calls block, and blocking there is refused).
 */
public final class ClientHolder {
  private static final Object LOCK = new Object();

  /** Written under LOCK; read without it, so that no reader can wait for a teardown. */
  private static volatile int refCount;

  /** Written under LOCK; read without it by every operation. */
  private static volatile @Nullable ClientState current;

  private ClientHolder() {}

  /**
   * Counts an init; the first one connects (from {@code environment}).
   *
   * @return the current client state
   * @throws io.pmix.common.PmixException if the first init fails; the count is then unchanged
   * @throws IllegalStateException if called on a library thread
   */
  public static ClientState init(Map<String, String> environment, List<Info> directives) {
    requireNonNull(environment, "environment");
    requireNonNull(directives, "directives");
    ClientThreads.checkMayBlock("init");
    synchronized (LOCK) {
      ClientState s = current;
      if (s == null) {
        s = ClientState.start(environment, directives);
        current = s;
      }
      // Only this thread writes, under LOCK: the non-atomic increment of a volatile is safe here.
      refCount = refCount + 1;
      return s;
    }
  }

  /**
   * Counts a finalize; the last one tears the state down and returns only after its threads have
   * ended.
   *
   * @return whether this was the last finalize
   * @throws IllegalStateException if not initialized, or called on a library thread
   */
  public static boolean finalizeClient(List<Info> directives) {
    requireNonNull(directives, "directives");
    ClientThreads.checkMayBlock("finalize");
    synchronized (LOCK) {
      ClientState s = current;
      if (s == null || refCount == 0) {
        throw new IllegalStateException("PMIx is not initialized");
      }
      refCount = refCount - 1;
      if (refCount > 0) {
        return false;
      }
      // Dropped before the teardown so that no new operation can start on a dying state.
      current = null;
      s.shutdown(directives);
      return true;
    }
  }

  /**
   * The current state.
   *
   * @throws IllegalStateException if PMIx is not initialized
   */
  public static ClientState require() {
    ClientState s = current;
    if (s == null) {
      throw new IllegalStateException("PMIx is not initialized");
    }
    return s;
  }

  /** The current state, if initialized. */
  public static @Nullable ClientState peek() {
    return current;
  }

  /** How many inits are not yet matched by a finalize. */
  public static int refCount() {
    return refCount;
  }

  /**
   * Whether nothing remains of any cycle: no state, a zero count (for teardown tests). Takes no
   * lock: a callback running during a teardown may ask.
   */
  public static boolean isEmpty() {
    return current == null && refCount == 0;
  }
}
