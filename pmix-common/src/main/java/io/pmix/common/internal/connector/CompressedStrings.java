package io.pmix.common.internal.connector;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * PMIX_COMPRESSED_STRING values as libpmix's zlib component makes them: a 4-byte uncompressed
 * length in the sender's byte order (little-endian on every platform we meet) followed by a zlib
 * stream. libpmix's {@code PMIx_Get} expands them, so ours does too. We never make them: libpmix
 * 4.2.2 and 5.0 mean to compress put strings over 4,096 bytes, but their zlib component gives up
 * whenever {@code deflateBound} is not below the input length, which is always, so C clients send
 * long strings plain and so do we.
 */
public final class CompressedStrings {
  /** Longest string expanded: the codec's own string limit, so a tiny value cannot claim more. */
  private static final int MAX_EXPANDED = 64 << 20;

  private CompressedStrings() {}

  /**
   * What a get returns for {@code value}: a COMPRESSED_STRING expanded to its STRING, anything
   * else as it is.
   *
   * @throws PmixException {@code ERR_UNPACK_FAILURE} if the bytes are not a compressed string
   */
  public static Value expand(Value value) {
    if (!(value instanceof Value.Bytes b) || b.type() != DataType.COMPRESSED_STRING) {
      return value;
    }
    byte[] bytes = b.bytes();
    if (bytes.length < 4) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, "compressed string shorter than its header");
    }
    long declared =
        ByteBuffer.wrap(bytes, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffffffffL;
    // Deflate cannot expand more than 1032:1, so a claim beyond that is a lie we need not allocate.
    if (declared > MAX_EXPANDED || declared > (bytes.length - 4L) * 1032 + 64) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE,
          "compressed string claims " + declared + " bytes, over the " + MAX_EXPANDED + " limit");
    }
    Inflater inflater = new Inflater();
    try {
      inflater.setInput(bytes, 4, bytes.length - 4);
      // One spare byte: a stream longer than declared shows as output beyond it.
      byte[] out = new byte[(int) declared + 1];
      int n = 0;
      while (!inflater.finished() && n < out.length) {
        int k = inflater.inflate(out, n, out.length - n);
        if (k == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
          break;
        }
        n += k;
      }
      if (n != declared || !inflater.finished()) {
        throw new PmixException(
            Status.ERR_UNPACK_FAILURE,
            "compressed string does not expand to the declared " + declared + " bytes");
      }
      // C keeps the text up to its first NUL; so do we.
      int end = 0;
      while (end < n && out[end] != 0) {
        end++;
      }
      return Value.of(new String(out, 0, end, StandardCharsets.UTF_8));
    } catch (DataFormatException e) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, "compressed string is not zlib: " + e.getMessage());
    } finally {
      inflater.end();
    }
  }
}
