package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.wire.RequestCaptures.Capture;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ConnectRequestCodecTest {

  static List<Capture> captures() {
    return RequestCaptures.all();
  }

  private static byte[] encode(ConnectRequest request) {
    ByteBuf buf = ConnectRequestCodec.encode(UnpooledByteBufAllocator.DEFAULT, request);
    try {
      return ByteBufUtil.getBytes(buf);
    } finally {
      buf.release();
    }
  }

  private static ConnectRequest decodePayload(byte[] payload) {
    ByteBuf buf = Unpooled.wrappedBuffer(payload);
    try {
      ConnectRequest r = ConnectRequestCodec.decodePayload(buf);
      assertFalse(buf.isReadable(), "the whole payload is consumed");
      return r;
    } finally {
      buf.release();
    }
  }

  private static byte[] payloadOf(byte[] message) {
    return Arrays.copyOfRange(message, ConnectRequestCodec.HEADER_LENGTH, message.length);
  }

  @ParameterizedTest
  @MethodSource("captures")
  void encodesTheRecordToTheCapturedBytes(Capture capture) {
    assertEquals(Hex.format(capture.bytes()), Hex.format(encode(capture.request())));
  }

  @ParameterizedTest
  @MethodSource("captures")
  void decodesTheCapturedBytesToTheRecord(Capture capture) {
    assertEquals(capture.request(), decodePayload(payloadOf(capture.bytes())));
  }

  @ParameterizedTest
  @MethodSource("captures")
  void headerLengthIsLittleEndianAndCountsThePayload(Capture capture) {
    ByteBuf buf = Unpooled.wrappedBuffer(capture.bytes());
    try {
      assertEquals(capture.bytes().length - 16, ConnectRequestCodec.peekPayloadLength(buf));
      assertEquals(0xFFFFFFFF, buf.getInt(0), "pindex");
      assertEquals(0xFFFFFFFF, buf.getInt(4), "tag");
      assertEquals(0, buf.getInt(12), "padding");
    } finally {
      buf.release();
    }
  }

  @Test
  void simpleClientFieldsOfCapture11_1() {
    ConnectRequest r = RequestCaptures.DOC_CLIENT.request();
    assertEquals(ConnectorKind.SIMPLE_CLIENT, r.kind());
    assertEquals("testns", r.nspace().orElseThrow());
    assertEquals(0, r.rank().getAsInt());
    assertFalse(r.euid().isPresent());
    assertEquals(new NativeCredential(0x1234, 0x5678), NativeCredential.fromBytes(r.credential()));
    assertTrue(r.padPresent());
    assertEquals(0, r.infoBlobLength());
  }

  static Stream<Arguments> identityBlocks() {
    // docs/transport.md §11.5: the bytes from the flag to the end of the identity block.
    return Stream.of(
        Arguments.of(
            ConnectorKind.TOOL_CLIENT,
            "testns",
            0,
            "05 00 00 12 34 00 00 56 78 \"testns\" 00 00 00 00 00"),
        Arguments.of(ConnectorKind.LAUNCHER_NEEDS_ID, null, 0, "06 00 00 12 34 00 00 56 78"),
        Arguments.of(
            ConnectorKind.LAUNCHER_GIVEN_ID,
            "mylauncher",
            3,
            "07 00 00 12 34 00 00 56 78 \"mylauncher\" 00 00 00 00 03"),
        Arguments.of(
            ConnectorKind.LAUNCHER_CLIENT,
            "testns",
            0,
            "08 00 00 12 34 00 00 56 78 \"testns\" 00 00 00 00 00"),
        Arguments.of(
            ConnectorKind.SINGLETON_CLIENT,
            "singleton.vm.14639",
            0,
            "09 00 00 12 34 00 00 56 78 \"singleton.vm.14639\" 00 00 00 00 00"),
        Arguments.of(ConnectorKind.LEGACY_TOOL, null, 0, "01 00 00 12 34 00 00 56 78"),
        Arguments.of(ConnectorKind.LEGACY_LAUNCHER, null, 0, "02 00 00 12 34 00 00 56 78"));
  }

  @ParameterizedTest
  @MethodSource("identityBlocks")
  void identityBlockOfEachFlag(ConnectorKind kind, String nspace, int rank, String block) {
    ConnectRequest.Builder b =
        ConnectRequest.builder()
            .security("native", RequestCaptures.NATIVE_CREDENTIAL)
            .kind(kind)
            .ids(0x1234, 0x5678);
    if (nspace != null) {
      b.procId(nspace, rank);
    }
    ConnectRequest request = b.build();
    byte[] bytes = encode(request);
    byte[] expected = Hex.bytes(block);
    int flagOffset = 0x23; // after the header, "native", the length and the 8-byte credential
    assertEquals(
        Hex.format(expected),
        Hex.format(Arrays.copyOfRange(bytes, flagOffset, flagOffset + expected.length)));
    assertEquals(request, decodePayload(payloadOf(bytes)));
  }

  @Test
  void javaConnectorSendsNoPad() {
    ConnectRequest request =
        ConnectRequest.builder()
            .security(NativeCredential.MODULE, new NativeCredential(0x1234, 0x5678).toBytes())
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId("testns", 0)
            .build();
    byte[] expected =
        Hex.bytes(
            "ff ff ff ff ff ff ff ff 2f 00 00 00 00 00 00 00\"native\" 00  00 00 00 08  34 12 00 00"
                + " 78 56 00 00  00 \"testns\" 00 00 00 00 00\"4.2.2\" 00 \"v41\" 00 01 \"hash\""
                + " 00");
    assertEquals(Hex.format(expected), Hex.format(encode(request)));
    assertEquals(request, decodePayload(payloadOf(expected)));
  }

  @Test
  void lonePadIsRecognisedAndAnythingElseIsTheBlob() {
    byte[] fields = payloadOf(encode(withBlob(new byte[0], false)));
    assertFalse(decodePayload(fields).padPresent());

    ConnectRequest padded = decodePayload(Hex.concat(fields, Hex.bytes("00")));
    assertTrue(padded.padPresent());
    assertEquals(0, padded.infoBlobLength());

    ConnectRequest twoZeros = decodePayload(Hex.concat(fields, Hex.bytes("00 00")));
    assertFalse(twoZeros.padPresent());
    assertArrayEquals(Hex.bytes("00 00"), twoZeros.infoBlob());

    ConnectRequest oneByte = decodePayload(Hex.concat(fields, Hex.bytes("07")));
    assertFalse(oneByte.padPresent());
    assertArrayEquals(Hex.bytes("07"), oneByte.infoBlob());
  }

  private static ConnectRequest withBlob(byte[] blob, boolean pad) {
    return ConnectRequest.builder()
        .security("none", new byte[0])
        .kind(ConnectorKind.TOOL_NEEDS_ID)
        .ids(1, 2)
        .infoBlob(blob)
        .padPresent(pad)
        .build();
  }

  static Stream<Arguments> malformedPayloads() {
    String cred = "\"native\" 00 00 00 00 08 34 12 00 00 78 56 00 00 ";
    String tail = "\"4.2.2\" 00 \"v41\" 00 01 \"hash\" 00";
    Status pastEnd = Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    return Stream.of(
        Arguments.of("empty payload", "", pastEnd),
        Arguments.of("psec without NUL", "\"native\"", pastEnd),
        Arguments.of("credential length truncated", "\"native\" 00 00 00", pastEnd),
        Arguments.of(
            "credential longer than the payload", "\"native\" 00 00 00 01 00 34 12", pastEnd),
        Arguments.of("credential length 0xFFFFFFFF", "\"native\" 00 ff ff ff ff 00 00", pastEnd),
        Arguments.of("flag missing", cred, pastEnd),
        Arguments.of(
            "flag 10 (5.0 scheduler)",
            cred + "0a 00 00 00 01 00 00 00 01 \"s\" 00 00 00 00 00 " + tail,
            Status.ERR_NOT_SUPPORTED),
        Arguments.of("flag 255", cred + "ff", Status.ERR_NOT_SUPPORTED),
        Arguments.of("identity truncated after euid", cred + "03 00 00 12 34", pastEnd),
        Arguments.of("identity truncated in egid", cred + "04 00 00 12 34 00 00 56", pastEnd),
        Arguments.of("nspace without NUL", cred + "00 \"testns\"", pastEnd),
        Arguments.of("rank truncated", cred + "00 \"testns\" 00 00 00", pastEnd),
        Arguments.of(
            "version without NUL", cred + "00 \"testns\" 00 00 00 00 00 \"4.2.2\"", pastEnd),
        Arguments.of("bfrops missing", cred + "00 \"testns\" 00 00 00 00 00 \"4.2.2\" 00", pastEnd),
        Arguments.of(
            "buffer type missing",
            cred + "00 \"testns\" 00 00 00 00 00 \"4.2.2\" 00 \"v41\" 00",
            pastEnd),
        Arguments.of(
            "gds without NUL",
            cred + "00 \"testns\" 00 00 00 00 00 \"4.2.2\" 00 \"v41\" 00 01 \"hash\"",
            pastEnd),
        Arguments.of(
            "nspace not UTF-8", cred + "00 ff fe 00 00 00 00 00 " + tail, Status.ERR_BAD_PARAM),
        Arguments.of(
            "nspace of 256 bytes",
            cred + "00 " + "61".repeat(256) + " 00 00 00 00 00 " + tail,
            Status.ERR_BAD_PARAM));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedPayloads")
  void malformedPayloadIsAPmixExceptionWithAClearStatus(String what, String hex, Status status) {
    ByteBuf buf = Unpooled.wrappedBuffer(Hex.bytes(hex));
    try {
      PmixException e =
          assertThrows(PmixException.class, () -> ConnectRequestCodec.decodePayload(buf));
      assertEquals(status, e.status(), e.getMessage());
    } finally {
      buf.release();
    }
  }

  @Test
  void nspaceOfExactly255BytesIsAccepted() {
    String ns = "n".repeat(255);
    ConnectRequest r =
        ConnectRequest.builder()
            .security("none", new byte[0])
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(ns, 1)
            .build();
    assertEquals(r, decodePayload(payloadOf(encode(r))));
  }

  @Test
  void textBeyondAsciiIsDecodedAsUtf8() {
    // Most names are ASCII, read without a decoder; the others must still decode, strictly.
    ConnectRequest r =
        ConnectRequest.builder()
            .security("none", new byte[0])
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId("job-é-\u4f5c-\ud83d\ude80", 3)
            .version("4.2.2-ü")
            .build();
    ConnectRequest back = decodePayload(payloadOf(encode(r)));
    assertEquals(r, back);
    assertEquals("job-é-\u4f5c-\ud83d\ude80", back.nspace().orElseThrow());
    assertEquals("4.2.2-ü", back.version());
    // Through the channel decoder too, which reads the payload from an array of its own.
    EmbeddedChannel ch = new EmbeddedChannel(new ConnectRequestDecoder());
    assertTrue(ch.writeInbound(Unpooled.wrappedBuffer(encode(r))));
    assertEquals(r, ch.readInbound());
    assertFalse(ch.finish());
  }

  @Test
  void unsignedValuesSurviveTheRoundTrip() {
    ConnectRequest r =
        ConnectRequest.builder()
            .security("munge", Hex.bytes("\"MUNGE:abc:\" 00"))
            .kind(ConnectorKind.TOOL_GIVEN_ID)
            .ids(0xFFFFFFFE, 0x80000000)
            .procId("ns", 0xFFFFFFFE) // PMIX_RANK_WILDCARD
            .bufferType(ConnectRequest.BUFFER_FULLY_DESC)
            .bfropsModule("v4")
            .version("5.0.11rc1")
            .infoBlob(Hex.bytes("02 00"))
            .build();
    assertEquals(r, decodePayload(payloadOf(encode(r))));
  }
}
