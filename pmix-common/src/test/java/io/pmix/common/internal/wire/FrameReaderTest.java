package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.internal.wire.FrameCaptures.FrameCapture;
import io.pmix.common.internal.wire.Segmentations.Segmentation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What {@link FrameReader} does beyond the framing both readers share ({@link
 * FramingContractTest}): it keeps no received buffer (each is released once read), a frame that
 * arrives in pieces holds what has come rather than what it announced, and it takes the bytes a
 * connect-request decoder leaves behind when it removes itself.
 */
class FrameReaderTest {
  private static final int MAX = 1 << 20;

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

  @Test
  void everyReceivedBufferIsReleasedOnceRead() {
    List<FrameCapture> conversation = FrameCaptures.serverSideOf11_2();
    byte[] stream = new byte[0];
    for (FrameCapture c : conversation) {
      stream = Hex.concat(stream, c.bytes());
    }
    for (Segmentation s : Segmentations.of(stream)) {
      EmbeddedChannel ch = new EmbeddedChannel(new FrameReader(MAX, FrameBudget.UNLIMITED));
      List<Object> out = feed(ch, s.segments());
      assertEquals(conversation.size(), out.size(), s.name());
      for (int i = 0; i < out.size(); i++) {
        assertFrame(conversation.get(i), out.get(i), s.name() + ", frame " + i);
      }
      assertFalse(ch.finish(), s.name());
    }
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
    assertEquals(FrameLimits.PARTIAL_START, r.held(), "a 48 MiB announcement, 10 bytes come");
    // The rest in uneven pieces: the array grows with what comes, to the frame's length.
    int at = 26;
    int piece = 1000;
    while (at < frame.length) {
      int n = Math.min(piece, frame.length - at);
      List<Object> out = feed(ch, List.of(Arrays.copyOfRange(frame, at, at + n)));
      at += n;
      assertTrue(r.held() <= 2 * (at - FrameDecoder.HEADER_LENGTH) + FrameLimits.PARTIAL_START);
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
  void takesTheBytesAConnectRequestDecoderLeavesBehind() {
    // The connect request and the first frame in one segment, as a fast client may send them.
    byte[] stream =
        Hex.concat(RequestCaptures.DOC_CLIENT.bytes(), FrameCaptures.REQ.bytes());
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new ConnectRequestDecoder(), new FrameReader(MAX, FrameBudget.UNLIMITED));
    List<Object> out = new ArrayList<>(feed(ch, List.of(stream)));
    assertEquals(2, out.size(), out.toString());
    assertEquals(RequestCaptures.DOC_CLIENT.request(), out.get(0));
    assertFrame(FrameCaptures.REQ, out.get(1), "the frame after the handshake");
    assertFalse(ch.finish());
  }
}
