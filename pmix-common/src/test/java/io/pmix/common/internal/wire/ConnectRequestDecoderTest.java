package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.wire.RequestCaptures.Capture;
import io.pmix.common.internal.wire.Segmentations.Segmentation;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ConnectRequestDecoderTest {

  static List<Capture> captures() {
    return RequestCaptures.all();
  }

  @ParameterizedTest
  @MethodSource("captures")
  void decodesEachCaptureHowEverItIsSegmented(Capture capture) {
    for (Segmentation s : Segmentations.of(capture.bytes())) {
      EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
      List<Object> out = Channels.feed(ch, s.segments());
      assertEquals(List.of(capture.request()), out, s.name());
      assertNull(ch.pipeline().get(ConnectRequestDecoder.class), "removed itself: " + s.name());
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void aRequestInPiecesHoldsNoneOfTheBuffersItArrivedIn() {
    // The server's reads share one buffer per loop: a decoder keeping one while the request is
    // incomplete would take it from every other connection of the loop.
    byte[] req = RequestCaptures.DOC_CLIENT.bytes();
    int[] cuts = {0, 5, 16, 17, req.length - 1, req.length};
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    for (int i = 0; i + 1 < cuts.length; i++) {
      ByteBuf piece = Unpooled.directBuffer().writeBytes(req, cuts[i], cuts[i + 1] - cuts[i]);
      var unused = ch.writeInbound(piece);
      assertEquals(0, piece.refCnt(), "piece " + i + " released once read");
    }
    assertEquals(RequestCaptures.DOC_CLIENT.request(), ch.readInbound());
    assertNull(ch.pipeline().get(ConnectRequestDecoder.class));
    assertFalse(ch.finish());
  }

  @Test
  void bytesAfterTheRequestGoToTheFrameDecoder() {
    // A client that does not wait for the reply before its first request (C clients do wait, but
    // nothing in the stream forbids it) and a HEAD client's REQ, both in one segment.
    byte[] req = Hex.bytes("00 00 00 00  00 00 00 65  00 00 00 02  00 00 00 00  02 00");
    byte[] fin = Hex.bytes("00 00 00 00  00 00 00 66  00 00 00 02  00 00 00 00  02 05");
    byte[] stream = Hex.concat(RequestCaptures.DOC_CLIENT.bytes(), req, fin);
    for (Segmentation s : Segmentations.of(stream)) {
      EmbeddedChannel ch =
          new EmbeddedChannel(new ConnectRequestDecoder(), new FrameDecoder(1 << 20));
      List<Object> out = Channels.feed(ch, s.segments());
      try {
        assertEquals(3, out.size(), s.name());
        assertEquals(RequestCaptures.DOC_CLIENT.request(), out.get(0), s.name());
        assertEquals(new Frame(0, 101, Unpooled.wrappedBuffer(Hex.bytes("02 00"))), out.get(1));
        assertEquals(new Frame(0, 102, Unpooled.wrappedBuffer(Hex.bytes("02 05"))), out.get(2));
      } finally {
        Channels.releaseAll(out);
      }
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void partialRequestProducesNothingAndEofLeavesNothingBehind() {
    byte[] bytes = RequestCaptures.DOC_CLIENT.bytes();
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    assertTrue(Channels.feed(ch, List.of(Arrays.copyOf(bytes, bytes.length - 1))).isEmpty());
    assertNotNull(ch.pipeline().get(ConnectRequestDecoder.class));
    assertFalse(ch.finish());
  }

  @Test
  void bigEndianLengthIsRefusedAsOversizedAndNamed() {
    byte[] bytes = RequestCaptures.DOC_CLIENT.bytes().clone();
    bytes[8] = 0;
    bytes[11] = 0x33; // nbytes written BE: 0x33000000 when read in host order
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bytes)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("855638016"), e.getMessage());
    assertTrue(e.getMessage().contains("little-endian"), e.getMessage());
    assertFalse(ch.finish());
  }

  @Test
  void oversizedLengthIsRefusedFromTheHeaderAloneAndLaterBytesAreDiscarded() {
    // 1 GiB announced: the decoder must refuse after 16 bytes, never waiting for or allocating it.
    byte[] header = Hex.bytes("ff ff ff ff ff ff ff ff 00 00 00 40 00 00 00 00");
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(header)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    // The stream cannot be resynchronised: whatever follows is dropped, silently.
    assertTrue(Channels.feed(ch, List.of(RequestCaptures.DOC_CLIENT.bytes())).isEmpty());
    assertFalse(ch.finish());
  }

  @Test
  void limitFromTheConstructorIsInclusive() {
    byte[] bytes = RequestCaptures.DOC_CLIENT.bytes();
    int payload = bytes.length - 16;

    EmbeddedChannel atLimit = new EmbeddedChannel(new ConnectRequestDecoder(payload));
    assertEquals(
        List.of(RequestCaptures.DOC_CLIENT.request()), Channels.feed(atLimit, List.of(bytes)));
    assertFalse(atLimit.finish());

    EmbeddedChannel overLimit = new EmbeddedChannel(new ConnectRequestDecoder(payload - 1));
    PmixException e =
        assertThrows(
            PmixException.class, () -> overLimit.writeInbound(Unpooled.wrappedBuffer(bytes)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertFalse(overLimit.finish());
  }

  @Test
  void defaultLimitIsTheCServers128KiB() {
    byte[] header = Hex.bytes("ff ff ff ff ff ff ff ff 01 00 02 00 00 00 00 00"); // 131073
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(header)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertFalse(ch.finish());

    // 131072 is allowed: the decoder waits for the payload.
    EmbeddedChannel ok = new EmbeddedChannel(new ConnectRequestDecoder());
    assertTrue(
        Channels.feed(ok, List.of(Hex.bytes("ff ff ff ff ff ff ff ff 00 00 02 00 00 00 00 00")))
            .isEmpty());
    assertFalse(ok.finish());
  }

  @Test
  void malformedPayloadFiresItsStatusAndTheDecoderStaysToDiscard() {
    // flag 10 in an otherwise valid request
    byte[] bytes = RequestCaptures.DOC_CLIENT.bytes().clone();
    bytes[0x23] = 10;
    for (Segmentation s : Segmentations.of(bytes)) {
      EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder(), new FrameDecoder(64));
      PmixException e = assertThrows(PmixException.class, () -> Channels.feed(ch, s.segments()));
      assertEquals(Status.ERR_NOT_SUPPORTED, e.status(), s.name());
      assertNotNull(ch.pipeline().get(ConnectRequestDecoder.class), s.name());
      assertTrue(
          Channels.feed(ch, List.of(Hex.bytes("00 00 00 00 00 00 00 65 00 00 00 00 00 00 00 00")))
              .isEmpty());
      assertFalse(ch.finish(), s.name());
    }
  }

  @Test
  void truncatedIdentityIsReadPastEnd() {
    // A flag-3 request whose nbytes stops inside egid.
    byte[] bytes =
        Hex.bytes(
            "ff ff ff ff ff ff ff ff 19 00 00 00 00 00 00 00"
                + "\"native\" 00 00 00 00 08 34 12 00 00 78 56 00 00 03 00 00 12 34 00 00");
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bytes)));
    assertEquals(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, e.status());
    assertFalse(ch.finish());
  }

  @Test
  void zeroLengthRequestIsMalformed() {
    byte[] bytes = Hex.bytes("ff ff ff ff ff ff ff ff 00 00 00 00 00 00 00 00");
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bytes)));
    assertEquals(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, e.status());
    assertFalse(ch.finish());
  }

  @Test
  void rejectsANegativeLimit() {
    assertThrows(IllegalArgumentException.class, () -> new ConnectRequestDecoder(-1));
  }
}
