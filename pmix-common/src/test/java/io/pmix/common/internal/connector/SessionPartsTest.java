package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.testing.StateAccounting;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A session is its parts and nothing else: every field of {@link ConnectorSession} and of each
 * part is a part, immutable configuration, or state marked {@link Bookkept} whose entries its part
 * reports; the session's bookkeeping and resources are exactly the parts' put together; and after
 * the teardown every entry is 0. The check itself is shown to catch what it is for.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionPartsTest {
  private static final Role ROLE = new Role("parts-test", "PartsTest");

  private ConnectorSession session;

  @BeforeEach
  void open() {
    session = new ConnectorSession(ROLE, WireFormat.DEFAULT, "testhost");
    session.openStandalone(Proc.of("parts", 0), "no server in this test", s -> {});
  }

  @AfterEach
  void close() {
    session.shutdown();
  }

  @Test
  void everyFieldIsAPartImmutableConfigurationOrBookkept() {
    StateAccounting.assertAccounted(session);
  }

  @Test
  void theBookkeepingAndResourcesAreThePartsPutTogether() {
    Set<String> keys = new LinkedHashSet<>();
    Set<String> resources = new LinkedHashSet<>();
    List<SessionPart> parts = session.parts();
    assertEquals(parts.size(), Set.copyOf(parts).size(), "a part listed twice");
    for (SessionPart p : parts) {
      for (String k : p.bookkeeping().keySet()) {
        assertTrue(keys.add(k), "two parts report " + k);
      }
      resources.addAll(p.resources().keySet());
    }
    assertEquals(keys, session.bookkeeping().keySet());
    assertEquals(resources, session.resources().keySet());
    // Every part the session holds is in the assembly (the reflection check catches one that is
    // not through its missing entries; this says so directly).
    List<Object> held = new ArrayList<>();
    for (var f : ConnectorSession.class.getDeclaredFields()) {
      if (SessionPart.class.isAssignableFrom(f.getType())) {
        f.setAccessible(true);
        try {
          held.add(f.get(session));
        } catch (IllegalAccessException e) {
          throw new AssertionError(e);
        }
      }
    }
    for (Object h : held) {
      assertTrue(
          parts.stream().anyMatch(p -> p == h),
          "the session holds a " + h.getClass().getSimpleName() + " that parts() leaves out");
    }
    assertEquals(held.size(), parts.size(), "parts() lists a part the session does not hold");
  }

  @Test
  void afterTheTeardownEveryEntryIsZero() {
    var unused = session.registerEventHandler(List.of(), e -> {}, List.of());
    session.shutdown();
    session.bookkeeping().forEach((k, v) -> assertEquals(0L, v, k));
    assertTrue(session.resources().keySet().stream().noneMatch(k -> k.equals("dataStore")));
    for (Thread t : session.threads()) {
      assertFalse(t.isAlive(), t.getName());
    }
    session = new ConnectorSession(ROLE, WireFormat.DEFAULT, "testhost");
  }

  // ---- the check catches what it is for ----

  /** A part with a cache nobody reports. */
  static final class LeakyPart implements SessionPart {
    private final Map<String, Info> cache = new HashMap<>();

    @Override
    public Map<String, Long> bookkeeping() {
      return Map.of("leaky.other", 0L);
    }

    @Override
    public void release() {
      cache.clear();
    }
  }

  /** A part whose marked field names an entry it does not report. */
  static final class WrongEntryPart implements SessionPart {
    @Bookkept("wrong.listed")
    private final List<String> items = new ArrayList<>();

    @Override
    public Map<String, Long> bookkeeping() {
      return Map.of("wrong.reported", (long) items.size());
    }

    @Override
    public void release() {
      items.clear();
    }
  }

  /** A part that keeps swapping a mutable object in without saying so. */
  static final class ReassignedPart implements SessionPart {
    private Object current = new ArrayList<String>();

    @Override
    public Map<String, Long> bookkeeping() {
      return Map.of("reassigned.none", current instanceof String ? 1L : 0L);
    }

    @Override
    public void release() {
      current = null;
    }
  }

  /** A proper part: its state marked and reported, the rest immutable. */
  static final class GoodPart implements SessionPart {
    private final String name = "good";
    private final Duration wait = Duration.ofSeconds(1);
    private int counter;

    @Bookkept("good.items")
    private final Map<String, Long> items = new LinkedHashMap<>();

    @Override
    public Map<String, Long> bookkeeping() {
      return Map.of(
          name + ".items", (long) items.size() + counter, name + ".negativeWait",
          wait.isNegative() ? 1L : 0L);
    }

    @Override
    public void release() {
      items.clear();
      counter = 0;
    }
  }

  /** A part holding a part that it does not assemble into its bookkeeping. */
  static final class Unassembled implements SessionPart {
    private final GoodPart inner = new GoodPart();

    @Override
    public Map<String, Long> bookkeeping() {
      return Map.of("unassembled.own", inner == null ? 1L : 0L);
    }

    @Override
    public void release() {}
  }

  @Test
  void theCheckCatchesStateOutsideTheBookkeeping() {
    StateAccounting.assertAccounted(new GoodPart());
    AssertionError leaky =
        assertThrows(AssertionError.class, () -> StateAccounting.assertAccounted(new LeakyPart()));
    assertTrue(leaky.getMessage().contains("LeakyPart.cache"), leaky.getMessage());
    AssertionError wrong =
        assertThrows(
            AssertionError.class, () -> StateAccounting.assertAccounted(new WrongEntryPart()));
    assertTrue(wrong.getMessage().contains("wrong.listed"), wrong.getMessage());
    AssertionError swapped =
        assertThrows(
            AssertionError.class, () -> StateAccounting.assertAccounted(new ReassignedPart()));
    assertTrue(swapped.getMessage().contains("ReassignedPart.current"), swapped.getMessage());
    AssertionError unassembled =
        assertThrows(
            AssertionError.class, () -> StateAccounting.assertAccounted(new Unassembled()));
    assertTrue(unassembled.getMessage().contains("good.items"), unassembled.getMessage());
  }
}
