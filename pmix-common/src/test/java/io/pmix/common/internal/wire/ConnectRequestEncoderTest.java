package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.internal.wire.RequestCaptures.Capture;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ConnectRequestEncoderTest {

  static List<Capture> captures() {
    return RequestCaptures.all();
  }

  @ParameterizedTest
  @MethodSource("captures")
  void writesTheCapturedBytesInOneBuffer(Capture capture) {
    EmbeddedChannel ch = new EmbeddedChannel(ConnectRequestEncoder.INSTANCE);
    assertTrue(ch.writeOutbound(capture.request()));
    ByteBuf out = ch.readOutbound();
    try {
      assertEquals(Hex.format(capture.bytes()), Hex.format(ByteBufUtil.getBytes(out)));
    } finally {
      out.release();
    }
    assertFalse(ch.finish());
  }

  @Test
  void connectorAndServerRoundTrip() {
    ConnectRequest request =
        ConnectRequest.builder()
            .security(NativeCredential.MODULE, new NativeCredential(4660, 22136).toBytes())
            .kind(ConnectorKind.SINGLETON_CLIENT)
            .ids(4660, 22136)
            .procId("singleton.vm.1", 0)
            .infoBlob(Hex.bytes("02 00"))
            .build();
    EmbeddedChannel connector = new EmbeddedChannel(ConnectRequestEncoder.INSTANCE);
    assertTrue(connector.writeOutbound(request));
    ByteBuf wire = connector.readOutbound();
    EmbeddedChannel server = new EmbeddedChannel(new ConnectRequestDecoder());
    assertTrue(server.writeInbound(wire));
    assertEquals(request, server.readInbound());
    assertFalse(connector.finish());
    assertFalse(server.finish());
  }
}
