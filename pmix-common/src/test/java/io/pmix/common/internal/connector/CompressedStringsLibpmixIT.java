package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.common.base.Strings;
import com.google.common.io.BaseEncoding;
import io.pmix.common.Value;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.CPrograms;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Our reading of PMIX_COMPRESSED_STRING against libpmix's own compressor and decompressor
 * ({@code src/test/c/compress_peer.c}).
 */
class CompressedStringsLibpmixIT {
  private static final Duration REPLY = Duration.ofSeconds(30);
  private static final BaseEncoding HEX = BaseEncoding.base16().lowerCase();

  @Test
  void libpmixExpandsTheLayoutWeExpand() {
    String text = Strings.repeat("host-0007:cpus=0-15;", 1500);
    Value.Bytes ours = (Value.Bytes) CompressedStringsTest.compressed(text);
    try (CProcess peer = start()) {
      peer.send("D " + HEX.encode(ours.bytes()));
      String reply = peer.readLine(REPLY);
      assertEquals(
          "OK " + HEX.encode(text.getBytes(StandardCharsets.UTF_8)),
          reply,
          "libpmix decompressed our compressed string differently");
    }
    assertEquals(Value.of(text), CompressedStrings.expand(ours));
  }

  /**
   * libpmix 4.2.2 never compresses (its zlib component gives up whenever deflateBound is not below
   * the input length, which is always), so C clients put long strings plain and ours do the same.
   * If a libpmix starts compressing, this fails and put should compress too.
   */
  @Test
  void libpmixDoesNotCompressEvenLongRepetitiveStrings() {
    byte[] text = Strings.repeat("a", 100_000).getBytes(StandardCharsets.UTF_8);
    try (CProcess peer = start()) {
      peer.send("C " + HEX.encode(text));
      assertEquals("NO", peer.readLine(REPLY));
    }
  }

  private static CProcess start() {
    CProcess p =
        CProcess.builder(CPrograms.compile("src/test/c/compress_peer.c"))
            .name("compress_peer")
            .start();
    assertEquals("READY", p.readLine(REPLY));
    return p;
  }
}
