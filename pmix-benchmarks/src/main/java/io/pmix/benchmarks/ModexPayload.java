package io.pmix.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The benchmark payload: a typical modex blob of {@value #COUNT} infos packed in one call. Info
 * {@code i} has key {@code pmix.test.key.NN} and, by {@code i % 3}, a STRING of 20 to 38
 * letters, a UINT32 of 1 to 5 varint bytes, or a 64-byte BYTE_OBJECT: 11 strings, 11 uint32 and
 * 10 byte objects, 1644 bytes packed.
 *
 * <p>{@code src/main/c/codec_bench.c} builds the same payload for libpmix; keep the two in step
 * ({@code bin/bench-codec} checks that both pack the same bytes).
 */
final class ModexPayload {
  /** How many infos the payload holds. */
  static final int COUNT = 32;

  /** The length of each byte object. */
  static final int BYTE_OBJECT_LENGTH = 64;

  private ModexPayload() {}

  /** The {@value #COUNT} infos, flags 0 (as {@code PMIx_Info_load} leaves them in C). */
  static List<Info> infos() {
    List<Info> infos = new ArrayList<>(COUNT);
    for (int i = 0; i < COUNT; i++) {
      String key = String.format(Locale.ROOT, "pmix.test.key.%02d", i);
      infos.add(Info.of(key, value(i)));
    }
    return List.copyOf(infos);
  }

  private static Value value(int i) {
    switch (i % 3) {
      case 0 -> {
        int len = 20 + i % 21;
        StringBuilder s = new StringBuilder(len);
        for (int j = 0; j < len; j++) {
          s.append((char) ('a' + (i + j) % 26));
        }
        return Value.of(s.toString());
      }
      case 1 -> {
        // C: (uint32_t) (2654435761u * (i + 1)) >> i
        return Value.uint32(((0x9E3779B1L * (i + 1)) & 0xFFFF_FFFFL) >>> i);
      }
      default -> {
        byte[] b = new byte[BYTE_OBJECT_LENGTH];
        for (int j = 0; j < b.length; j++) {
          b[j] = (byte) (i * 31 + j * 7);
        }
        return Value.of(b);
      }
    }
  }

  /** The payload packed in the 4.2.2 default format (NON_DESC, flex128). */
  static byte[] packed() {
    ByteBuf buf = Unpooled.buffer();
    try {
      new PmixWriter(buf, WireFormat.DEFAULT).pack(DataType.INFO, infos());
      return ByteBufUtil.getBytes(buf);
    } finally {
      buf.release();
    }
  }
}
