package io.pmix.dataserver;

import static io.pmix.dataserver.Futures.eventually;
import static io.pmix.dataserver.Futures.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Retention;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A real DataServer on loopback, reached by DataServerClients over TCP. */
class DataServerTest {
  private static final Identity ALICE = Identity.of(Proc.of("jobA", 0), 1000, 100);
  private static final Info WAIT = Info.of(Keys.WAIT, Value.of(0));

  private final List<AutoCloseable> resources = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  private DataServer server(DataStoreOptions options) throws IOException {
    DataServer s = DataServer.builder().storeOptions(options).start();
    resources.add(s);
    return s;
  }

  private DataServer server() throws IOException {
    return server(DataStoreOptions.defaults());
  }

  private DataServerClient client(DataServer s) {
    return client(DataServerClient.builder("127.0.0.1", s.port()));
  }

  private DataServerClient client(DataServerClient.Builder b) {
    DataServerClient c = b.build();
    resources.add(c);
    return c;
  }

  private static Identity alice(String nspace, int rank) {
    return ALICE.withProc(Proc.of(nspace, rank));
  }

  @Test
  void publishLookupUnpublishOverTcp() throws IOException {
    DataServer s = server();
    DataServerClient c = client(s);
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("svc", "port1")))));
    LookupResult r = get(c.lookup(alice("jobB", 0), List.of("svc"), List.of()));
    assertEquals(Status.SUCCESS, r.status());
    assertEquals(List.of(new Value.PData(ALICE.proc(), "svc", Value.of("port1"))), r.data());
    assertEquals(Status.ERR_DUPLICATE_KEY, get(c.publish(ALICE, List.of(Info.of("svc", "x")))));
    assertEquals(Status.SUCCESS, get(c.unpublish(ALICE, List.of("svc"), List.of())));
    assertEquals(Status.ERR_NOT_FOUND, get(c.lookup(ALICE, List.of("svc"), List.of())).status());
  }

  @Test
  void serversOnManyNodesShareOneStore() throws IOException {
    DataServer s = server();
    DataServerClient node1 = client(DataServerClient.builder("127.0.0.1", s.port()).name("node1"));
    DataServerClient node2 = client(DataServerClient.builder("127.0.0.1", s.port()).name("node2"));
    CompletableFuture<LookupResult> waiting =
        node2.lookup(alice("client", 0).withNode("node2"), List.of("svc"), List.of(WAIT))
            .toCompletableFuture();
    eventually("the lookup waits at the server", () -> get(s.inspect(DataStore::pendingLookupCount)) == 1);
    assertFalse(waiting.isDone());
    assertEquals(
        Status.SUCCESS,
        get(node1.publish(alice("server", 0).withNode("node1"), List.of(Info.of("svc", "p")))));
    LookupResult r = get(waiting);
    assertEquals(Status.SUCCESS, r.status());
    assertEquals("p", r.data().get(0).value().asString());
  }

  @Test
  void lifetimesReportedByAnyServerApply() throws IOException {
    DataServer s = server();
    DataServerClient c = client(s);
    Info proc = Info.of(Keys.PERSISTENCE, Value.unsigned(io.pmix.common.DataType.PERSIST, Retention.PROC.code()));
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("p", "v"), proc))));
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("n", "v")))));
    assertEquals(Status.SUCCESS, get(c.procEnded(ALICE.proc())));
    assertEquals(1, get(s.inspect(DataStore::itemCount)));
    assertEquals(Status.SUCCESS, get(c.appEnded("jobA", 0)));
    assertEquals(Status.SUCCESS, get(c.namespaceEnded("jobA")));
    assertEquals(0, get(s.inspect(DataStore::itemCount)));
    assertEquals(Status.SUCCESS, get(c.sessionEnded(Identity.UNKNOWN)));
  }

  @Test
  void aClientThatLeavesHasItsWaitingLookupsCancelled() throws IOException {
    DataServer s = server();
    DataServerClient leaver = DataServerClient.builder("127.0.0.1", s.port()).build();
    CompletableFuture<LookupResult> w =
        leaver.lookup(ALICE, List.of("never"), List.of(WAIT)).toCompletableFuture();
    eventually("waiting", () -> get(s.inspect(DataStore::pendingLookupCount)) == 1);
    leaver.close();
    assertEquals(Status.ERR_NOT_AVAILABLE, get(w).status());
    eventually("cancelled at the server", () -> get(s.inspect(DataStore::pendingLookupCount)) == 0);
    // And the server serves on.
    assertEquals(Status.SUCCESS, get(client(s).publish(ALICE, List.of(Info.of("after", "v")))));
  }

  @Test
  void cancellingALookupsStageCancelsItAtTheServer() throws IOException {
    DataServer s = server();
    DataServerClient c = client(s);
    CompletableFuture<LookupResult> w =
        c.lookup(ALICE, List.of("never"), List.of(WAIT)).toCompletableFuture();
    eventually("waiting", () -> get(s.inspect(DataStore::pendingLookupCount)) == 1);
    assertTrue(w.cancel(false));
    eventually("cancelled at the server", () -> get(s.inspect(DataStore::pendingLookupCount)) == 0);
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("never", "v")))));
  }

  @Test
  void aWaitingLookupTimesOutAtTheServer() throws IOException {
    DataServer s = server();
    DataServerClient c = client(s);
    LookupResult r =
        get(c.lookup(ALICE, List.of("never"), List.of(WAIT, Info.of(Keys.TIMEOUT, Value.of(1)))));
    assertEquals(Status.ERR_TIMEOUT, r.status());
  }

  @Test
  void theServersTimerExpiresIdleItemsWithoutFurtherRequests() throws IOException {
    DataServer s = server(DataStoreOptions.builder().idleTimeout(Duration.ofMillis(200)).build());
    DataServerClient c = client(s);
    Info indef = Info.of(Keys.PERSISTENCE, Value.unsigned(io.pmix.common.DataType.PERSIST, Retention.INDEF.code()));
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("i", "v"), indef))));
    eventually("expired", () -> get(s.inspect(DataStore::itemCount)) == 0);
  }

  @Test
  void garbageFromOneConnectionDoesNotDisturbTheOthers() throws IOException {
    DataServer s = server(DataStoreOptions.defaults());
    DataServerClient good = client(s);
    assertEquals(Status.SUCCESS, get(good.publish(ALICE, List.of(Info.of("k", "v")))));
    for (byte[] garbage :
        List.of(
            new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
            new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0, 0, 0, 0})) {
      try (Socket raw = new Socket(java.net.InetAddress.getLoopbackAddress(), s.port())) {
        raw.setSoTimeout((int) (20_000 * Futures.SCALE));
        OutputStream out = raw.getOutputStream();
        out.write(garbage);
        out.flush();
        InputStream in = raw.getInputStream();
        // The server answers with a status or closes; either way it does not hang or crash.
        while (in.read() >= 0) {
          // drain until closed
        }
      }
    }
    LookupResult r = get(good.lookup(ALICE, List.of("k"), List.of()));
    assertEquals(Status.SUCCESS, r.status());
  }

  @Test
  void anUnreachableServerIsAnErrorNotAHang() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    // Nothing listens there now.
    DataServerClient c =
        client(
            DataServerClient.builder("127.0.0.1", port)
                .connectTimeout(Duration.ofMillis(500))
                .retryDelay(Duration.ofMillis(50), Duration.ofMillis(100)));
    assertEquals(Status.ERR_UNREACH, get(c.publish(ALICE, List.of(Info.of("k", "v")))));
    assertEquals(Status.ERR_UNREACH, get(c.lookup(ALICE, List.of("k"), List.of())).status());
  }

  @Test
  void aServerThatNeverAnswersIsAnErrorNotAHang() throws IOException {
    try (ServerSocket mute = new ServerSocket(0)) {
      DataServerClient c =
          client(
              DataServerClient.builder("127.0.0.1", mute.getLocalPort())
                  .connectTimeout(Duration.ofMillis(800))
                  .requestTimeout(Duration.ofMillis(300))
                  .retryDelay(Duration.ofMillis(50), Duration.ofMillis(100)));
      Status s = get(c.publish(ALICE, List.of(Info.of("k", "v"))));
      assertTrue(Set.of(Status.ERR_UNREACH, Status.ERR_TIMEOUT).contains(s), s.toString());
    }
  }

  @Test
  void aLostConnectionIsRetriedForLaterRequests() throws IOException, InterruptedException {
    DataServer first = server();
    int port = first.port();
    DataServerClient c =
        client(
            DataServerClient.builder("127.0.0.1", port)
                .connectTimeout(Duration.ofSeconds(10))
                .retryDelay(Duration.ofMillis(20), Duration.ofMillis(200)));
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("k", "v")))));
    CompletableFuture<LookupResult> inFlight =
        c.lookup(ALICE, List.of("never"), List.of(WAIT)).toCompletableFuture();
    eventually("waiting", () -> get(first.inspect(DataStore::pendingLookupCount)) == 1);
    first.close();
    // What was in flight is not resent: it ends with an error status.
    Status lost = get(inFlight).status();
    assertTrue(
        Set.of(Status.ERR_LOST_CONNECTION, Status.ERR_NOT_AVAILABLE).contains(lost), lost.toString());
    // A new server on the same port (SO_REUSEADDR): the client connects again by itself.
    DataServer again = DataServer.builder().port(port).start();
    resources.add(again);
    Status published = get(c.publish(ALICE, List.of(Info.of("k", "v2"))));
    if (lost.equals(Status.ERR_NOT_AVAILABLE) && published.equals(Status.ERR_LOST_CONNECTION)) {
      // The closing server answered the lookup before it closed the connection, and this publish
      // went out on that connection before the client saw it close: in flight when it was lost,
      // so failed, not resent (the rule above). Seen under load in CI; the next one reconnects.
      published = get(c.publish(ALICE, List.of(Info.of("k", "v2"))));
    }
    assertEquals(Status.SUCCESS, published);
    assertEquals(1, get(again.inspect(DataStore::itemCount)));
  }

  @Test
  void closedClientsAndServersAnswerNotAvailable() throws IOException, InterruptedException {
    DataServer s = server();
    DataServerClient c = DataServerClient.builder("127.0.0.1", s.port()).build();
    c.close();
    assertEquals(Status.ERR_NOT_AVAILABLE, get(c.publish(ALICE, List.of(Info.of("k", "v")))));
    s.shutdown();
    assertTrue(s.awaitTermination(Duration.ofSeconds(20)));
    assertTrue(s.isShutdown());
    assertTrue(s.isTerminated());
  }

  @Test
  void hostAndPortAsPmixrunTakesIt() throws IOException {
    DataServer s = server();
    DataServerClient c = client(DataServerClient.builder("127.0.0.1:" + s.port()));
    assertEquals(s.port(), c.address().getPort());
    assertEquals(Status.SUCCESS, get(c.publish(ALICE, List.of(Info.of("k", "v")))));
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> DataServerClient.builder("no-port"));
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> DataServerClient.builder("host:x"));
  }
}
