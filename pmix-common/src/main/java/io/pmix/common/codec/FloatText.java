package io.pmix.common.codec;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * FLOAT and DOUBLE travel as the text C's {@code printf("%f")} makes of them. This class makes
 * exactly glibc's text ({@code String.format} rounds differently on many halfway cases) and parses
 * what C's {@code strtod} would accept from a C peer.
 */
public final class FloatText {
  private FloatText() {}

  /** glibc's {@code %f} of a double. */
  public static String format(double d) {
    boolean negative = (Double.doubleToRawLongBits(d) & Long.MIN_VALUE) != 0;
    if (Double.isNaN(d)) {
      return negative ? "-nan" : "nan";
    }
    if (Double.isInfinite(d)) {
      return negative ? "-inf" : "inf";
    }
    String digits = new BigDecimal(Math.abs(d)).setScale(6, RoundingMode.HALF_EVEN).toPlainString();
    return negative ? "-" + digits : digits;
  }

  /** glibc's {@code %f} of a float (promoted to double, as C varargs do). */
  public static String format(float f) {
    if (Float.isNaN(f)) {
      return (Float.floatToRawIntBits(f) & Integer.MIN_VALUE) != 0 ? "-nan" : "nan";
    }
    return format((double) f);
  }

  /** Parses the text of a DOUBLE. */
  public static double parseDouble(String text) {
    switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "nan":
      case "+nan":
        return Double.NaN;
      case "-nan":
        return Double.longBitsToDouble(0xfff8000000000000L);
      case "inf":
      case "+inf":
      case "infinity":
      case "+infinity":
        return Double.POSITIVE_INFINITY;
      case "-inf":
      case "-infinity":
        return Double.NEGATIVE_INFINITY;
      default:
        return Double.parseDouble(checked(text));
    }
  }

  /** Parses the text of a FLOAT, rounding straight from decimal to float as strtof does. */
  public static float parseFloat(String text) {
    switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "nan":
      case "+nan":
        return Float.NaN;
      case "-nan":
        return Float.intBitsToFloat(0xffc00000);
      case "inf":
      case "+inf":
      case "infinity":
      case "+infinity":
        return Float.POSITIVE_INFINITY;
      case "-inf":
      case "-infinity":
        return Float.NEGATIVE_INFINITY;
      default:
        return Float.parseFloat(checked(text));
    }
  }

  // Java's parsers also take "1.5f", "1.5d", "NaN" and "Infinity", which strtod does not; the peer
  // sent something no C library would, so refuse rather than guess.
  private static String checked(String text) {
    String t = text.trim();
    if (!isDecimal(t)) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "not a C floating-point text: " + text);
    }
    return t;
  }

  /**
   * Whether {@code t} is {@code [+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?}. Scanned by hand: a regex
   * compiled per call costs a decoder kilobytes per FLOAT item, and the backtracking form of that
   * expression took seconds on a long run of digits.
   */
  private static boolean isDecimal(String t) {
    int n = t.length();
    int i = skipSign(t, 0);
    int digits = 0;
    for (; i < n && isDigit(t.charAt(i)); i++) {
      digits++;
    }
    if (i < n && t.charAt(i) == '.') {
      for (i++; i < n && isDigit(t.charAt(i)); i++) {
        digits++;
      }
    }
    if (digits == 0) {
      return false;
    }
    if (i < n && (t.charAt(i) == 'e' || t.charAt(i) == 'E')) {
      i = skipSign(t, i + 1);
      int exponent = i;
      while (i < n && isDigit(t.charAt(i))) {
        i++;
      }
      if (i == exponent) {
        return false;
      }
    }
    return i == n;
  }

  private static int skipSign(String t, int i) {
    return i < t.length() && (t.charAt(i) == '+' || t.charAt(i) == '-') ? i + 1 : i;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
