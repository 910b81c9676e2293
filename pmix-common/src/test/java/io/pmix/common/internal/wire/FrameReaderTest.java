package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
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

/**
 * {@link FrameReader} frames the captured C traffic exactly as {@link FrameDecoder} does, however
 * TCP cuts it, with the same limits, and keeps no received buffer: each is released once read.
 */
class FrameReaderTest {
  private static final int MAX = 1 << 20;

  static List<FrameCapture> captures() {
    return FrameCaptures.all();
  }

  private static EmbeddedChannel reader(int max) {
    return new EmbeddedChannel(new FrameReader(max, FrameBudget.UNLIMITED));
  }

  /** Feeds the segments, each in a buffer checked to be released after the read. */
  private static List<Object> feed(EmbeddedChannel ch, List<byte[]> segments) {
    for (byte[] segment : segments) {
      ByteBuf b = Unpooled.wrappedBuffer(segment);
      boolean unused = ch.writeInbound(b);
      assertEquals(0, b.refCnt(), "a received buffer is released once read");
    }
    return Channels.drainInbound(ch);
  }

  private static void assertFrame(FrameCapture expected, Object actual, String what) {
    ArrayFrame f = (ArrayFrame) actual;
    assertEquals(expected.pindex(), f.pindex(), what);
    assertEquals(expected.tag(), f.tag(), what);
    assertArrayEquals(expected.payload(), f.payload(), what);
  }

