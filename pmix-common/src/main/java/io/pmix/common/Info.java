package io.pmix.common;

import static io.pmix.common.internal.Checks.checkArgument;
import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;

/**
 * A key, a value and directive flags ({@code pmix_info_t}). Immutable.
 *
 * <p>Flags travel exactly as given, including {@link #ARRAY_END}, which C sets on the last element
 * of arrays it creates; decoders accept any bits.
 *
 * @param key the attribute string, at most {@value #MAX_KEYLEN} bytes
 * @param flags the directive bits ({@code pmix_info_directives_t}, unsigned 32-bit)
 * @param value the value
 */
public record Info(String key, int flags, Value value) implements Value {
  /** The longest key the C structure holds, in bytes. */
  public static final int MAX_KEYLEN = 511;
  /** The directive must be honoured or the operation fails. */
  public static final int REQUIRED = 0x1;
  /** Marks the last element of an array created by C. */
  public static final int ARRAY_END = 0x2;
  /** A required directive has been processed. */
  public static final int REQUIRED_PROCESSED = 0x4;
  /** The info qualifies another one rather than standing alone. */
  public static final int QUALIFIER = 0x8;

  /** Validates the key. */
  public Info {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    checkArgument(
        key.getBytes(StandardCharsets.UTF_8).length <= MAX_KEYLEN,
        "key longer than %s bytes",
        MAX_KEYLEN);
    checkArgument(key.indexOf('\0') < 0, "key contains NUL");
  }

  /** An info with no directive flags. */
  public static Info of(String key, Value value) {
    return new Info(key, 0, value);
  }

  /** An info for a reserved key. */
  public static Info of(Key key, Value value) {
    return new Info(key.name(), 0, value);
  }

  /** A string-valued info. */
  public static Info of(String key, String value) {
    return new Info(key, 0, Value.of(value));
  }

  /** A boolean info (C's way of saying "this directive is set"). */
  public static Info of(String key, boolean value) {
    return new Info(key, 0, Value.of(value));
  }

  /** A required directive: the operation fails rather than ignore it. */
  public static Info required(String key, Value value) {
    return new Info(key, REQUIRED, value);
  }

  /** Whether the REQUIRED bit is set. */
  public boolean isRequired() {
    return (flags & REQUIRED) != 0;
  }

  /** This info with other flags. */
  public Info withFlags(int newFlags) {
    return new Info(key, newFlags, value);
  }

  @Override
  public DataType type() {
    return DataType.INFO;
  }

  @Override
  public String toString() {
    return key + "=" + value + (flags != 0 ? " [flags 0x" + Integer.toHexString(flags) + "]" : "");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Info i && i.flags == flags && i.key.equals(key) && i.value.equals(value);
  }

  @Override
  public int hashCode() {
    return (key.hashCode() * 31 + flags) * 31 + value.hashCode();
  }
}
