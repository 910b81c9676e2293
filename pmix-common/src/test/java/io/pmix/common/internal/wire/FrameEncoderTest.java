package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.internal.wire.FrameCaptures.FrameCapture;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class FrameEncoderTest {

  static List<FrameCapture> captures() {
    return FrameCaptures.all();
  }

  @ParameterizedTest
  @MethodSource("captures")
  void writesHeaderAndPayloadAsOneBuffer(FrameCapture capture) {
    EmbeddedChannel ch = new EmbeddedChannel(FrameEncoder.INSTANCE);
    assertTrue(ch.writeOutbound(capture.frame()));
    ByteBuf out = ch.readOutbound();
    try {
      assertEquals(Hex.format(capture.bytes()), Hex.format(ByteBufUtil.getBytes(out)));
    } finally {
      out.release();
    }
    assertFalse(ch.finish(), "exactly one buffer per frame");
  }

  @Test
  void roundTripsThroughTheDecoder() {
    Random random = new Random(42);
    EmbeddedChannel sender = new EmbeddedChannel(FrameEncoder.INSTANCE);
    EmbeddedChannel receiver = new EmbeddedChannel(new FrameDecoder(70_000));
    for (int n : new int[] {0, 1, 2, 15, 16, 17, 1000, 65_536, 70_000}) {
      byte[] payload = new byte[n];
      random.nextBytes(payload);
      int tag = 101 + n;
      int pindex = n % 2 == 0 ? -1 : n;
      assertTrue(sender.writeOutbound(new Frame(pindex, tag, Unpooled.wrappedBuffer(payload))));
      ByteBuf wire = sender.readOutbound();
      assertTrue(receiver.writeInbound(wire));
      Frame f = receiver.readInbound();
      try {
        assertEquals(pindex, f.pindex());
        assertEquals(tag, f.tag());
        assertArrayEquals(payload, ByteBufUtil.getBytes(f.payload()));
      } finally {
        f.release();
      }
    }
    assertFalse(sender.finish());
    assertFalse(receiver.finish());
  }

  @Test
  void tagsAboveTwoToThe31AreUnsignedOnTheWire() {
    EmbeddedChannel ch = new EmbeddedChannel(FrameEncoder.INSTANCE);
    assertTrue(ch.writeOutbound(new Frame(0, 0xFFFFFFFE, Unpooled.EMPTY_BUFFER)));
    ByteBuf out = ch.readOutbound();
    try {
      assertEquals(
          "00 00 00 00 ff ff ff fe 00 00 00 00 00 00 00 00", Hex.format(ByteBufUtil.getBytes(out)));
    } finally {
      out.release();
    }
    assertFalse(ch.finish());
  }
}
