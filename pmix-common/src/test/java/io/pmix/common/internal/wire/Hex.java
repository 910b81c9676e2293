package io.pmix.common.internal.wire;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes test vectors the way docs/transport.md prints them: hex bytes separated by blanks (a token
 * may hold several bytes, {@code ffffffff}), and {@code "text"} for the ASCII bytes of the text.
 */
final class Hex {
  private Hex() {}

  static byte[] bytes(String spec) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int i = 0;
    while (i < spec.length()) {
      char c = spec.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '"') {
        int end = spec.indexOf('"', i + 1);
        if (end < 0) {
          throw new IllegalArgumentException("unterminated text in " + spec);
        }
        out.writeBytes(spec.substring(i + 1, end).getBytes(StandardCharsets.US_ASCII));
        i = end + 1;
      } else {
        out.write(Integer.parseInt(spec.substring(i, i + 2), 16));
        i += 2;
      }
    }
    return out.toByteArray();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** {@code s} as a zero-padded 256-byte fix256 field. */
  static byte[] fix256(String s) {
    byte[] f = new byte[256];
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, f, 0, b.length);
    return f;
  }

  static String format(byte[] bytes) {
    StringBuilder sb = new StringBuilder();
    for (byte b : bytes) {
      sb.append(String.format("%02x ", b));
    }
    return sb.toString().trim();
  }
}
