package io.pmix.client.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.internal.connector.Role;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The only process-wide state of the client library: one {@link LibraryHolder} (reference count,
 * init-once latch and the current {@link ClientState}). The first init builds the state; nested
 * inits only count; the last finalize shuts the state down (waiting for its threads), drops it and
 * resets the latch, leaving the holder exactly as it was before the first init, so the next init
 * starts from a clean slate (docs/lifecycle.md §6.2.8). There is no other static
 * mutable field in the client: every latch, flag and counter of a cycle lives in its {@code
 * ClientState}.
 *
 * <p>Thread-safe; see {@link LibraryHolder}.
 */
public final class ClientHolder {
  private static final LibraryHolder<ClientState> HOLDER = new LibraryHolder<>(Role.CLIENT);

  private ClientHolder() {}

  /** The holder itself, for the shared teardown contract. */
  public static LibraryHolder<ClientState> holder() {
    return HOLDER;
  }

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
    // An anonymous class, not a lambda: a lambda's first call costs a fresh JVM ~0.1-0.3 ms
    // (docs/architecture.md, "First requests").
    return HOLDER.init(
        new Supplier<ClientState>() {
          @Override
          public ClientState get() {
            return ClientState.start(environment, directives);
          }
        });
  }

  /**
   * Counts a finalize; the last one tears the state down and returns only after its threads have
   * ended.
   *
   * @return whether this was the last finalize
   * @throws IllegalStateException if not initialized, or called on a library thread
   */
  public static boolean finalizeClient(List<Info> directives) {
    return HOLDER.finalizeOne(directives);
  }

  /**
   * The current state.
   *
   * @throws IllegalStateException if PMIx is not initialized
   */
  public static ClientState require() {
    return HOLDER.require();
  }

  /** The current state, if initialized. */
  public static @Nullable ClientState peek() {
    return HOLDER.peek();
  }

  /** How many inits are not yet matched by a finalize. */
  public static int refCount() {
    return HOLDER.refCount();
  }

  /**
   * Whether nothing remains of any cycle: no state, a zero count, the latch reset (for teardown
   * tests). Takes no lock: a callback running during a teardown may ask.
   */
  public static boolean isEmpty() {
    return HOLDER.isPristine();
  }
}
