package io.pmix.common.internal;

import org.jspecify.annotations.Nullable;

/**
 * Argument checks for the library's value types, in place of Guava's {@code Preconditions}: a
 * client's first init then reads no class from Guava's jar, whose opening (and that of the jars
 * before it on an application's class path) cost a fresh JVM ~1 ms (docs/architecture.md, "What
 * the class loader costs"). Messages are built only when a check fails; each {@code %s} of the
 * template takes the next argument.
 */
public final class Checks {
  private Checks() {}

  /**
   * Throws {@link IllegalArgumentException} with {@code message} unless {@code ok}.
   *
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /**
   * Throws {@link IllegalArgumentException} with {@code template} filled with {@code a} unless
   * {@code ok}.
   *
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, @Nullable Object a) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, a));
    }
  }

  /**
   * Throws {@link IllegalArgumentException} with {@code template} filled with {@code a} and {@code
   * b} unless {@code ok}.
   *
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(
      boolean ok, String template, @Nullable Object a, @Nullable Object b) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, a, b));
    }
  }

  /**
   * As {@link #checkArgument(boolean, String, Object, Object)}, without boxing {@code a} when the
   * check passes (a decoder checks every integer it makes).
   *
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, long a, @Nullable Object b) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, a, b));
    }
  }

  /**
   * As {@link #checkArgument(boolean, String, Object, Object)}, for two numbers, boxed only when
   * the check fails.
   *
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, long a, long b) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, a, b));
    }
  }

  /** {@code template} with each {@code %s} replaced by the next argument; extra ones appended. */
  static String format(String template, @Nullable Object... args) {
    StringBuilder sb = new StringBuilder(template.length() + 16 * args.length);
    int from = 0;
    int i = 0;
    while (i < args.length) {
      int at = template.indexOf("%s", from);
      if (at < 0) {
        break;
      }
      sb.append(template, from, at).append(args[i++]);
      from = at + 2;
    }
    sb.append(template, from, template.length());
    if (i < args.length) {
      sb.append(" [");
      for (int j = i; j < args.length; j++) {
        sb.append(j > i ? ", " : "").append(args[j]);
      }
      sb.append(']');
    }
    return sb.toString();
  }
}
