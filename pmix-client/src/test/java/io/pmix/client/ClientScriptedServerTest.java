package io.pmix.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.internal.ClientHolder;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.ConnectorSession;
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.message.Request;
import io.pmix.common.internal.message.UnpublishNbRequest;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.testing.ScriptedServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The connected client against the scripted server, without libpmix: the handshake and the
 * requests as the server decodes them, the client's slot index in every frame, the loss of the
 * server (pending work fails, a handler hears of it) and the fail-fast rule for blocking calls
 * from callbacks.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientScriptedServerTest {
  private ScriptedServer server;

  @BeforeEach
  void start() {
    server = new ScriptedServer();
  }

  @AfterEach
  void stop() {
    while (ClientHolder.refCount() > 0) {
      PMIx.finalize();
    }
    server.close();
    TeardownChecks.assertNothingRemains();
  }

  private <T extends Request> T last(Class<T> type) {
    for (int i = server.requests.size() - 1; i >= 0; i--) {
      if (type.isInstance(server.requests.get(i))) {
        return type.cast(server.requests.get(i));
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + server.requests);
  }

  @Test
  void handshakeAndRequestsAsTheServerDecodesThem() {
    var unused = ClientHolder.init(server.clientEnvironment(1), List.of());
    assertEquals(ConnectorKind.SIMPLE_CLIENT, server.connects.get(0).kind());
    assertEquals(ReqRequest.INSTANCE, server.requests.get(0));
    PMIx.put(Scope.LOCAL, "l.key", Value.of("l"));
    PMIx.put(Scope.REMOTE, "r.key", Value.of("r"));
    PMIx.commit();
    CommitRequest c = last(CommitRequest.class);
    assertEquals(2, c.sections().size());
    assertEquals("l.key", c.sections().get(0).kvals().get(0).key());
    assertEquals("r.key", c.sections().get(1).kvals().get(0).key());
    PMIx.fence();
    assertEquals(
        List.of(Proc.wildcard(ScriptedServer.CLIENT_NSPACE)), last(FenceNbRequest.class).procs());
    PMIx.publish(Info.of("svc", "x"));
    assertEquals("x", PMIx.lookup(List.of("svc")).get(0).value().asString());
    assertEquals(List.of("svc"), last(LookupNbRequest.class).keys());
    PMIx.unpublish(List.of());
    assertEquals(List.of(), last(UnpublishNbRequest.class).keys());
    PmixException none =
        assertThrows(PmixException.class, () -> PMIx.lookup(List.of("svc")));
    assertEquals(Status.ERR_NOT_FOUND, none.status());
    PMIx.finalize();
    // The first client's slot is 0: every frame carries it; FINALIZE is the last.
    assertTrue(server.frames.stream().allMatch(f -> f.pindex() == 0), server.frames::toString);
    assertEquals(Command.FINALIZE.code(), server.commands().get(server.commands().size() - 1));
  }

  /**
   * Replies of every size arrive whole: the connection reads in chunks that start small and grow,
   * so a reply of several hundred KiB is read over many reads, and small ones follow it.
   */
  @Test
  void repliesLargerThanEveryReadChunkArriveWhole() {
    var unused = ClientHolder.init(server.clientEnvironment(1), List.of());
    Random random = new Random(42);
    for (int size : new int[] {10, 8 * 1024 - 40, 8 * 1024, 70_000, 300_000, 20}) {
      byte[] value = new byte[size];
      random.nextBytes(value);
      String key = "big." + size;
      PMIx.publish(Info.of(key, Value.of(value)));
      assertArrayEquals(value, PMIx.lookup(List.of(key)).get(0).value().asBytes(), key);
    }
    PMIx.fence();
    PMIx.finalize();
  }

  /**
   * A fence like the last one goes out with the same request (its bytes are reused), and one with
   * other participants or directives with exactly those: the server decodes what each asked.
   */
  @Test
  void eachFenceSendsItsOwnParticipantsAndDirectives() {
    var unused = ClientHolder.init(server.clientEnvironment(1), List.of());
    String ns = ScriptedServer.CLIENT_NSPACE;
    Info collect = Info.of(Keys.COLLECT_DATA.name(), true);
    List<FenceNbRequest> expected =
        List.of(
            new FenceNbRequest(List.of(Proc.wildcard(ns)), List.of()),
            new FenceNbRequest(List.of(Proc.wildcard(ns)), List.of()),
            new FenceNbRequest(List.of(Proc.wildcard(ns)), List.of(collect)),
            new FenceNbRequest(List.of(Proc.wildcard(ns)), List.of(collect)),
            new FenceNbRequest(List.of(Proc.of(ns, 0), Proc.of(ns, 1)), List.of(collect)),
            new FenceNbRequest(List.of(Proc.wildcard(ns)), List.of()));
    for (FenceNbRequest f : expected) {
      PMIx.fence(f.procs(), f.directives().toArray(new Info[0]));
    }
    List<FenceNbRequest> sent = new ArrayList<>();
    for (Request r : server.requests) {
      if (r instanceof FenceNbRequest f) {
        sent.add(f);
      }
    }
    assertEquals(expected.size(), sent.size(), sent::toString);
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i).procs(), sent.get(i).procs(), "fence " + i);
      assertEquals(expected.get(i).directives(), sent.get(i).directives(), "fence " + i);
    }
    PMIx.finalize();
  }

  @Test
  void losingTheServerFailsPendingWorkAndRaisesAnEvent() throws Exception {
    var unused = ClientHolder.init(server.clientEnvironment(0), List.of());
    CompletableFuture<Event> lost = new CompletableFuture<>();
    PMIx.registerEventHandler(List.of(Status.ERR_LOST_CONNECTION), lost::complete);
    server.dropConnections();
    assertEquals(Status.ERR_LOST_CONNECTION, lost.get(10, TimeUnit.SECONDS).status());
    ExecutionException x =
        assertThrows(ExecutionException.class, () -> PMIx.fenceAsync(List.of()).get(10, TimeUnit.SECONDS));
    PmixException p = assertInstanceOf(PmixException.class, x.getCause());
    assertEquals(Status.ERR_LOST_CONNECTION, p.status());
  }

  /**
   * A last finalize the server fails, or meets by closing the connection, still returns and ends
   * every thread and resource of the cycle (the teardown's checks), the FINALIZE sent each time;
   * and a new cycle then starts as usual.
   */
  @Test
  void aLastFinalizeTheServerFailsOrDropsStillEndsTheCycle() {
    // Nothing to warn about either: the teardown has nothing left to close.
    Logger log = Logger.getLogger(ConnectorSession.class.getName());
    List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    Handler h =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
              warnings.add(r);
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    log.addHandler(h);
    try {
      for (int i = 0; i < 10; i++) {
        server.finalizeAnswer = Optional.of(Status.ERR_BAD_PARAM);
        var unused = ClientHolder.init(server.clientEnvironment(0), List.of());
        PMIx.finalize();
        TeardownChecks.assertNothingRemains();
        server.finalizeAnswer = Optional.empty();
        unused = ClientHolder.init(server.clientEnvironment(0), List.of());
        PMIx.fence();
        PMIx.finalize();
        TeardownChecks.assertNothingRemains();
      }
    } finally {
      log.removeHandler(h);
    }
    assertEquals(
        20,
        server.frames.stream().filter(r -> r.command() == Command.FINALIZE.code()).count(),
        server.frames.toString());
    assertEquals(List.of(), warnings.stream().map(LogRecord::getMessage).toList());
    server.finalizeAnswer = Optional.of(Status.SUCCESS);
    var unused = ClientHolder.init(server.clientEnvironment(0), List.of());
    PMIx.fence();
  }

  @Test
  void blockingCallsFromCallbacksFailFast() throws Exception {
    var unused = ClientHolder.init(server.clientEnvironment(0), List.of());
    CompletableFuture<Throwable> inHandler = new CompletableFuture<>();
    PMIx.registerEventHandler(
            List.of(Status.of(-4243)),
            e -> {
              try {
                PMIx.fence();
                inHandler.complete(new AssertionError("no exception"));
              } catch (RuntimeException ex) {
                inHandler.complete(ex);
              }
            });
    PMIx.notifyEvent(Status.of(-4243), DataRange.PROC_LOCAL);
    assertInstanceOf(IllegalStateException.class, inHandler.get(10, TimeUnit.SECONDS));
  }
}
