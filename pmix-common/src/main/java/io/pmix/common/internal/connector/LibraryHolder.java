package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The only process-wide state of a library role (the client's {@code PMIx}, the tool's {@code
 * PMIxTool}): a reference count of inits, the init-once latch, and the current {@link
 * LibraryState}. The first init sets the latch and builds the state; nested inits only count; the
 * last finalize drops the state, shuts it down (waiting for its threads) and resets the latch,
 * leaving the holder exactly as before the first init, so the next init starts from a clean
 * slate (docs/lifecycle.md §6.2.8 and §6.2.9). Each role has its own holder and
 * its own counter, and tears down through its own state's code.
 *
 * <p>{@link #processWideState()} lists every field, so a test can check them all.
 *
 * <p>Thread-safe. Init and finalize serialise on one lock, which is never held while application
 * code runs (callbacks run on the role's callback thread, which cannot init or finalize: those
 * calls block, and blocking there is refused).
 *
 * @param <S> the role's per-cycle state
 */
public final class LibraryHolder<S extends LibraryState> {
  private final Role role;
  private final Object lock = new Object();

  /** Written under lock; read without it, so that no reader can wait for a teardown. */
  private volatile int refCount;

  /** Written under lock; read without it by every operation. */
  private volatile @Nullable S current;

  /**
   * The init-once latch: set by the first init, reset by the last finalize (also when the
   * teardown fails). A first init that finds it set refuses with {@code ERR_INIT}, as C does:
   * that can only mean a previous teardown never finished.
   */
  private volatile boolean initialized;

  /** An empty holder for {@code role}. */
  public LibraryHolder(Role role) {
    this.role = requireNonNull(role, "role");
  }

  /** The role this holder belongs to. */
  public Role role() {
    return role;
  }

  /**
   * Counts an init; the first one builds the state with {@code factory}.
   *
   * @return the current state
   * @throws PmixException if the first init fails (the count and the latch are then unchanged),
   *     or {@code ERR_INIT} if the latch is set without a state
   * @throws IllegalStateException if called on one of the role's own threads
   */
  public S init(Supplier<S> factory) {
    requireNonNull(factory, "factory");
    LibraryThreads.checkMayBlock(role, "init");
    synchronized (lock) {
      S s = current;
      if (s == null) {
        if (initialized) {
          throw new PmixException(
              Status.ERR_INIT,
              role.api() + " is marked initialized but has no state: a finalize did not finish");
        }
        initialized = true;
        try {
          s = requireNonNull(factory.get(), "factory returned null");
        } catch (RuntimeException | Error e) {
          initialized = false;
          throw e;
        }
        current = s;
      }
      // Only this thread writes, under the lock: the non-atomic increment of a volatile is safe.
      refCount = refCount + 1;
      return s;
    }
  }

  /**
   * Counts a finalize; the last one tears the state down and returns only after its threads have
   * ended.
   *
   * @return whether this was the last finalize
   * @throws IllegalStateException if not initialized, or called on one of the role's own threads
   */
  public boolean finalizeOne(List<Info> directives) {
    requireNonNull(directives, "directives");
    LibraryThreads.checkMayBlock(role, "finalize");
    synchronized (lock) {
      S s = current;
      if (s == null || refCount == 0) {
        throw new IllegalStateException(role.api() + " is not initialized");
      }
      refCount = refCount - 1;
      if (refCount > 0) {
        return false;
      }
      // Dropped before the teardown so that no new operation can start on a dying state.
      current = null;
      try {
        s.shutdown(directives);
      } finally {
        initialized = false;
      }
      return true;
    }
  }

  /**
   * The current state.
   *
   * @throws IllegalStateException if not initialized
   */
  public S require() {
    S s = current;
    if (s == null) {
      throw new IllegalStateException(role.api() + " is not initialized");
    }
    return s;
  }

  /** The current state, if initialized. */
  public @Nullable S peek() {
    return current;
  }

  /** How many inits are not yet matched by a finalize. */
  public int refCount() {
    return refCount;
  }

  /** Whether the init-once latch is set. */
  public boolean initLatch() {
    return initialized;
  }

  /**
   * Every process-wide field of the role with its value: the count, the latch and the state
   * (null when none). Takes no lock: a callback running during a teardown may ask.
   */
  public Map<String, @Nullable Object> processWideState() {
    Map<String, @Nullable Object> m = new LinkedHashMap<>();
    m.put("refCount", refCount);
    m.put("initLatch", initialized);
    m.put("state", current);
    return m;
  }

  /** Whether nothing remains of any cycle: no state, a zero count, the latch reset. */
  public boolean isPristine() {
    return current == null && refCount == 0 && !initialized;
  }
}
