package io.pmix.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.ReqRequest;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Replies reach a client whole and in the order of its requests when it stops reading and the
 * socket fills, on either transport: the server's own (its write queue, flushed when the socket
 * is writable again) and Netty's. A client with a 64 KiB receive buffer (fixed, so the kernel
 * does not grow it) sends 100 REQs at once (each answered with its job's data, ~300 KB here: 30
 * MB in all, far beyond what the socket holds), reads nothing until all are sent, then reads the
 * 100 replies.
 */
@Timeout(60)
class TransportOrderTest {
  private static final int REQUESTS = 100;
  /** The first tag of a client's requests (below it, unsolicited traffic). */
  private static final int FIRST_TAG = 100;
  private PMIxServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void repliesArriveWholeAndInOrderThroughAFullSocket(boolean netty) throws Exception {
    server =
        PMIxServer.init(
            new HostModule() {}, ServerOptions.builder().nettyTransport(netty).build());
    String nspace = "order";
    String big = "x".repeat(300_000);
    Status ns =
        server.registerNspace(
            nspace,
            1,
            List.of(
                Info.of(Keys.JOB_SIZE, Value.uint32(1)), Info.of("order.big", Value.of(big))));
    assertTrue(ns.isSuccess() || ns.equals(Status.OPERATION_SUCCEEDED), ns.toString());
    Status reg = server.registerClient(Proc.of(nspace, 0), Launched.myUid(), Launched.myGid());
    assertTrue(reg.isSuccess() || reg.equals(Status.OPERATION_SUCCEEDED), reg.toString());
    int port = Integer.parseInt(server.uri().substring(server.uri().lastIndexOf(':') + 1));
    try (Socket s = new Socket()) {
      s.setReceiveBufferSize(64 * 1024);
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      assertEquals(0, RawClients.handshake(s, nspace, 0) >>> 32, "the handshake's status");
      s.setSoTimeout(20_000);
      ByteArrayOutputStream requests = new ByteArrayOutputStream();
      for (int tag = FIRST_TAG; tag < FIRST_TAG + REQUESTS; tag++) {
        WireBuffer w = WireBuffer.allocate(64);
        w.writeZero(16);
        ReqRequest.INSTANCE.encode(new PmixWriter(w, WireFormat.DEFAULT));
        w.setInt(4, tag);
        w.setInt(8, w.writerIndex() - 16);
        requests.writeBytes(w.toByteArray());
      }
      s.getOutputStream().write(requests.toByteArray());
      s.getOutputStream().flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      byte[] first = null;
      for (int tag = FIRST_TAG; tag < FIRST_TAG + REQUESTS; tag++) {
        int unusedPindex = in.readInt();
        assertEquals(tag, in.readInt(), "the replies' order");
        int length = in.readInt();
        int unusedPadding = in.readInt();
        byte[] payload = new byte[length];
        in.readFully(payload);
        assertTrue(length > 300_000, "the job data is in the reply: " + length);
        if (first == null) {
          first = payload;
        } else {
          assertArrayEquals(first, payload);
        }
      }
    }
  }
}
