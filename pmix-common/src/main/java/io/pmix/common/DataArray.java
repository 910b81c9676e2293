package io.pmix.common;

import static io.pmix.common.internal.Checks.checkArgument;
import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * An array of values of one type ({@code pmix_data_array_t}). Immutable.
 *
 * <p>For element type {@link DataType#VALUE} the elements may be values of any type (each carries
 * its own tag on the wire); otherwise every element's {@link Value#type()} is the element type. An
 * array of element type {@link DataType#UNDEF} has no elements but may still declare a non-zero
 * size, which OpenPMIx 4.2.2 writes on the wire.
 *
 * @param elementType the element type
 * @param size the declared element count (the number of items, except for UNDEF arrays)
 * @param items the elements
 */
public record DataArray(DataType elementType, long size, List<Value> items) implements Value {
  /** Validates that every element has the element type. */
  public DataArray {
    requireNonNull(elementType, "elementType");
    items = ImmutableLists.copyOf(items);
    if (elementType == DataType.UNDEF) {
      checkArgument(items.isEmpty(), "an UNDEF array has no elements");
      checkArgument(size >= 0, "negative size");
    } else {
      checkArgument(size == items.size(), "size %s differs from %s items", size, items.size());
      if (elementType != DataType.VALUE) {
        for (Value v : items) {
          checkArgument(
              v.type() == elementType, "element of type %s in %s array", v.type(), elementType);
        }
      }
    }
  }

  /** An array of these elements. */
  public static DataArray of(DataType elementType, List<? extends Value> items) {
    return new DataArray(elementType, items.size(), ImmutableLists.copyOf(items));
  }

  /** An array of infos, the most common kind. */
  public static DataArray ofInfos(List<Info> infos) {
    return of(DataType.INFO, infos);
  }

  /** An UNDEF array declaring {@code size} elements (as 4.2.2 can send). */
  public static DataArray undefined(long size) {
    return new DataArray(DataType.UNDEF, size, List.of());
  }

  @Override
  public DataType type() {
    return DataType.DATA_ARRAY;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DataArray a
        && a.elementType == elementType
        && a.size == size
        && a.items.equals(items);
  }

  @Override
  public int hashCode() {
    return (elementType.hashCode() * 31 + Long.hashCode(size)) * 31 + items.hashCode();
  }
}
