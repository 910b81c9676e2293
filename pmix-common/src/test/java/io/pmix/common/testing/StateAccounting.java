package io.pmix.common.testing;

import static org.junit.jupiter.api.Assertions.fail;

import com.google.errorprone.annotations.Immutable;
import io.pmix.common.internal.connector.Bookkept;
import io.pmix.common.internal.connector.ConnectorSession;
import io.pmix.common.internal.connector.LibraryState;
import io.pmix.common.internal.connector.SessionPart;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Checks by reflection that a cycle's state is accounted for: every field of a role's state, of
 * its {@link ConnectorSession} and of each of the session's {@link SessionPart parts} is either
 *
 * <ul>
 *   <li>a part (then its fields are checked in turn, and every entry of its bookkeeping must be in
 *       the state's, which is how a part left out of the session's assembly is caught),
 *   <li>marked {@link Bookkept} with entries its owner's bookkeeping reports (so the teardown
 *       contract sees them return to 0), or
 *   <li>of a type that holds no mutable state: primitives, strings, enums, types Error Prone
 *       checks as {@link Immutable}, records of such types, or immutable configuration listed
 *       here by name with the reason.
 * </ul>
 *
 * Anything else is a collection, resource or other mutable object the bookkeeping does not know
 * about, which the last finalize might leave behind unnoticed: the check fails naming it.
 */
public final class StateAccounting {
  private StateAccounting() {}

  /**
   * Immutable configuration the type rules cannot see, by class name, each with why it holds no
   * state of a cycle.
   */
  private static final Map<String, String> IMMUTABLE_CONFIG =
      Map.of(
          "io.pmix.common.internal.connector.Messages",
          "stateless: a wire format and the process-wide buffer allocator",
          "io.pmix.common.internal.connector.Connection$Listener",
          "wiring: routes what the connection receives into the session's parts",
          "java.time.Duration",
          "a value",
          "java.nio.file.Path",
          "a value");

  /**
   * Asserts that every field of {@code state} (a role's state, or a bare session) is accounted
   * for, recursively through its session and the session's parts.
   */
  public static void assertAccounted(Object state) {
    Map<String, Long> root = bookkeepingOf(state);
    List<String> problems = new ArrayList<>();
    check(state, root, root, problems, new IdentityHashMap<>());
    if (!problems.isEmpty()) {
      fail("state not accounted for in the bookkeeping:\n  " + String.join("\n  ", problems));
    }
  }

  private static Map<String, Long> bookkeepingOf(Object o) {
    if (o instanceof LibraryState s) {
      return s.bookkeeping();
    }
    if (o instanceof ConnectorSession s) {
      return s.bookkeeping();
    }
    if (o instanceof SessionPart p) {
      return p.bookkeeping();
    }
    throw new IllegalArgumentException(o.getClass() + " has no bookkeeping");
  }

  /**
   * Checks {@code o}'s fields against {@code own} (its owner's bookkeeping: the part's own, or the
   * state's for the state and its session) and the parts reached against {@code root}.
   */
  private static void check(
      Object o,
      Map<String, Long> own,
      Map<String, Long> root,
      List<String> problems,
      Map<Object, Boolean> seen) {
    if (seen.put(o, Boolean.TRUE) != null) {
      return;
    }
    for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) {
          continue;
        }
        String name = c.getSimpleName() + "." + f.getName();
        Bookkept b = f.getAnnotation(Bookkept.class);
        if (b != null) {
          for (String key : b.value()) {
            if (!own.containsKey(key)) {
              problems.add(name + " is @Bookkept(\"" + key + "\") but " + c.getSimpleName()
                  + "'s bookkeeping has no such entry: " + own.keySet());
            }
          }
          continue;
        }
        Object v = value(f, o);
        if (SessionPart.class.isAssignableFrom(f.getType()) || v instanceof SessionPart) {
          if (!Modifier.isFinal(f.getModifiers())) {
            problems.add(name + " is a part but not final");
          }
          if (v != null) {
            SessionPart p = (SessionPart) v;
            Map<String, Long> pb = p.bookkeeping();
            for (String key : pb.keySet()) {
              if (!root.containsKey(key)) {
                problems.add(name + " (" + f.getType().getSimpleName() + ") reports \"" + key
                    + "\", which the state's bookkeeping lacks: the part is not assembled");
              }
            }
            check(p, pb, root, problems, seen);
          }
          continue;
        }
        if (ConnectorSession.class.isAssignableFrom(f.getType())) {
          // The session's bookkeeping is part of the state's: its fields answer to the same map.
          if (v != null) {
            check(v, own, root, problems, seen);
          }
          continue;
        }
        if (!Modifier.isFinal(f.getModifiers()) && !isValueType(f.getType())) {
          problems.add(name + " (" + f.getType().getName() + ") is reassigned mutable state"
              + " without @Bookkept");
          continue;
        }
        if (!isValueType(f.getType())) {
          problems.add(name + " (" + f.getType().getName() + ") holds mutable state but is"
              + " neither a SessionPart, nor @Bookkept, nor immutable configuration");
        }
      }
    }
  }

  private static Object value(Field f, Object o) {
    try {
      f.setAccessible(true);
      return f.get(o);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new AssertionError("cannot read " + f, e);
    }
  }

  /** Whether values of {@code t} hold no mutable state. */
  static boolean isValueType(Class<?> t) {
    return isValueType(t, Set.of());
  }

  private static boolean isValueType(Class<?> t, Set<Class<?>> visiting) {
    if (t.isPrimitive() || t.isEnum() || t == String.class || Number.class.isAssignableFrom(t)
        && t.getName().startsWith("java.lang.") || t == Boolean.class || t == Character.class) {
      return true;
    }
    if (t == Optional.class || t == OptionalInt.class || t == OptionalLong.class
        || t == Duration.class) {
      return true;
    }
    if (IMMUTABLE_CONFIG.containsKey(t.getName())) {
      return true;
    }
    if (t.isAnnotationPresent(Immutable.class)) {
      return true;
    }
    if (t.isRecord() && !visiting.contains(t)) {
      Set<Class<?>> deeper = new java.util.HashSet<>(visiting);
      deeper.add(t);
      for (RecordComponent rc : t.getRecordComponents()) {
        if (!isValueType(rc.getType(), deeper)) {
          return false;
        }
      }
      return true;
    }
    return false;
  }
}
