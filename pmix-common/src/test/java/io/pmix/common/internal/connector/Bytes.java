package io.pmix.common.internal.connector;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.pmix.common.codec.WireBuffer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Builds expected byte strings from hex runs and NUL-terminated text, as docs/commands.md shows
 * them.
 */
final class Bytes {
  private Bytes() {}

  /** Parts: a {@code String} starting with {@code '} is text plus its NUL; any other is hex. */
  static byte[] of(String... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (String p : parts) {
      if (p.startsWith("'")) {
        out.writeBytes(p.substring(1).getBytes(StandardCharsets.UTF_8));
        out.write(0);
      } else {
        for (String h : com.google.common.base.Splitter.on(' ').omitEmptyStrings().split(p)) {
          if (!h.isEmpty()) {
            out.write(Integer.parseInt(h, 16));
          }
        }
      }
    }
    return out.toByteArray();
  }

  /** The readable bytes of a buffer as hex, releasing it. */
  static String hexAndRelease(ByteBuf b) {
    try {
      return ByteBufUtil.hexDump(b);
    } finally {
      b.release();
    }
  }

  /** The readable bytes of a connector's buffer as hex (nothing to release). */
  static String hexAndRelease(WireBuffer b) {
    return ByteBufUtil.hexDump(b.toByteArray());
  }

  /** Bytes as a hex run {@link #of} accepts. */
  static String hexOf(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x ", x & 0xff));
    }
    return sb.toString().trim();
  }

  static String hex(byte[] b) {
    return ByteBufUtil.hexDump(b);
  }
}
