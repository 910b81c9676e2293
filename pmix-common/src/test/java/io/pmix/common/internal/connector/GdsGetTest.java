package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.BufferType;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.GdsModule;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.testing.ScriptedServer;
import io.pmix.common.testing.StateAccounting;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A session reading a shared-memory store ({@link GdsAccess}, {@link GetResolver}) against the
 * scripted server, with a store in memory standing in for the segments (DstoreReaderTest and
 * DstoreReaderIT prove the reader against libpmix's): what the store holds is got without a
 * message, job data included; a miss asks the server and reads the store again after its answer,
 * whichever of libpmix's shapes the answer has (data, nothing, an empty blob); {@code
 * pmix.optional} never asks; a read that fails fails its get; the store is read on the progress
 * thread only when that needs no waiting, else on the reader thread, in the order asked; and the
 * cycle's end closes it, failing a read still waiting with {@code ERR_INIT}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GdsGetTest {
  private static final Role ROLE = new Role("gds-test", "GdsTest");
  private static final String NS = ScriptedServer.CLIENT_NSPACE;
  private static final Proc WILD = Proc.wildcard(NS);
  private static final Proc PEER = Proc.of(NS, 1);

  private ScriptedServer server;
  private ConnectorSession session;
  private TableStore store;
  private boolean shutDown;

  @BeforeEach
  void start() {
    server = new ScriptedServer();
    session = new ConnectorSession(ROLE, WireFormat.DEFAULT, "testhost");
    store = new TableStore("ds21");
    List<Info> pdata =
        List.of(Info.of("pmix.rank", Value.rank(1)), Info.of("pmix.hname", "peerhost"));
    store.put(WILD, "pmix.max.size", Value.uint32(7));
    store.put(WILD, "pmix.pdata", DataArray.of(DataType.INFO, new ArrayList<Value>(pdata)));
    store.put(PEER, "pmix.hname", Value.of("peerhost"));
    store.put(PEER, "peer.key", Value.of("from-the-store"));
  }

  @AfterEach
  void stop() {
    if (!shutDown) {
      session.shutdown();
    }
    server.close();
    assertTrue(store.closed, "the store was not closed at the cycle's end");
    assertTrue(
        session.bookkeeping().values().stream().allMatch(v -> v == 0), () -> session.bookkeeping().toString());
  }

  private void open() {
    Map<String, String> env = server.clientEnvironment(0);
    ConnectRequest req =
        ConnectRequest.builder()
            .security("none", new byte[0])
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(NS, 0)
            .bfropsModule("v41")
            .bufferType(BufferType.NON_DESC.code())
            .gdsModule(store.name())
            .build();
    ConnectPlan plan =
        new ConnectPlan(
            ServerAddress.fromEnvironment(env).orElseThrow(),
            req,
            ReplyLayout.CLIENT,
            1,
            Duration.ofMillis(10));
    session.open(plan, store);
  }

  private Value get(Proc p, String key, Info... directives) {
    return session.await(session.get(p, key, List.of(directives)), "get");
  }

  private long getRequests() {
    return server.requests.stream().filter(r -> r instanceof GetNbRequest).count();
  }

  @Test
  void theModuleIsAnnouncedAndTheJobDataComesFromTheStore() {
    open();
    assertEquals("ds21", server.connects.get(0).gdsModule());
    assertEquals("ds21", session.gdsModule());
    // Only in the store's job-level records, which init read.
    assertEquals(7, get(WILD, "pmix.max.size").asInt());
    // The REQ reply's own job data is there too.
    assertEquals(2, get(WILD, "pmix.job.size").asInt());
    // The pdata array made rank-level data of rank 1: a realm key of that rank resolves.
    assertEquals("peerhost", get(PEER, "pmix.hname").asString());
    assertEquals(0, getRequests(), server.requests::toString);
    StateAccounting.assertAccounted(session);
  }

  @Test
  void aPeersKeyInTheStoreNeedsNoMessage() {
    open();
    assertEquals("from-the-store", get(PEER, "peer.key").asString());
    // Read afresh each time: a new value the server wrote is seen.
    store.put(PEER, "peer.key", Value.of("rewritten"));
    assertEquals("rewritten", get(PEER, "peer.key").asString());
    assertEquals(0, getRequests(), server.requests::toString);
    // A peer's key is read on the calling thread, as libpmix's fast path does.
    assertEquals(Thread.currentThread().getName(), store.readers.get(store.readers.size() - 1));
    assertTrue(
        store.readers.stream()
            .noneMatch(n -> n.equals(ROLE.progressThread()) || n.equals(ROLE.callbackThread())),
        store.readers::toString);
  }

  @Test
  void aGetFromALibraryThreadReadsOnTheReaderThread() throws Exception {
    open();
    // Asked on the progress thread: the store is not read there (a read may wait for the
    // server's lock), but on the reader thread.
    CompletableFuture<Value> nested = new CompletableFuture<>();
    session.execute(
        () -> {
          var unused =
              session
                  .get(PEER, "peer.key", List.of())
                  .whenComplete(
                      (v, e) -> {
                        if (e != null) {
                          nested.completeExceptionally(e);
                        } else {
                          nested.complete(v);
                        }
                      });
        });
    assertEquals("from-the-store", nested.get(10, TimeUnit.SECONDS).asString());
    assertEquals(ROLE.gdsThread(), store.readers.get(store.readers.size() - 1));
  }

  @Test
  void aMissAsksTheServerAndReadsTheStoreAfterAnEmptySuccess() {
    server.rankGets = ScriptedServer.RankGets.EMPTY_SUCCESS;
    missThenServerThenStore();
  }

  @Test
  void aMissAsksTheServerAndReadsTheStoreAfterAnEmptyBlob() {
    server.rankGets = ScriptedServer.RankGets.EMPTY_BLOB;
    missThenServerThenStore();
  }

  /** The server writes the key into the store before it answers, as libpmix's does. */
  private void missThenServerThenStore() {
    open();
    store.onRead =
        (p, key) -> {
          if (key.equals("late.key") && getRequests() > 0) {
            store.put(PEER, "late.key", Value.of("after-the-answer"));
          }
        };
    assertEquals("after-the-answer", get(PEER, "late.key").asString());
    assertEquals(1, getRequests(), server.requests::toString);
  }

  /**
   * A store whose reads need no waiting is read on the progress thread, a get that misses it
   * included (before the server is asked and after its answer), and the reader thread is not
   * used: a get costs no hand-off beyond the ones to the progress thread and back.
   */
  @Test
  void aStoreThatNeedsNoWaitingIsReadOnTheProgressThread() {
    store.free = true;
    server.rankGets = ScriptedServer.RankGets.EMPTY_SUCCESS;
    missThenServerThenStore();
    store.put(WILD, "wild.key", Value.of("job-level, not in the REQ reply"));
    assertEquals("job-level, not in the REQ reply", get(WILD, "wild.key").asString());
    assertTrue(store.readers.contains(ROLE.progressThread()), store.readers::toString);
    assertFalse(store.readers.contains(ROLE.gdsThread()), store.readers::toString);
    StateAccounting.assertAccounted(session);
  }

  /**
   * A read asked while an earlier one is still on the reader thread (it waits for the lock) goes
   * there too, after it, even though the store is free by then: reads are made in the order asked.
   */
  @Test
  void aReadAskedWhileAnotherWaitsOnTheReaderThreadFollowsIt() throws Exception {
    store.free = true;
    open();
    store.put(WILD, "wild.a", Value.of("a"));
    store.put(WILD, "wild.b", Value.of("b"));
    store.busy = true;
    CountDownLatch release = store.holdReads();
    CompletableFuture<Value> a = session.get(WILD, "wild.a", List.of());
    store.awaitReading();
    store.busy = false;
    CompletableFuture<Value> b = session.get(WILD, "wild.b", List.of());
    CompletableFuture<Void> handled = new CompletableFuture<>();
    session.execute(() -> handled.complete(null)); // runs after b's request was handled
    handled.get(10, TimeUnit.SECONDS);
    assertFalse(b.isDone());
    release.countDown();
    assertEquals("a", a.get(10, TimeUnit.SECONDS).asString());
    assertEquals("b", b.get(10, TimeUnit.SECONDS).asString());
    List<String> last = store.readers.subList(store.readers.size() - 2, store.readers.size());
    assertEquals(List.of(ROLE.gdsThread(), ROLE.gdsThread()), last);
  }

  @Test
  void aKeyNobodyHasIsNotFoundAfterTheServer() {
    server.rankGets = ScriptedServer.RankGets.EMPTY_SUCCESS;
    open();
    PmixException e = assertThrows(PmixException.class, () -> get(PEER, "never.put"));
    assertEquals(Status.ERR_NOT_FOUND, e.status());
    assertEquals(1, getRequests(), server.requests::toString);
  }

  @Test
  void optionalNeverAsksTheServer() {
    open();
    assertEquals(
        "from-the-store", get(PEER, "peer.key", Info.of("pmix.optional", true)).asString());
    PmixException e =
        assertThrows(
            PmixException.class, () -> get(PEER, "never.put", Info.of("pmix.optional", true)));
    assertEquals(Status.ERR_NOT_FOUND, e.status());
    assertEquals(0, getRequests(), server.requests::toString);
  }

  @Test
  void aReadThatFailsFailsItsGetAndTheNextOneWorks() {
    open();
    store.failure = new PmixException(Status.ERR_TIMEOUT, "the writer holds the lock");
    PmixException e = assertThrows(PmixException.class, () -> get(PEER, "peer.key"));
    assertEquals(Status.ERR_TIMEOUT, e.status());
    store.failure = null;
    assertEquals("from-the-store", get(PEER, "peer.key").asString());
  }

  @Test
  void aReadWaitingForTheLockDoesNotStopTheProgressThread() throws Exception {
    open();
    // Written after init: only in the store, so it is read there (on the reader thread).
    store.put(WILD, "wild.key", Value.of("job-level, not in the REQ reply"));
    CountDownLatch release = store.holdReads();
    // A job-level key the local store lacks: read on the reader thread, which now waits.
    CompletableFuture<Value> waiting = session.get(WILD, "wild.key", List.of());
    store.awaitReading();
    // Meanwhile the progress thread answers what the local store has.
    assertEquals(2, get(WILD, "pmix.job.size").asInt());
    assertFalse(waiting.isDone());
    release.countDown();
    assertEquals(
        "job-level, not in the REQ reply", waiting.get(10, TimeUnit.SECONDS).asString());
  }

  @Test
  void theCyclesEndFailsAReadStillWaitingAndClosesTheStore() throws Exception {
    open();
    // Written after init: only in the store, so it is read there (on the reader thread).
    store.put(WILD, "wild.key", Value.of("job-level, not in the REQ reply"));
    CountDownLatch release = store.holdReads();
    CompletableFuture<Value> waiting = session.get(WILD, "wild.key", List.of());
    store.awaitReading();
    shutDown = true;
    Thread closer = new Thread(session::shutdown);
    closer.start();
    // The progress thread stops first; the read then finds it gone.
    while (session.bookkeeping().get("session.eventLoopRunning") != 0) {
      Thread.sleep(5);
    }
    release.countDown();
    closer.join(30_000);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
    assertEquals(Status.ERR_INIT, assertInstanceOf(PmixException.class, e.getCause()).status());
    assertTrue(store.closed);
  }

  @Test
  void aModuleOfAnotherNameIsRefusedAndClosed() {
    Map<String, String> env = server.clientEnvironment(0);
    ConnectRequest req =
        ConnectRequest.builder()
            .security("none", new byte[0])
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(NS, 0)
            .gdsModule("hash")
            .build();
    ConnectPlan plan =
        new ConnectPlan(
            ServerAddress.fromEnvironment(env).orElseThrow(),
            req,
            ReplyLayout.CLIENT,
            1,
            Duration.ofMillis(10));
    assertThrows(IllegalArgumentException.class, () -> session.open(plan, store));
    assertTrue(store.closed);
  }

  /** A store in memory with libpmix's answers; reads may be gated or fail. Thread-safe. */
  private static final class TableStore implements GdsModule {
    private final String name;
    private final Map<Proc, Map<String, Value>> data = new LinkedHashMap<>();
    private final List<Info> wildcardRecords = new ArrayList<>();
    final List<String> readers = new java.util.concurrent.CopyOnWriteArrayList<>();
    volatile boolean closed;
    /** Whether {@link #readIfFree} reads (a free store) or declines (the default). */
    volatile boolean free;
    /** While set, {@link #readIfFree} declines, as when another process holds the lock. */
    volatile boolean busy;
    volatile PmixException failure;
    volatile CountDownLatch gate;
    volatile java.util.function.BiConsumer<Proc, String> onRead = (p, k) -> {};
    private volatile CountDownLatch reading = new CountDownLatch(0);

    TableStore(String name) {
      this.name = name;
    }

    synchronized void put(Proc p, String key, Value v) {
      data.computeIfAbsent(p, k -> new LinkedHashMap<>()).put(key, v);
      if (p.rank() == Proc.RANK_WILDCARD) {
        wildcardRecords.add(Info.of(key, v));
      }
    }

    /** Holds every read from now on until the returned latch is released. */
    CountDownLatch holdReads() {
      reading = new CountDownLatch(1);
      CountDownLatch g = new CountDownLatch(1);
      gate = g;
      return g;
    }

    /** Waits until a read is held. */
    void awaitReading() throws InterruptedException {
      assertTrue(reading.await(10, TimeUnit.SECONDS), "no read started");
    }

    private <T> T read(Proc p, String key, Function<Map<String, Value>, T> body) {
      readers.add(Thread.currentThread().getName());
      reading.countDown();
      CountDownLatch g = gate;
      // Held reads stand for a lock another process holds, which readIfFree never waits for.
      if (g != null && !Thread.currentThread().getName().equals(ROLE.progressThread())) {
        try {
          g.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (closed) {
        throw new IllegalStateException("closed");
      }
      PmixException f = failure;
      if (f != null) {
        throw f;
      }
      onRead.accept(p, key);
      synchronized (this) {
        return body.apply(data.get(p));
      }
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Fetched fetch(Proc proc, String key) {
      return read(
          proc,
          key,
          m -> m == null ? new Fetched.NoProc()
              : m.containsKey(key) ? new Fetched.Found(m.get(key)) : new Fetched.NoKey());
    }

    @Override
    public Optional<Map<String, Value>> fetchAll(Proc proc) {
      return read(proc, "", m -> Optional.ofNullable(m).map(LinkedHashMap::new));
    }

    @Override
    public Optional<List<Info>> fetchRecords(Proc proc) {
      return read(
          proc,
          "",
          m -> {
            if (m == null) {
              return Optional.empty();
            }
            if (proc.rank() == Proc.RANK_WILDCARD) {
              return Optional.of(List.copyOf(wildcardRecords));
            }
            List<Info> out = new ArrayList<>();
            m.forEach((k, v) -> out.add(Info.of(k, v)));
            return Optional.of(out);
          });
    }

    @Override
    public boolean readIfFree(java.util.function.Consumer<GdsModule> reads) {
      if (!free || busy) {
        return false;
      }
      reads.accept(this);
      return true;
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
