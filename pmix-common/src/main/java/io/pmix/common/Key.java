package io.pmix.common;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;

/**
 * A reserved PMIx attribute: its string (e.g. {@code "pmix.job.size"}) and the type the OpenPMIx
 * headers declare for its value ({@link DataType#UNDEF} where the type varies). Immutable.
 *
 * @param name the attribute string that travels on the wire
 * @param type the declared value type
 */
@Immutable
public record Key(String name, DataType type) {
  /** Validates the components. */
  public Key {
    requireNonNull(name, "name");
    requireNonNull(type, "type");
  }

  @Override
  public String toString() {
    return name;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Key k && k.type == type && k.name.equals(name);
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + type.hashCode();
  }
}
