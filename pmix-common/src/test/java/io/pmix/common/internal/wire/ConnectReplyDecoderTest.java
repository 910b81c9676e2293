package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.wire.ConnectReplyTest.ReplyCapture;
import io.pmix.common.internal.wire.Segmentations.Segmentation;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ConnectReplyDecoderTest {

  static List<ReplyCapture> captures() {
    return ConnectReplyTest.captures();
  }

  @ParameterizedTest
  @MethodSource("captures")
  void decodesEachReplyHowEverItIsSegmented(ReplyCapture capture) {
    for (Segmentation s : Segmentations.of(capture.bytes())) {
      EmbeddedChannel ch = new EmbeddedChannel(new ConnectReplyDecoder(capture.layout()));
      assertEquals(List.of(capture.reply()), Channels.feed(ch, s.segments()), s.name());
      assertNull(ch.pipeline().get(ConnectReplyDecoder.class), s.name());
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void notificationRightBehindTheClientReplyReachesTheFrameDecoder() {
    // docs/transport.md §11.9: the server pushes a cached event on tag 0 right after status and
    // index.
    byte[] stream = Hex.concat(ConnectReplyTest.CLIENT_11_1.bytes(), FrameCaptures.NOTIFY.bytes());
    for (Segmentation s : Segmentations.of(stream)) {
      EmbeddedChannel ch =
          new EmbeddedChannel(new ConnectReplyDecoder(ReplyLayout.CLIENT), new FrameDecoder(1024));
      List<Object> out = Channels.feed(ch, s.segments());
      Frame notify = FrameCaptures.NOTIFY.frame();
      try {
        assertEquals(List.of(ClientReply.accepted(0), notify), out, s.name());
      } finally {
        notify.release();
        Channels.releaseAll(out);
      }
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void partialReplyThenEofProducesNothing() {
    byte[] bytes = ConnectReplyTest.TOOL_NEEDS_ID_11_3.bytes();
    EmbeddedChannel ch =
        new EmbeddedChannel(new ConnectReplyDecoder(ReplyLayout.TOOL_WITH_ASSIGNED_ID));
    assertTrue(Channels.feed(ch, List.of(Arrays.copyOf(bytes, 527))).isEmpty());
    assertNotNull(ch.pipeline().get(ConnectReplyDecoder.class));
    assertFalse(ch.finish());
  }

  @Test
  void malformedNspaceFiresAndLaterBytesAreDiscarded() {
    byte[] nspace = Hex.fix256("");
    nspace[0] = (byte) 0xc3; // a UTF-8 lead byte followed by NUL
    byte[] bytes = Hex.concat(Hex.bytes("00 00 00 00"), nspace, new byte[8]);
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectReplyDecoder(ReplyLayout.TOOL));
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bytes)));
    assertEquals(Status.ERR_BAD_PARAM, e.status());
    assertTrue(Channels.feed(ch, List.of(FrameCaptures.REQ.bytes())).isEmpty());
    assertFalse(ch.finish());
  }
}