  @ParameterizedTest
  @MethodSource("captures")
  void framesEachCaptureHowEverItIsSegmented(FrameCapture capture) {
    for (Segmentation s : Segmentations.of(capture.bytes())) {
      EmbeddedChannel ch = reader(MAX);
      List<Object> out = feed(ch, s.segments());
      assertEquals(1, out.size(), s.name());
      assertFrame(capture, out.get(0), s.name());
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void framesAStreamInOrderAsTheDecoderDoes() {
    List<FrameCapture> conversation = FrameCaptures.serverSideOf11_2();
    byte[] stream = new byte[0];
    for (FrameCapture c : conversation) {
      stream = Hex.concat(stream, c.bytes());
    }
    for (Segmentation s : Segmentations.of(stream)) {
      List<Object> out = feed(reader(MAX), s.segments());
      List<Object> decoded =
          Channels.feed(new EmbeddedChannel(new FrameDecoder(MAX)), s.segments());
      try {
        assertEquals(conversation.size(), out.size(), s.name());
        assertEquals(decoded.size(), out.size(), s.name());
        for (int i = 0; i < out.size(); i++) {
          assertFrame(conversation.get(i), out.get(i), s.name() + ", frame " + i);
          Frame d = (Frame) decoded.get(i);
          byte[] p = new byte[d.payload().readableBytes()];
          d.payload().getBytes(d.payload().readerIndex(), p);
          assertArrayEquals(p, ((ArrayFrame) out.get(i)).payload(), "as FrameDecoder");
        }
      } finally {
        Channels.releaseAll(decoded);
      }
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
    EmbeddedChannel ch = reader(2);
    List<Object> out = feed(ch, List.of(stream));
    assertEquals(4, out.size());
    assertEquals(Tags.HEARTBEAT, ((ArrayFrame) out.get(0)).tag());
    assertEquals(0, ((ArrayFrame) out.get(0)).payload().length);
    assertEquals(101, ((ArrayFrame) out.get(2)).tag());
    assertFalse(ch.finish());
  }

  @Test
  void partialHeaderAndPartialPayloadProduceNothing() {
    byte[] bytes = FrameCaptures.NOTIFY.bytes();
    EmbeddedChannel ch = reader(MAX);
    assertTrue(feed(ch, List.of(Arrays.copyOf(bytes, 15))).isEmpty());
    assertTrue(feed(ch, List.of(Arrays.copyOfRange(bytes, 15, 40))).isEmpty());
    List<Object> out = feed(ch, List.of(Arrays.copyOfRange(bytes, 40, bytes.length)));
    assertEquals(1, out.size());
    assertFrame(FrameCaptures.NOTIFY, out.get(0), "completed");
    assertTrue(feed(ch, List.of(Arrays.copyOf(bytes, 20))).isEmpty());
    assertFalse(ch.finish(), "EOF inside a frame");
  }

  @Test
  void padWordIsIgnored() {
    byte[] bytes = FrameCaptures.REQ.bytes().clone();
    bytes[12] = (byte) 0xde;
    bytes[15] = (byte) 0xef;
    List<Object> out = feed(reader(MAX), List.of(bytes));
    assertEquals(1, out.size());
    assertFrame(FrameCaptures.REQ, out.get(0), "pad ignored");
  }

  @Test
  void payloadAtTheLimitIsAcceptedAndOneMoreIsRefusedFromTheHeaderAlone() {
    byte[] bytes = FrameCaptures.NOTIFY.bytes();
    EmbeddedChannel ok = reader(47);
    assertEquals(1, feed(ok, List.of(bytes)).size());
    assertFalse(ok.finish());

    EmbeddedChannel refused = reader(46);
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> refused.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(bytes, 16))));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("47"), e.getMessage());
    // Nothing after the refused header is framed, and nothing else is reported.
    assertTrue(
        feed(
                refused,
                List.of(Arrays.copyOfRange(bytes, 16, bytes.length), FrameCaptures.REQ.bytes()))
            .isEmpty());
    assertFalse(refused.finish());
  }

  @Test
  void partialFramesOfAllChannelsShareTheBudgetAndGiveItBack() {
    FrameBudget budget = FrameBudget.of(1000);
    EmbeddedChannel a = new EmbeddedChannel(new FrameReader(MAX, budget));
    EmbeddedChannel b = new EmbeddedChannel(new FrameReader(MAX, budget));
    // a holds 800 bytes of the budget while its frame is incomplete.
    assertFalse(a.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(800, 10))));
    assertEquals(800, budget.reserved());
    // b's 300-byte frame does not fit: refused from its header, nothing kept.
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> b.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(300, 5))));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertEquals(800, budget.reserved());
    assertFalse(b.finish());
    // a's frame completes: its bytes come back, and the next frame may take them.
    assertTrue(a.writeInbound(Unpooled.wrappedBuffer(new byte[790])));
    ArrayFrame f = a.readInbound();
    assertEquals(800, f.payload().length);
    assertEquals(0, budget.reserved());
    EmbeddedChannel c = new EmbeddedChannel(new FrameReader(MAX, budget));
    assertFalse(c.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(900, 1))));
    assertEquals(900, budget.reserved());
    // A connection closed in the middle of a frame gives its share back.
    assertFalse(c.finish());
    assertEquals(0, budget.reserved());
    // A frame that arrives whole reserves nothing.
    assertTrue(a.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(2000, 2000))));
    assertEquals(0, budget.reserved());
    assertEquals(2000, ((ArrayFrame) a.readInbound()).payload().length);
    assertFalse(a.finish());
  }

  @Test
  void aStalledLargeFrameHoldsWhatHasComeNotWhatItAnnounced() {
    int length = 48 << 20;
    FrameReader r = new FrameReader(64 << 20, FrameBudget.of(64 << 20));
    EmbeddedChannel ch = new EmbeddedChannel(r);
    byte[] frame = FrameCaptures.partialFrame(length, length);
    for (int i = 0; i < length; i++) {
      frame[FrameDecoder.HEADER_LENGTH + i] = (byte) (i * 7 + i / 251);
    }
    assertTrue(feed(ch, List.of(Arrays.copyOf(frame, 26))).isEmpty());
    assertEquals(FrameReader.PARTIAL_START, r.held(), "a 48 MiB announcement, 10 bytes come");
    // The rest in uneven pieces: the array grows with what comes, to the frame's length.
    int at = 26;
    int piece = 1000;
    while (at < frame.length) {
      int n = Math.min(piece, frame.length - at);
      List<Object> out = feed(ch, List.of(Arrays.copyOfRange(frame, at, at + n)));
      at += n;
      assertTrue(r.held() <= 2 * (at - FrameDecoder.HEADER_LENGTH) + FrameReader.PARTIAL_START);
      if (at < frame.length) {
        assertTrue(out.isEmpty());
      } else {
        assertEquals(1, out.size());
        assertArrayEquals(
            Arrays.copyOfRange(frame, FrameDecoder.HEADER_LENGTH, frame.length),
            ((ArrayFrame) out.get(0)).payload());
      }
      piece = piece * 3 / 2 + 17;
    }
    assertEquals(0, r.held());
    assertFalse(ch.finish());
  }

  @Test
  void hugeUnsignedLengthIsRefusedWithoutAllocating() {
    byte[] header = Hex.bytes("00 00 00 00 00 00 00 65 ff ff ff ff 00 00 00 00");
    EmbeddedChannel ch = reader(MAX);
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(header)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
    assertFalse(ch.finish());
  }

  @Test
  void passesOtherMessagesThrough() {
    EmbeddedChannel ch = reader(MAX);
    assertTrue(ch.writeInbound(RequestCaptures.DOC_CLIENT.request()));
    assertEquals(RequestCaptures.DOC_CLIENT.request(), ch.readInbound());
    assertFalse(ch.finish());
  }

  @Test
  void takesTheBytesAConnectRequestDecoderLeavesBehind() {
    // The connect request and the first frame in one segment, as a fast client may send them.
    byte[] stream =
        Hex.concat(RequestCaptures.DOC_CLIENT.bytes(), FrameCaptures.REQ.bytes());
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new ConnectRequestDecoder(), new FrameReader(MAX, FrameBudget.UNLIMITED));
    List<Object> out = new ArrayList<>(Channels.feed(ch, List.of(stream)));
    assertEquals(2, out.size(), out.toString());
    assertEquals(RequestCaptures.DOC_CLIENT.request(), out.get(0));
    assertFrame(FrameCaptures.REQ, out.get(1), "the frame after the handshake");
    assertFalse(ch.finish());
  }

  @Test
  void rejectsANegativeLimit() {
    assertThrows(
        IllegalArgumentException.class, () -> new FrameReader(-1, FrameBudget.UNLIMITED));
  }
}
