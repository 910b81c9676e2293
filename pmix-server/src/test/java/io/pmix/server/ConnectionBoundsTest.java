package io.pmix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's global bounds over real sockets (issue #19): connections that have not completed
 * the handshake are capped ({@link ServerOptions.Builder#maxPendingHandshakes}), and the bytes of
 * messages being received by all connections together are budgeted ({@link
 * ServerOptions.Builder#frameBudget}).
 */
class ConnectionBoundsTest {
  /** How long a connection that must stay open is watched for a close. */
  private static final int STAYS_OPEN_MS = 500;

  private PMIxServer server;
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private int port() {
    return Integer.parseInt(server.uri().substring(server.uri().lastIndexOf(':') + 1));
  }

  private Socket open() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), port());
    sockets.add(s);
    return s;
  }

  private void register(String nspace, int n) {
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(nspace, n, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(n)))));
    for (int r = 0; r < n; r++) {
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerClient(Proc.of(nspace, r), Launched.myUid(), Launched.myGid()));
    }
  }

  /** Whether the server closed {@code s} (end of stream or reset) within 10 s. */
  private static boolean closedByServer(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    try {
      return s.getInputStream().read() < 0;
    } catch (java.net.SocketException e) {
      return true;
    }
  }

  /** Fails if the server closes {@code s} within {@link #STAYS_OPEN_MS}. */
  private static void assertStaysOpen(Socket s) throws IOException {
    s.setSoTimeout(STAYS_OPEN_MS);
    assertThrows(SocketTimeoutException.class, () -> s.getInputStream().read(), "closed");
  }

  /** The header of a frame announcing {@code nbytes}, then {@code sent} bytes of its payload. */
  private static void sendPartialFrame(Socket s, int nbytes, int sent) throws IOException {
    byte[] b = new byte[16 + sent];
    b[7] = 0x65; // tag 101
    b[8] = (byte) (nbytes >>> 24);
    b[9] = (byte) (nbytes >>> 16);
    b[10] = (byte) (nbytes >>> 8);
    b[11] = (byte) nbytes;
    s.getOutputStream().write(b);
    s.getOutputStream().flush();
  }

  /**
   * At the cap a newcomer takes the place of the oldest connection that has sent nothing: a full
   * cap of idle sockets does not lock a real connector out (issue #18: it did, a C client's
   * PMIx_Init failed at once), and the count never exceeds the cap.
   */
  @Test
  void atTheCapTheOldestSilentConnectionMakesRoomForANewcomer() throws Exception {
    server =
        PMIxServer.init(
            new HostModule() {},
            ServerOptions.builder().maxPendingHandshakes(3).trustClaimedCredentials(true).build());
    register("cap", 1);
    List<Socket> idle = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      idle.add(open());
    }
    // Accepted in order on one thread: the three idle ones are counted before the next.
    assertEquals(
        0L, RawClients.handshake(open(), "cap", 0) >>> 32, "status (-1: the client was closed)");
    assertEquals(true, closedByServer(idle.get(0)));
    assertStaysOpen(idle.get(1));
    // The client is a peer now, no longer counted: one more fills the cap, the next one pushes
    // out the oldest idle again.
    Socket third = open();
    Socket fourth = open();
    assertEquals(true, closedByServer(idle.get(1)));
    assertStaysOpen(idle.get(2));
    assertStaysOpen(third);
    assertStaysOpen(fourth);
  }

  /**
   * A connection that has sent its whole request awaits its decision (here the host's identity
   * for a tool, never given): it is not pushed out, and when the whole cap awaits decisions a
   * newcomer is closed at once.
   */
  @Test
  void whenEveryCountedConnectionAwaitsItsDecisionTheNewcomerIsClosed(@TempDir Path tmp)
      throws Exception {
    AtomicInteger asked = new AtomicInteger();
    server =
        PMIxServer.init(
            new HostModule() {
              @Override
              public CompletionStage<Proc> toolConnected(List<Info> info) {
                asked.incrementAndGet();
                return new CompletableFuture<>(); // the identity never comes
              }
            },
            ServerOptions.builder()
                .maxPendingHandshakes(2)
                .trustClaimedCredentials(true)
                .toolSupport(true)
                .tmpdir(tmp.resolve("s"))
                .systemTmpdir(tmp)
                .build());
    List<Socket> tools = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Socket t = open();
      ConnectRequest req =
          ConnectRequest.builder()
              .security("native", new NativeCredential(Launched.myUid(), Launched.myGid()).toBytes())
              .kind(ConnectorKind.TOOL_NEEDS_ID)
              .ids(Launched.myUid(), Launched.myGid())
              .version("4.2.2")
              .build();
      ByteBuf b = ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req);
      t.getOutputStream().write(ByteBufUtil.getBytes(b));
      b.release();
      tools.add(t);
    }
    // Both requests are in and held for the host: a newcomer finds no silent one to replace.
    Await.until(asked::get, n -> n == 2, Duration.ofSeconds(20));
    Socket beyond = open();
    assertEquals(true, closedByServer(beyond));
    assertStaysOpen(tools.get(0));
    assertStaysOpen(tools.get(1));
  }

  /**
   * 3,000 idle connections arrive first, each with its socket-owner lookup: a legitimate client
   * behind them is still served at once, its owner checked by the kernel (before, each lookup
   * scanned every TCP socket of the host, one after the other: minutes for this queue).
   */
  @Test
  void aLegitimateClientBehindThousandsOfIdleConnectionsIsServedAtOnce() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    register("behind", 1);
    for (int i = 0; i < 3000; i++) {
      Socket unused = open(); // idle, kept open until the test ends
    }
    long t0 = System.nanoTime();
    long reply = RawClients.handshake(open(), "behind", 0);
    double seconds = (System.nanoTime() - t0) / 1e9;
    System.out.printf("a client behind 3,000 idle connections: served in %.3f s%n", seconds);
    assertEquals(0L, reply >>> 32, "status (-1: closed)");
  }

  @Test
  void aMessageBeyondTheGlobalBudgetDropsItsConnectionAndAFinishedOneGivesItBack()
      throws Exception {
    server =
        PMIxServer.init(
            new HostModule() {},
            ServerOptions.builder().frameBudget(1 << 20).trustClaimedCredentials(true).build());
    register("budget", 3);
    Socket first = open();
    assertEquals(0L, RawClients.handshake(first, "budget", 0) >>> 32);
    Socket second = open();
    assertEquals(0L, RawClients.handshake(second, "budget", 1) >>> 32);
    // The first holds 700 KiB of the 1 MiB budget with a message it sends slowly.
    sendPartialFrame(first, 700 << 10, 1024);
    assertStaysOpen(first);
    // The second's 700 KiB do not fit any more: it is dropped, not buffered.
    sendPartialFrame(second, 700 << 10, 1024);
    assertEquals(true, closedByServer(second));
    assertStaysOpen(first);
    // The first goes in the middle of its message: its share comes back for the third.
    first.close();
    Await.until(
        () -> {
          // The first's close may not be processed yet: a refused attempt is retried.
          try {
            Socket s = open();
            if (RawClients.handshake(s, "budget", 2) == -1L) {
              return false;
            }
            sendPartialFrame(s, 700 << 10, 1024);
            s.setSoTimeout(STAYS_OPEN_MS);
            try {
              return s.getInputStream().read() >= 0;
            } catch (SocketTimeoutException e) {
              return true; // still open: the budget took it
            } catch (java.net.SocketException e) {
              return false;
            }
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        ok -> ok,
        Duration.ofSeconds(20));
  }
}
