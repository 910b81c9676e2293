package io.pmix.common;

import java.util.List;

/** Immutable copies of lists for the value types, without Guava (see docs/architecture.md). */
final class ImmutableLists {
  private ImmutableLists() {}

  /**
   * An immutable copy of {@code list} (nulls refused); the shared empty list when it is empty, so
   * that the many empty arrays a decoder can meet allocate nothing ({@link List#copyOf} copies an
   * empty list's array first).
   */
  static <T> List<T> copyOf(List<? extends T> list) {
    return list.isEmpty() ? List.of() : List.copyOf(list);
  }
}
