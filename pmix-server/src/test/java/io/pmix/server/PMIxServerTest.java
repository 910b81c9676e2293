package io.pmix.server;

import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.Set;
import java.util.HashSet;
import java.nio.file.Path;
import java.nio.file.Files;
import java.nio.file.DirectoryStream;
import java.io.IOException;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.io.DataInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The public API over real sockets: life cycle, register-nspace semantics, setup-fork, security. */
class PMIxServerTest {
  private PMIxServer server;

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.close();
    }
  }

  private static List<Info> job(int n) {
    return List.of(Info.of(Keys.JOB_SIZE, Value.uint32(n)));
  }

  @Test
  void registerNspaceBeforeStartIsErrInit() throws Exception {
    server = PMIxServer.create(new HostModule() {}, ServerOptions.defaults());
    assertEquals(Status.ERR_INIT, server.registerNspace("a", 1, job(1)));
    assertEquals(
        Status.ERR_INIT,
        server.registerNspaceAsync("a", 1, job(1)).toCompletableFuture().get(5, TimeUnit.SECONDS));
    assertEquals(Status.ERR_INIT, server.registerClient(Proc.of("a", 0), 0, 0));
  }

  @Test
  void registerNspaceBlockingAndAsync() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("a", 2, job(2)));
    Status async =
        server.registerNspaceAsync("b", 1, job(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertEquals(Status.SUCCESS, async);
    // The stage is completed by the progress thread: a continuation attached before completion
    // runs there (one attached after runs on the attaching thread, as CompletableFuture does).
    assertTrue(onProgressThread().getName().startsWith("pmix-progress"));
    ServerSnapshot s = server.snapshot();
    assertEquals(2, s.namespace("a").orElseThrow().nlocalprocs());
    assertTrue(s.namespace("b").orElseThrow().registered());
    // A malformed registration is refused with the reason.
    assertEquals(
        Status.ERR_BAD_PARAM,
        server.registerNspace(
            "c", 1, List.of(Info.of(Keys.NODE_MAP, Value.of("x,y")), Info.of(Keys.PROC_MAP, Value.of("0")))));
  }

  @Test
  void deregisterClientBlockingAndAsync() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("d", 3, job(3)));
    for (int r = 0; r < 3; r++) {
      assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of("d", r), 1, 1));
    }
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterClient(Proc.of("d", 0)));
    assertEquals(
        Status.SUCCESS,
        server.deregisterClientAsync(Proc.of("d", 1)).toCompletableFuture().get(5, TimeUnit.SECONDS));
    // Gone for good: a second deregistration, or one of a rank never registered, finds nothing.
    for (int r : new int[] {0, 1, 7}) {
      assertEquals(
          Status.ERR_NOT_FOUND,
          server.deregisterClientAsync(Proc.of("d", r)).toCompletableFuture().get(5, TimeUnit.SECONDS));
    }
    // The two deregistered ranks no longer count among the local processes.
    assertEquals(1, server.snapshot().namespace("d").orElseThrow().nlocalprocs());
    server.close();
    assertEquals(
        Status.ERR_NOT_AVAILABLE,
        server.deregisterClientAsync(Proc.of("d", 2)).toCompletableFuture().get(5, TimeUnit.SECONDS));
  }

  /** Runs a continuation that lands on the progress thread; returns that thread. */
  private Thread onProgressThread() throws Exception {
    for (int attempt = 0; attempt < 1000; attempt++) {
      AtomicReference<Thread> t = new AtomicReference<>();
      server
          .registerNspaceAsync("probe", 1, job(1))
          .thenRun(() -> t.set(Thread.currentThread()))
          .toCompletableFuture()
          .get(5, TimeUnit.SECONDS);
      if (t.get() != Thread.currentThread()) {
        return t.get();
      }
    }
    throw new AssertionError("no continuation ever ran on the progress thread");
  }

  @Test
  void blockingCallOnTheProgressThreadIsRefused() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    for (int attempt = 0; attempt < 1000; attempt++) {
      AtomicReference<Thread> ranOn = new AtomicReference<>();
      CompletableFuture<Status> nested =
          server
              .registerNspaceAsync("a", 1, job(1))
              .thenApply(
                  s -> {
                    ranOn.set(Thread.currentThread());
                    return server.registerNspace("b", 1, job(1));
                  })
              .toCompletableFuture();
      try {
        Status unused = nested.join();
        assertEquals(Thread.currentThread(), ranOn.get(), "ran on the progress thread yet blocked");
      } catch (CompletionException e) {
        assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
        assertTrue(ranOn.get().getName().startsWith("pmix-progress"));
        return;
      }
    }
    throw new AssertionError("no continuation ever ran on the progress thread");
  }

  @Test
  void theProgressExecutorIsTheProgressThreadLentNotGiven() throws Exception {
    server = PMIxServer.create(new HostModule() {}, ServerOptions.defaults());
    assertThrows(IllegalStateException.class, server::progressExecutor);
    server.start();
    ScheduledExecutorService lent = server.progressExecutor();
    // The same thread as the server's own continuations, for tasks and for timers.
    Thread own = onProgressThread();
    assertTrue(own.getName().startsWith("pmix-progress"), own.getName());
    assertEquals(own, lent.submit(Thread::currentThread).get(5, TimeUnit.SECONDS));
    assertEquals(
        own,
        lent.schedule(Thread::currentThread, 1, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS));
    assertThrows(UnsupportedOperationException.class, lent::shutdown);
    assertThrows(UnsupportedOperationException.class, lent::shutdownNow);
    assertFalse(lent.isShutdown());
    // Refusing a shutdown left the server serving.
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("b", 1, job(1)));
    server.close();
    assertTrue(lent.isTerminated());
    assertThrows(RejectedExecutionException.class, () -> lent.execute(() -> {}));
  }

  @Test
  void afterShutdownEverythingIsNotAvailable() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    server.close();
    assertTrue(server.isShutdown());
    assertTrue(server.isTerminated());
    assertEquals(Status.ERR_NOT_AVAILABLE, server.registerNspace("a", 1, job(1)));
    assertEquals(
        Status.ERR_NOT_AVAILABLE,
        server.registerNspaceAsync("a", 1, job(1)).toCompletableFuture().get(5, TimeUnit.SECONDS));
    assertThrows(IllegalStateException.class, () -> server.setupFork(Proc.of("a", 0)));
    server.close(); // idempotent
  }

  @Test
  void shutdownClosesConnectionsAndTheListener() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    int port = port(server);
    Socket idle = new Socket(InetAddress.getLoopbackAddress(), port);
    server.close();
    idle.setSoTimeout(5000);
    int b;
    try {
      b = idle.getInputStream().read();
    } catch (java.net.SocketException e) {
      b = -1; // reset: a connection still in the accept queue when the listener closed
    }
    assertEquals(-1, b);
    idle.close();
    assertThrows(java.io.IOException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close());
  }

  /**
   * A server that served a client and held an idle connection leaves none of its descriptors
   * open once closed (the listener, the connections, epoll and its eventfd, the stores' files):
   * every descriptor open afterwards was open before. A first server runs the same way before
   * the count: what the JDK opens once per process on first use (Netty's first channel reads
   * /dev/random through {@code SecureRandom}) is not a server's.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aClosedServerLeavesNoDescriptorOpen(boolean netty) throws Exception {
    serveOneClientAndClose(netty, "fds0");
    Set<String> before = openDescriptors();
    serveOneClientAndClose(netty, "fds1");
    Set<String> after = openDescriptors();
    after.removeAll(before);
    assertTrue(after.isEmpty(), "left open: " + after);
  }

  private void serveOneClientAndClose(boolean netty, String nspace) throws Exception {
    server =
        PMIxServer.init(new HostModule() {}, ServerOptions.builder().nettyTransport(netty).build());
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(nspace, 1, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(1)))));
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerClient(Proc.of(nspace, 0), Launched.myUid(), Launched.myGid()));
    try (Socket client = new Socket(InetAddress.getLoopbackAddress(), port(server));
        Socket idle = new Socket(InetAddress.getLoopbackAddress(), port(server))) {
      assertEquals(0, RawClients.handshake(client, nspace, 0) >>> 32);
      server.close();
    }
  }

  /** This process's open descriptors, as "number -> target". */
  private static Set<String> openDescriptors() throws IOException {
    Set<String> out = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path fd : fds) {
        try {
          Path target = Files.readSymbolicLink(fd);
          if (!target.endsWith("fd")) { // not the listing's own descriptor
            out.add(fd.getFileName() + " -> " + target);
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    return out;
  }

  @Test
  void uriAndSetupForkFollowTheFourTwoTwoConventions() {
    server =
        PMIxServer.init(
            new HostModule() {},
            ServerOptions.builder().serverNspace("javasrv").serverRank(77).hostname("node7").build());
    assertTrue(server.uri().matches("javasrv\\.77;tcp4://127\\.0\\.0\\.1:\\d+"), server.uri());
    Map<String, String> env = server.setupFork(Proc.of("job", 3));
    assertEquals(
        List.of(
            "PMIX_NAMESPACE", "PMIX_RANK", "PMIX_SERVER_URI41", "PMIX_SERVER_URI4",
            "PMIX_SERVER_URI3", "PMIX_SERVER_URI2", "PMIX_SERVER_URI21", "PMIX_SECURITY_MODE",
            "PMIX_BFROP_BUFFER_TYPE", "PMIX_GDS_MODULE", "PMIX_DSTORE_21_BASE_PATH",
            "PMIX_DSTORE_ESH_BASE_PATH", "PMIX_SERVER_TMPDIR",
            "PMIX_SYSTEM_TMPDIR", "PMIX_HOSTNAME", "PMIX_VERSION"),
        List.copyOf(env.keySet()));
    assertEquals("job", env.get("PMIX_NAMESPACE"));
    assertEquals("3", env.get("PMIX_RANK"));
    assertEquals(server.uri(), env.get("PMIX_SERVER_URI41"));
    assertEquals("native", env.get("PMIX_SECURITY_MODE"));
    assertEquals("PMIX_BFROP_BUFFER_NON_DESC", env.get("PMIX_BFROP_BUFFER_TYPE"));
    assertEquals("ds21,ds12,hash", env.get("PMIX_GDS_MODULE"));
    assertEquals(server.gdsDirectories().get(0).toString(), env.get("PMIX_DSTORE_21_BASE_PATH"));
    assertEquals(server.gdsDirectories().get(1).toString(), env.get("PMIX_DSTORE_ESH_BASE_PATH"));
    assertEquals("node7", env.get("PMIX_HOSTNAME"));
    assertEquals("4.2.2", env.get("PMIX_VERSION"));
    // Serving hash only (the stores off), no store is exported.
    try (PMIxServer hashOnly =
        PMIxServer.init(new HostModule() {}, ServerOptions.builder().gds("hash").build())) {
      Map<String, String> h = hashOnly.setupFork(Proc.of("job", 3));
      assertEquals("hash", h.get("PMIX_GDS_MODULE"));
      assertFalse(h.containsKey("PMIX_DSTORE_21_BASE_PATH"));
      assertFalse(h.containsKey("PMIX_DSTORE_ESH_BASE_PATH"));
    }
  }

  /**
   * A launcher calls setupFork once per process while the progress thread serves the processes
   * started before: it answers without waiting for that thread while every rank registered so
   * far can read the stores (then the answer is the same for all).
   */
  @Test
  void setupForkDoesNotWaitForABusyProgressThread() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("f", 2, job(2)));
    int me = Launched.myUid();
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of("f", 0), me, me));
    java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    server
        .progressExecutor()
        .execute(
            () -> {
              busy.countDown();
              try {
                release.await(); // a test holding the thread on purpose
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    try {
      assertTrue(busy.await(10, TimeUnit.SECONDS));
      CompletableFuture<Map<String, String>> env =
          CompletableFuture.supplyAsync(() -> server.setupFork(Proc.of("f", 0)));
      assertEquals("ds21,ds12,hash", env.get(10, TimeUnit.SECONDS).get("PMIX_GDS_MODULE"));
      assertEquals("1", CompletableFuture.supplyAsync(() -> server.setupFork(Proc.of("f", 1)))
          .get(10, TimeUnit.SECONDS).get("PMIX_RANK"));
    } finally {
      release.countDown();
    }
  }

  private static int port(PMIxServer s) {
    return Integer.parseInt(s.uri().substring(s.uri().lastIndexOf(':') + 1));
  }

  /** Connects with a native credential claiming {@code uid}; returns the reply or -1 on close. */
  private static long handshake(int port, String nspace, int uid, int gid) throws Exception {
    ConnectRequest req =
        ConnectRequest.builder()
            .security("native", new NativeCredential(uid, gid).toBytes())
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(nspace, 0)
            .build();
    ByteBuf b = ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req);
    byte[] bytes = ByteBufUtil.getBytes(b);
    b.release();
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(5000);
      s.getOutputStream().write(bytes);
      InputStream in = s.getInputStream();
      DataInputStream d = new DataInputStream(in);
      try {
        return d.readLong();
      } catch (java.io.EOFException | java.net.SocketException e) {
        return -1;
      }
    }
  }

  @Test
  void kernelOwnerOfTheSocketMustMatchTheRegistration() throws Exception {
    int me = Launched.myUid();
    int other = me + 4242;
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("k", 1, job(1)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of("k", 0), other, 0));
    // The claimed credential matches the registration, but the kernel says the socket is ours.
    assertEquals(-1, handshake(port(server), "k", other, 0));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("m", 1, job(1)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of("m", 0), me, 0));
    assertEquals(0L, handshake(port(server), "m", me, 0)); // status 0, index 0
  }

  @Test
  void trustClaimedCredentialsKeepsTheCBehaviour() throws Exception {
    int other = Launched.myUid() + 4242;
    server =
        PMIxServer.init(
            new HostModule() {}, ServerOptions.builder().trustClaimedCredentials(true).build());
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("k", 1, job(1)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of("k", 0), other, 0));
    assertEquals(0L, handshake(port(server), "k", other, 0));
    // A credential that differs from the registration is still refused.
    assertEquals(-1, handshake(port(server), "k", other + 1, 0));
  }

  @Test
  void awaitTerminationWithoutShutdownTimesOut() throws Exception {
    server = PMIxServer.init(new HostModule() {}, ServerOptions.defaults());
    assertFalse(server.awaitTermination(Duration.ofMillis(50)));
  }
}
