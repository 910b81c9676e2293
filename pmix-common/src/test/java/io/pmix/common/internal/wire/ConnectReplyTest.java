package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.WireBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ConnectReplyTest {

  /** A reply capture, the layout it is read with, and what it means. */
  @SuppressWarnings("ArrayRecordComponent") // Test vectors, read through accessors, never compared.
  record ReplyCapture(String name, byte[] bytes, ReplyLayout layout, ConnectReply reply) {
    @Override
    public String toString() {
      return name;
    }
  }

  static final ReplyCapture CLIENT_11_1 =
      new ReplyCapture(
          "11.1 client",
          Hex.bytes("00 00 00 00 00 00 00 00"),
          ReplyLayout.CLIENT,
          ClientReply.accepted(0));

  static final ReplyCapture TOOL_NEEDS_ID_11_3 =
      new ReplyCapture(
          "11.3 tool needing an id",
          Hex.concat(
              Hex.bytes("00 00 00 00"),
              Hex.fix256("tool-ns-1"),
              Hex.bytes("00 00 00 00"),
              Hex.fix256("pmix-server"),
              Hex.bytes("00 00 33 1a"),
              Hex.bytes("00 00 00 00")),
          ReplyLayout.TOOL_WITH_ASSIGNED_ID,
          new ToolReply.Full(
              Optional.of(new PeerId("tool-ns-1", 0)),
              new PeerId("pmix-server", 13082),
              Status.SUCCESS));

  static final ReplyCapture TOOL_GIVEN_ID_11_4 =
      new ReplyCapture(
          "11.4 tool given an id",
          Hex.concat(
              Hex.bytes("00 00 00 00"),
              Hex.fix256("pmix-server"),
              Hex.bytes("00 00 36 b5"),
              Hex.bytes("00 00 00 00")),
          ReplyLayout.TOOL,
          new ToolReply.Full(Optional.empty(), new PeerId("pmix-server", 0x36b5), Status.SUCCESS));

  static final ReplyCapture TOOL_REFUSED_11_6 =
      new ReplyCapture(
          "11.6 tool refused by the host",
          Hex.bytes("ff ff ff d1"),
          ReplyLayout.TOOL_WITH_ASSIGNED_ID,
          new ToolReply.StatusOnly(Status.ERR_NOT_SUPPORTED));

  static final ReplyCapture TOOL_BAD_CREDENTIAL_11_6 =
      new ReplyCapture(
          "11.6 tool whose credential failed",
          Hex.concat(
              Hex.bytes("00 00 00 00"),
              Hex.fix256("tool-ns-1"),
              Hex.bytes("00 00 00 00"),
              Hex.fix256("pmix-server"),
              Hex.bytes("00 00 33 1a"),
              Hex.bytes("ff ff ff f4")),
          ReplyLayout.TOOL_WITH_ASSIGNED_ID,
          new ToolReply.Full(
              Optional.of(new PeerId("tool-ns-1", 0)),
              new PeerId("pmix-server", 13082),
              Status.of(-12)));

  static List<ReplyCapture> captures() {
    return List.of(
        CLIENT_11_1,
        TOOL_NEEDS_ID_11_3,
        TOOL_GIVEN_ID_11_4,
        TOOL_REFUSED_11_6,
        TOOL_BAD_CREDENTIAL_11_6);
  }

  @ParameterizedTest
  @MethodSource("captures")
  void encodesToTheCapturedBytes(ReplyCapture capture) {
    ByteBuf out = Unpooled.buffer();
    try {
      capture.reply().encode(out);
      assertEquals(Hex.format(capture.bytes()), Hex.format(ByteBufUtil.getBytes(out)));
    } finally {
      out.release();
    }
  }

  @ParameterizedTest
  @MethodSource("captures")
  void decodesOnlyOnceEveryByteHasArrivedAndConsumesExactlyTheReply(ReplyCapture capture) {
    byte[] bytes = capture.bytes();
    for (int n = 0; n < bytes.length; n++) {
      ByteBuf partial = Unpooled.wrappedBuffer(Arrays.copyOf(bytes, n));
      try {
        assertEquals(
            Optional.empty(), ConnectReply.tryDecode(partial, capture.layout()), "at " + n);
        assertEquals(0, partial.readerIndex(), "nothing consumed at " + n);
      } finally {
        partial.release();
      }
    }
    // Followed by the first bytes of a frame: those stay for the frame decoder.
    ByteBuf whole = Unpooled.wrappedBuffer(Hex.concat(bytes, Hex.bytes("00 00 00 00 00")));
    try {
      assertEquals(Optional.of(capture.reply()), ConnectReply.tryDecode(whole, capture.layout()));
      assertEquals(5, whole.readableBytes());
    } finally {
      whole.release();
    }
  }

  @Test
  void successfulLengthsMatchTheLayouts() {
    assertEquals(8, ReplyLayout.CLIENT.length());
    assertEquals(268, ReplyLayout.TOOL.length());
    assertEquals(528, ReplyLayout.TOOL_WITH_ASSIGNED_ID.length());
    assertEquals(268, TOOL_GIVEN_ID_11_4.bytes().length);
    assertEquals(528, TOOL_NEEDS_ID_11_3.bytes().length);
  }

  @Test
  void successMeansEveryStatusIsSuccess() {
    assertTrue(CLIENT_11_1.reply().isSuccess());
    assertTrue(TOOL_NEEDS_ID_11_3.reply().isSuccess());
    assertFalse(TOOL_REFUSED_11_6.reply().isSuccess());
    assertFalse(TOOL_BAD_CREDENTIAL_11_6.reply().isSuccess());
    assertEquals(Status.SUCCESS, TOOL_BAD_CREDENTIAL_11_6.reply().status());
    assertFalse(new ClientReply(Status.ERR_NOT_SUPPORTED, 0).isSuccess());
  }

  @Test
  void clientReplyKeepsUnknownStatusCodesAndUnsignedIndexes() {
    ByteBuf in = Unpooled.wrappedBuffer(Hex.bytes("ff ff ec 78 ff ff ff ff"));
    try {
      ClientReply r = ClientReply.tryDecode(WireBuffer.of(in)).orElseThrow();
      assertEquals(-5000, r.status().code());
      assertEquals(0xFFFFFFFF, r.index());
    } finally {
      in.release();
    }
  }

  @Test
  void fix256UsesTheTextBeforeTheFirstNulAndIgnoresByte255() {
    byte[] nspace = new byte[256];
    Arrays.fill(nspace, (byte) 'x');
    byte[] reply =
        Hex.concat(Hex.bytes("00 00 00 00"), nspace, Hex.bytes("00 00 00 01 00 00 00 00"));
    ByteBuf in = Unpooled.wrappedBuffer(reply);
    try {
      ToolReply.Full r =
          (ToolReply.Full) ToolReply.tryDecode(WireBuffer.of(in), false).orElseThrow();
      assertEquals("x".repeat(255), r.server().nspace());
      assertEquals(1, r.server().rank());
    } finally {
      in.release();
    }

    byte[] junkAfterNul = Hex.fix256("srv");
    junkAfterNul[10] = 'j';
    ByteBuf in2 =
        Unpooled.wrappedBuffer(
            Hex.concat(
                Hex.bytes("00 00 00 00"), junkAfterNul, Hex.bytes("00 00 00 02 00 00 00 00")));
    try {
      ToolReply.Full r =
          (ToolReply.Full) ToolReply.tryDecode(WireBuffer.of(in2), false).orElseThrow();
      assertEquals(new PeerId("srv", 2), r.server());
    } finally {
      in2.release();
    }
  }

  @Test
  void nspaceThatIsNotUtf8IsBadParam() {
    byte[] nspace = Hex.fix256("");
    nspace[0] = (byte) 0xff;
    ByteBuf in = Unpooled.wrappedBuffer(Hex.concat(Hex.bytes("00 00 00 00"), nspace, new byte[8]));
    try {
      PmixException e =
          assertThrows(
              PmixException.class, () -> ToolReply.tryDecode(WireBuffer.of(in), false));
      assertEquals(Status.ERR_BAD_PARAM, e.status());
    } finally {
      in.release();
    }
  }

  @Test
  void callerMistakesAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> new ToolReply.StatusOnly(Status.SUCCESS));
    assertThrows(IllegalArgumentException.class, () -> new PeerId("n".repeat(256), 0));
    assertThrows(IllegalArgumentException.class, () -> new PeerId("a\0b", 0));
    assertThrows(NullPointerException.class, () -> new ClientReply(null, 0));
  }
}
