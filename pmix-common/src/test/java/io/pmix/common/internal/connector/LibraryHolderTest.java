package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The reference count and the init-once latch of a role's holder. */
class LibraryHolderTest {
  private static final Role ROLE = new Role("holdertest", "HolderTest");

  /** A state that counts its shutdowns and can be told to fail in one. */
  private static final class FakeState implements LibraryState {
    int shutdowns;
    boolean failShutdown;

    @Override
    public void shutdown(List<Info> directives) {
      shutdowns++;
      if (failShutdown) {
        throw new IllegalStateException("teardown step failed");
      }
    }

    @Override
    public List<Thread> threads() {
      return List.of();
    }

    @Override
    public Map<String, Long> bookkeeping() {
      return Map.of("fake", 0L);
    }
  }

  @Test
  void countsAndTearsDownOnTheLastFinalize() {
    LibraryHolder<FakeState> h = new LibraryHolder<>(ROLE);
    assertTrue(h.isPristine());
    FakeState a = h.init(FakeState::new);
    assertSame(
        a,
        h.init(
            () -> {
              throw new AssertionError("a nested init builds nothing");
            }));
    assertTrue(h.initLatch());
    assertFalse(h.finalizeOne(List.of()));
    assertEquals(0, a.shutdowns);
    assertTrue(h.finalizeOne(List.of()));
    assertEquals(1, a.shutdowns);
    assertTrue(h.isPristine());
    assertEquals(0, h.processWideState().get("refCount"));
    assertEquals(false, h.processWideState().get("initLatch"));
    assertEquals(null, h.processWideState().get("state"));
    assertNotSame(a, h.init(FakeState::new));
    assertTrue(h.finalizeOne(List.of()));
    assertThrows(IllegalStateException.class, () -> h.finalizeOne(List.of()));
  }

  @Test
  void aFailedTeardownStillResetsTheLatchSoTheNextInitWorks() {
    LibraryHolder<FakeState> h = new LibraryHolder<>(ROLE);
    FakeState a = h.init(FakeState::new);
    a.failShutdown = true;
    assertThrows(IllegalStateException.class, () -> h.finalizeOne(List.of()));
    assertTrue(h.isPristine(), "latch or state left behind: the next init would fail");
    var unused = h.init(FakeState::new);
    assertTrue(h.finalizeOne(List.of()));
  }

  @Test
  void aFailedFirstInitLeavesNothing() {
    LibraryHolder<FakeState> h = new LibraryHolder<>(ROLE);
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> h.init(() -> {
              throw new PmixException(Status.ERR_UNREACH, "no server");
            }));
    assertEquals(Status.ERR_UNREACH, e.status());
    assertTrue(h.isPristine());
  }
}
