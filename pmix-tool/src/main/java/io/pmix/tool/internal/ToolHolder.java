package io.pmix.tool.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.internal.connector.Role;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The only process-wide state of the tool library: one {@link LibraryHolder} with the tool's own
 * reference count, its init-once latch and the current {@link ToolState}. Separate from the
 * client's holder: a process may be a client and a tool at once, and each role counts and tears
 * down through its own code (docs/lifecycle.md §6.2.9). The last finalize resets
 * the latch (else the next init would fail with {@code ERR_INIT}) and drops the state, whose
 * teardown releases everything the init constructed, used or not.
 *
 * <p>Thread-safe; see {@link LibraryHolder}.
 */
public final class ToolHolder {
  private static final LibraryHolder<ToolState> HOLDER = new LibraryHolder<>(Role.TOOL);

  private ToolHolder() {}

  /** The holder itself, for the shared teardown contract. */
  public static LibraryHolder<ToolState> holder() {
    return HOLDER;
  }

  /**
   * Counts an init; the first one connects as {@code directives} and {@code environment} say.
   *
   * @return the current tool state
   * @throws io.pmix.common.PmixException if the first init fails; the count is then unchanged
   */
  public static ToolState init(Map<String, String> environment, List<Info> directives) {
    requireNonNull(environment, "environment");
    requireNonNull(directives, "directives");
    Map<String, String> env = Map.copyOf(environment);
    List<Info> ds = List.copyOf(directives);
    // An anonymous class, not a lambda: a lambda's first call costs a fresh JVM ~0.1-0.3 ms
    // (docs/architecture.md, "First requests").
    return HOLDER.init(
        new Supplier<ToolState>() {
          @Override
          public ToolState get() {
            return ToolState.start(env, ds);
          }
        });
  }

  /**
   * Counts a finalize; the last one tears the state down and returns after its threads ended.
   *
   * @return whether this was the last finalize
   */
  public static boolean finalizeTool(List<Info> directives) {
    return HOLDER.finalizeOne(directives);
  }

  /**
   * The current state.
   *
   * @throws IllegalStateException if PMIxTool is not initialized
   */
  public static ToolState require() {
    return HOLDER.require();
  }

  /** The current state, if initialized. */
  public static @Nullable ToolState peek() {
    return HOLDER.peek();
  }
}
