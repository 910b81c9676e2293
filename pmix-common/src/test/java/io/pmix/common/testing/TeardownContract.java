package io.pmix.common.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.internal.connector.LibraryState;
import io.pmix.common.internal.connector.Role;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The shared teardown contract of the connector roles (docs/lifecycle.md §6.2.8
 * and 6.2.9): "after the last finalize nothing remains". The client and the tool each extend it
 * with hooks for one init, one finalize and some work in a cycle, and inherit the same tests:
 *
 * <ul>
 *   <li>after the last finalize no thread of the role is alive (by name prefix), the role's holder
 *       (its one place of process-wide state) is pristine: no state, a zero count, the init-once
 *       latch reset; and every piece of bookkeeping the cycle constructed, used or not, reports 0;
 *   <li>nested init/init/finalize leaves the library running (same state, same threads, latch
 *       set) and only the matching last finalize tears it down;
 *   <li>init works again after the last finalize, each time with a fresh state and fresh threads;
 *   <li>a finalize without init is a caller mistake that changes nothing;
 *   <li>every field of the cycle's state, its session and the session's parts is accounted for
 *       in the bookkeeping ({@link StateAccounting});
 *   <li>the state of a finished cycle and every resource it owned become unreachable.
 * </ul>
 *
 * <p>The static helpers ({@link #assertNothingRemains}, {@link #assertReleased}, {@link
 * #libraryThreads}) are for integration tests that drive the role against real servers.
 *
 * @param <S> the role's per-cycle state
 */
public abstract class TeardownContract<S extends LibraryState> {
  /** The role's holder, where all of its process-wide state is listed. */
  protected abstract LibraryHolder<S> holder();

  /** One init of the role: the first builds a state, later ones only count. */
  protected abstract void init();

  /** One finalize of the role. */
  protected abstract void finalizeOnce();

  /**
   * Work done inside a cycle, touching as much of the state as the setup allows (events, gets,
   * queries, ...), so that the teardown has something to tear down. Default: nothing.
   */
  protected void exercise() {}

  /** Role-specific checks after the last finalize (the facade says "not initialized", ...). */
  protected void assertRoleTornDown() {}

  /** How many init/finalize cycles {@link #reInitStartsFromACleanSlate} runs. */
  protected int cycles() {
    return 10;
  }

  /** How deep {@link #deeplyNestedInitsCountExactly} nests. */
  protected int nesting() {
    return 20;
  }

  @AfterEach
  final void nothingRemainsAfterEachTest() {
    while (holder().refCount() > 0) {
      finalizeOnce();
    }
    assertNothingRemains(holder());
    assertRoleTornDown();
  }

  @Test
  void lastFinalizeLeavesNothing() {
    init();
    S s = holder().require();
    List<Thread> threads = s.threads();
    assertFalse(threads.isEmpty(), "a cycle runs at least one library thread");
    assertTrue(holder().initLatch());
    exercise();
    finalizeOnce();
    assertNothingRemains(holder());
    assertReleased(s);
    assertRoleTornDown();
  }

  @Test
  void nestedInitKeepsTheLibraryRunningUntilTheLastFinalize() {
    init();
    S s = holder().require();
    List<Thread> threads = libraryThreads(holder().role());
    init();
    assertSame(s, holder().require(), "a nested init builds nothing");
    assertEquals(2, holder().refCount());
    exercise();
    finalizeOnce();
    assertSame(s, holder().require(), "a nested finalize tears nothing down");
    assertEquals(1, holder().refCount());
    assertTrue(holder().initLatch(), "a nested finalize leaves the init-once latch set");
    // Stops nothing (the callback and reader threads start with their first task, so the work
    // may have started one since).
    assertTrue(
        libraryThreads(holder().role()).containsAll(threads),
        () -> "a nested finalize stopped one of " + threads);
    long alive = s.bookkeeping().getOrDefault("session.threadsAlive", 1L);
    assertTrue(alive > 0, "threads stopped by a nested finalize");
    exercise();
    finalizeOnce();
    assertNothingRemains(holder());
    assertReleased(s);
  }

  @Test
  void deeplyNestedInitsCountExactly() {
    for (int i = 0; i < nesting(); i++) {
      init();
    }
    S s = holder().require();
    assertEquals(nesting(), holder().refCount());
    for (int i = nesting() - 1; i > 0; i--) {
      finalizeOnce();
      assertEquals(i, holder().refCount());
      assertSame(s, holder().peek());
    }
    finalizeOnce();
    assertNothingRemains(holder());
    assertReleased(s);
  }

  @Test
  void reInitStartsFromACleanSlate() {
    S previous = null;
    Set<Thread> previousThreads = new HashSet<>();
    for (int i = 0; i < cycles(); i++) {
      init();
      S s = holder().require();
      if (previous != null) {
        assertNotSame(previous, s, "cycle " + i + " reuses the previous cycle's state");
      }
      for (Thread t : s.threads()) {
        assertFalse(previousThreads.contains(t), "cycle " + i + " reuses a thread");
      }
      exercise();
      finalizeOnce();
      assertNothingRemains(holder());
      assertReleased(s);
      previous = s;
      previousThreads = new HashSet<>(s.threads());
    }
  }

  @Test
  void finalizeWithoutInitIsACallerMistake() {
    assertThrows(IllegalStateException.class, this::finalizeOnce);
    assertNothingRemains(holder());
    init();
    finalizeOnce();
    assertThrows(IllegalStateException.class, this::finalizeOnce);
    assertNothingRemains(holder());
  }

  @Test
  void everyFieldOfACycleIsAccountedFor() {
    init();
    exercise();
    StateAccounting.assertAccounted(holder().require());
    finalizeOnce();
  }

  /**
   * The state of a finished cycle and every object it owns ({@link LibraryState#resources}: event
   * loop, executor, threads, channel, store) become unreachable: nothing static keeps them.
   */
  @Test
  void finishedCyclesBecomeUnreachable() {
    ProcessResources.Reachability refs = new ProcessResources.Reachability();
    for (int i = 0; i < 3; i++) {
      trackOneCycle(refs, i);
    }
    refs.assertAllCleared();
  }

  /** A method of its own so that no local variable keeps the cycle reachable afterwards. */
  private void trackOneCycle(ProcessResources.Reachability refs, int i) {
    init();
    S s = holder().require();
    Map<String, Object> resources = s.resources();
    assertFalse(resources.isEmpty(), "the state lists no resources");
    assertTrue(resources.keySet().stream().anyMatch(k -> k.startsWith("thread ")), resources::toString);
    refs.track("cycle " + i + " state", s);
    resources.forEach((k, v) -> refs.track("cycle " + i + " " + k, v));
    exercise();
    finalizeOnce();
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers for integration tests

  /** The live threads whose names start with {@code role}'s prefix. */
  public static List<Thread> libraryThreads(Role role) {
    List<Thread> out = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && t.getName().startsWith(role.threadPrefix())) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * Asserts that nothing of any cycle of {@code holder}'s role remains: no live thread with the
   * role's prefix, and every process-wide field at its pristine value (count 0, latch reset, no
   * state).
   */
  public static void assertNothingRemains(LibraryHolder<?> holder) {
    assertEquals(
        List.of(),
        libraryThreads(holder.role()),
        "library threads alive after the last finalize");
    Map<String, Object> state = holder.processWideState();
    for (Map.Entry<String, Object> e : state.entrySet()) {
      Object v = e.getValue();
      if (v instanceof Number n) {
        assertEquals(0L, n.longValue(), () -> "process-wide " + e.getKey() + " not reset");
      } else if (v instanceof Boolean b) {
        assertFalse(b, () -> "process-wide " + e.getKey() + " not reset");
      } else {
        assertNull(v, () -> "process-wide " + e.getKey() + " still set");
      }
    }
    assertTrue(holder.isPristine(), () -> "holder not pristine: " + state);
  }

  /**
   * Asserts that a finished cycle's state holds nothing: its threads have ended and every piece of
   * bookkeeping it constructed reports 0.
   */
  public static void assertReleased(LibraryState s) {
    for (Thread t : s.threads()) {
      assertFalse(t.isAlive(), () -> "thread " + t.getName() + " outlived its cycle");
    }
    Map<String, Long> b = s.bookkeeping();
    if (b.isEmpty()) {
      fail("the state lists no bookkeeping at all");
    }
    for (Map.Entry<String, Long> e : b.entrySet()) {
      assertEquals(0L, e.getValue(), () -> e.getKey() + " not released: " + b);
    }
  }
}
