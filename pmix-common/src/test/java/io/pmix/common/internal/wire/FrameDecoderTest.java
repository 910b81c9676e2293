package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.wire.FrameCaptures.FrameCapture;
import io.pmix.common.internal.wire.Segmentations.Segmentation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class FrameDecoderTest {
  private static final int MAX = 1 << 20;

  static List<FrameCapture> captures() {
    return FrameCaptures.all();
  }

  @ParameterizedTest
  @MethodSource("captures")
  void decodesEachCaptureHowEverItIsSegmented(FrameCapture capture) {
    for (Segmentation s : Segmentations.of(capture.bytes())) {
      EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
      List<Object> out = Channels.feed(ch, s.segments());
      Frame expected = capture.frame();
      try {
        assertEquals(List.of(expected), out, s.name());
        Frame f = (Frame) out.get(0);
        assertEquals(capture.pindex(), f.pindex());
        assertEquals(capture.tag(), f.tag());
      } finally {
        expected.release();
        Channels.releaseAll(out);
      }
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void decodesAStreamOfFramesInOrder() {
    // 11.9 then 11.2: the notification arrives before the reply to the first request.
    List<FrameCapture> conversation = FrameCaptures.serverSideOf11_2();
    byte[] stream = new byte[0];
    for (FrameCapture c : conversation) {
      stream = Hex.concat(stream, c.bytes());
    }
    for (Segmentation s : Segmentations.of(stream)) {
      EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
      List<Object> out = Channels.feed(ch, s.segments());
      List<Frame> expected = new ArrayList<>();
      conversation.forEach(c -> expected.add(c.frame()));
      try {
        assertEquals(expected, out, s.name());
      } finally {
        Channels.releaseAll(expected);
        Channels.releaseAll(out);
      }
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void zeroLengthFramesBetweenOthers() {
    byte[] stream =
        Hex.concat(
            FrameCaptures.HEARTBEAT.bytes(),
            FrameCaptures.HEARTBEAT.bytes(),
            FrameCaptures.REQ.bytes(),
            FrameCaptures.HEARTBEAT.bytes());
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(2));
    List<Object> out = Channels.feed(ch, List.of(stream));
    try {
      assertEquals(4, out.size());
      Frame heartbeat = (Frame) out.get(0);
      assertEquals(Tags.HEARTBEAT, heartbeat.tag());
      assertFalse(heartbeat.payload().isReadable());
      assertEquals(101, ((Frame) out.get(2)).tag());
    } finally {
      Channels.releaseAll(out);
    }
    assertFalse(ch.finish());
  }

  @Test
  void partialHeaderAndPartialPayloadProduceNothing() {
    byte[] bytes = FrameCaptures.NOTIFY.bytes();
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
    assertTrue(Channels.feed(ch, List.of(Arrays.copyOf(bytes, 15))).isEmpty());
    assertTrue(Channels.feed(ch, List.of(Arrays.copyOfRange(bytes, 15, 40))).isEmpty());
    List<Object> out = Channels.feed(ch, List.of(Arrays.copyOfRange(bytes, 40, bytes.length)));
    assertEquals(1, out.size());
    Channels.releaseAll(out);
    assertTrue(Channels.feed(ch, List.of(Arrays.copyOf(bytes, 20))).isEmpty());
    assertFalse(ch.finish(), "EOF inside a frame releases the partial bytes");
  }

  @Test
  void padWordIsIgnored() {
    byte[] bytes = FrameCaptures.REQ.bytes().clone();
    bytes[12] = (byte) 0xde;
    bytes[15] = (byte) 0xef;
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
    List<Object> out = Channels.feed(ch, List.of(bytes));
    Frame expected = FrameCaptures.REQ.frame();
    try {
      assertEquals(List.of(expected), out);
    } finally {
      expected.release();
      Channels.releaseAll(out);
    }
    assertFalse(ch.finish());
  }

  @Test
  void payloadAtTheLimitIsAcceptedAndOneMoreIsRefusedFromTheHeaderAlone() {
    byte[] bytes = FrameCaptures.NOTIFY.bytes();
    EmbeddedChannel ok = new EmbeddedChannel(new FrameDecoder(47));
    List<Object> out = Channels.feed(ok, List.of(bytes));
    assertEquals(1, out.size());
    Channels.releaseAll(out);
    assertFalse(ok.finish());

    EmbeddedChannel refused = new EmbeddedChannel(new FrameDecoder(46));
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> refused.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(bytes, 16))));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("47"), e.getMessage());
    // Nothing after the refused header is framed, and nothing else is reported.
    assertTrue(
        Channels.feed(
                refused,
                List.of(Arrays.copyOfRange(bytes, 16, bytes.length), FrameCaptures.REQ.bytes()))
            .isEmpty());
    assertFalse(refused.finish());
  }

  @Test
  void partialFramesOfAllChannelsShareTheBudgetAndGiveItBack() {
    FrameBudget budget = FrameBudget.of(1000);
    EmbeddedChannel a = new EmbeddedChannel(new FrameDecoder(MAX, budget));
    EmbeddedChannel b = new EmbeddedChannel(new FrameDecoder(MAX, budget));
    // a holds 800 bytes of the budget while its frame is incomplete.
    assertFalse(a.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(800, 10))));
    assertEquals(800, budget.reserved());
    // b's 300-byte frame does not fit: refused from its header, nothing buffered.
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> b.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(300, 5))));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertEquals(800, budget.reserved());
    assertFalse(b.finish());
    // a's frame completes: its bytes come back, and the next frame may take them.
    assertTrue(a.writeInbound(Unpooled.wrappedBuffer(new byte[790])));
    Frame f = a.readInbound();
    assertEquals(800, f.payload().readableBytes());
    f.release();
    assertEquals(0, budget.reserved());
    EmbeddedChannel c = new EmbeddedChannel(new FrameDecoder(MAX, budget));
    assertFalse(c.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(900, 1))));
    assertEquals(900, budget.reserved());
    // A connection closed in the middle of a frame gives its share back.
    assertFalse(c.finish());
    assertEquals(0, budget.reserved());
    assertFalse(a.finish());
  }

  @Test
  void hugeUnsignedLengthIsRefusedWithoutAllocating() {
    byte[] header = Hex.bytes("00 00 00 00 00 00 00 65 ff ff ff ff 00 00 00 00");
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(header)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
    assertFalse(ch.finish());
  }

  @Test
  void passesOtherMessagesThrough() {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
    assertTrue(ch.writeInbound(RequestCaptures.DOC_CLIENT.request()));
    assertEquals(RequestCaptures.DOC_CLIENT.request(), ch.readInbound());
    assertFalse(ch.finish());
  }

  @Test
  void rejectsANegativeLimit() {
    assertThrows(IllegalArgumentException.class, () -> new FrameDecoder(-1));
  }
}
