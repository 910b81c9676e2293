package io.pmix.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;

/** A C client's first bytes on a plain socket, for tests of the server's connection handling. */
final class RawClients {
  private RawClients() {}

  /** Sends a 4.2.2 client's connect request; the 8-byte reply, or -1 if the server closed. */
  static long handshake(Socket s, String nspace, int rank) throws IOException {
    ConnectRequest req =
        ConnectRequest.builder()
            .security("native", new NativeCredential(Launched.myUid(), Launched.myGid()).toBytes())
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(nspace, rank)
            .version("4.2.2rc2")
            .padPresent(true)
            .build();
    ByteBuf b = ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req);
    byte[] bytes = ByteBufUtil.getBytes(b);
    b.release();
    s.setSoTimeout(10_000);
    try {
      s.getOutputStream().write(bytes);
      return new DataInputStream(s.getInputStream()).readLong();
    } catch (java.io.EOFException | java.net.SocketException e) {
      return -1;
    }
  }
}
