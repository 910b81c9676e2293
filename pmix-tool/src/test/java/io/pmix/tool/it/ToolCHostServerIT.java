package io.pmix.tool.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.internal.connector.RendezvousFile;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.TeardownContract;
import io.pmix.tool.IofChannel;
import io.pmix.tool.PMIxTool;
import io.pmix.tool.internal.ToolHolder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PMIxTool attached to the C reference host server (libpmix 4.2.2 with tool and system support,
 * job {@code cjob} of two sleeping processes): every way of finding the server, queries, gets,
 * events, the operations the C host does not offer, and hundreds of init/finalize cycles and
 * nested inits without growth in threads, file descriptors or heap.
 */
class ToolCHostServerIT {
  @TempDir static Path base;
  private static CHostServer server;
  private static Map<String, String> env;

  @BeforeAll
  static void startServer() throws IOException {
    server = CHostServer.start(base, 2);
    env = new HashMap<>();
    env.put("PMIX_SYSTEM_TMPDIR", server.tmpdir.toString());
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void nothingLeft() {
    while (ToolHolder.peek() != null) {
      PMIxTool.finalize();
    }
    TeardownContract.assertNothingRemains(ToolHolder.holder());
    assertFalse(PMIxTool.initialized());
  }

  @CanIgnoreReturnValue
  private static Proc init(Info... directives) {
    return ToolHolder.init(env, List.of(directives)).me();
  }

  private static Info byPid() {
    return Info.of("pmix.srvr.pidinfo", Value.pid((int) server.pid));
  }

  /** What every attach must give: the server's name, its job, a get, an event registration. */
  private static void checkAttached() throws Exception {
    assertTrue(PMIxTool.isConnected());
    assertEquals(Proc.of(server.serverNspace, 0), PMIxTool.server().orElseThrow());
    assertTrue(
        PMIxTool.queryNamespaces().contains(server.jobNspace),
        () -> "namespaces: " + PMIxTool.queryNamespaces());
    assertEquals(
        server.nprocs, PMIxTool.get(Proc.wildcard(server.jobNspace), "pmix.job.size").asInt());
    CompletableFuture<Event> local = new CompletableFuture<>();
    long id = PMIxTool.registerEventHandler(List.of(Status.of(-4711)), local::complete);
    PMIxTool.notifyEvent(Status.of(-4711), DataRange.PROC_LOCAL, Info.of("k", "v"));
    Event e = Await.get(local, Duration.ofSeconds(10));
    assertEquals(PMIxTool.myProc(), e.source());
    assertEquals("v", e.find("k").orElseThrow().value().asString());
    PMIxTool.deregisterEventHandler(id);
  }

  @Test
  void attachByPid() throws Exception {
    Proc me = init(byPid());
    assertTrue(me.nspace().startsWith("ctool-" + server.pid + "-"), me.toString());
    checkAttached();
    PMIxTool.finalize();
  }

  @Test
  void attachByNamespace() throws Exception {
    init(Info.of("pmix.srv.nspace", server.serverNspace));
    checkAttached();
    PMIxTool.finalize();
  }

  @Test
  void attachByUriAgainAndAgain() throws Exception {
    // A C 4.2.2 tool aborts with a double free on its second attach by URI; ours cycles.
    for (int i = 0; i < 5; i++) {
      init(Info.of("pmix.srvr.uri", server.uri));
      checkAttached();
      PMIxTool.finalize();
    }
  }

  @Test
  void attachByFileSystemServerAndSearch() throws Exception {
    String host = LocalProcess.localHostname();
    Path pidFile = server.tmpdir.resolve(RendezvousFile.pidFileName(host, server.pid));
    assertTrue(Files.isRegularFile(pidFile), () -> "no " + pidFile);
    init(Info.of("pmix.tool.attach", pidFile.toString()));
    checkAttached();
    PMIxTool.finalize();
    init(Info.of("pmix.cnct.sys", true));
    checkAttached();
    PMIxTool.finalize();
    init();
    checkAttached();
    PMIxTool.finalize();
  }

  @Test
  void aGivenIdentityIsKept() throws Exception {
    Proc me =
        init(byPid(), Info.of("pmix.tool.nspace", "jtool"), Info.of("pmix.tool.rank", Value.rank(3)));
    assertEquals(Proc.of("jtool", 3), me);
    checkAttached();
    PMIxTool.finalize();
  }

  @Test
  void theProcTableAndWhatTheCHostDoesNotOffer() {
    init(byPid());
    // The C test host answers only pmix.qry.ns; libpmix passes the rest to it and relays NOT_FOUND.
    PmixException pt =
        assertThrows(PmixException.class, () -> PMIxTool.queryProcTable(server.jobNspace));
    assertEquals(Status.ERR_NOT_FOUND, pt.status());
    Proc job = Proc.wildcard(server.jobNspace);
    List<Status> refusals = new ArrayList<>();
    refusals.add(
        assertThrows(
                PmixException.class,
                () ->
                    PMIxTool.spawn(
                        List.of(new Value.App("/bin/true", List.of(), List.of(), null, 1, List.of()))))
            .status());
    refusals.add(
        assertThrows(
                PmixException.class,
                () -> PMIxTool.jobControl(List.of(job), Info.of("pmix.jctrl.kill", true)))
            .status());
    refusals.add(
        assertThrows(
                PmixException.class,
                () -> PMIxTool.iofPull(List.of(job), EnumSet.of(IofChannel.STDOUT), o -> {}))
            .status());
    // Blocking IOF push never returns in a C 4.2.2 tool; ours returns with the server's answer.
    refusals.add(
        assertThrows(PmixException.class, () -> PMIxTool.iofPush(List.of(job), new byte[] {'x'}))
            .status());
    for (Status s : refusals) {
      assertEquals(Status.ERR_NOT_SUPPORTED, s, refusals::toString);
    }
    PMIxTool.finalize();
  }

  @Test
  void losingTheServerRaisesAnEvent() throws Exception {
    CHostServer doomed = CHostServer.start(base, 1);
    try {
      init(Info.of("pmix.srvr.uri", doomed.uri));
      CompletableFuture<Event> lost = new CompletableFuture<>();
      PMIxTool.registerEventHandler(List.of(Status.ERR_LOST_CONNECTION), lost::complete);
      doomed.close();
      assertEquals(Status.ERR_LOST_CONNECTION, Await.get(lost, Duration.ofSeconds(30)).status());
      PmixException after = assertThrows(PmixException.class, PMIxTool::queryNamespaces);
      assertEquals(Status.ERR_LOST_CONNECTION, after.status());
      PMIxTool.finalize();
    } finally {
      doomed.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Cycling

  /** Threads, open file descriptors and used heap of this JVM. */
  private record Resources(int threads, long fds, long heap) {
    static Resources now() {
      for (int i = 0; i < 3; i++) {
        System.gc();
      }
      long fds;
      try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
        fds = s.count();
      } catch (IOException e) {
        fds = -1;
      }
      Runtime rt = Runtime.getRuntime();
      return new Resources(
          ManagementFactory.getThreadMXBean().getThreadCount(),
          fds,
          rt.totalMemory() - rt.freeMemory());
    }

    @Override
    public String toString() {
      return "threads=" + threads + " fds=" + fds + " heap=" + (heap / 1024) + "KiB";
    }
  }

  private static void assertNoGrowth(String what, Resources before, Resources after) {
    System.out.println("TOOL-RESOURCES " + what + " before: " + before + " after: " + after);
    assertTrue(after.threads() <= before.threads() + 2, () -> what + ": threads " + before + " -> " + after);
    assertTrue(after.fds() <= before.fds() + 8, () -> what + ": fds " + before + " -> " + after);
    assertTrue(
        after.heap() <= before.heap() + 32L * 1024 * 1024,
        () -> what + ": heap " + before + " -> " + after);
    assertEquals(List.of(), TeardownContract.libraryThreads(Role.TOOL));
  }

  @Test
  void twoHundredCyclesByPidNamespaceAndUri() throws Exception {
    List<Info> targets =
        List.of(
            byPid(),
            Info.of("pmix.srv.nspace", server.serverNspace),
            Info.of("pmix.srvr.uri", server.uri));
    for (int i = 0; i < 10; i++) {
      cycle(targets.get(i % 3), i);
    }
    Resources before = Resources.now();
    Proc previous = null;
    long start = System.nanoTime();
    for (int i = 0; i < 200; i++) {
      Proc me = cycle(targets.get(i % 3), i);
      assertNotEquals(previous, me, "each attach gets a fresh identity");
      previous = me;
    }
    long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
    System.out.println("TOOL-CYCLES 200 cycles in " + millis + " ms");
    assertNoGrowth("200 cycles", before, Resources.now());
  }

  private static Proc cycle(Info target, int i) throws Exception {
    Proc me = init(target);
    assertTrue(PMIxTool.queryNamespaces().contains(server.jobNspace));
    CompletableFuture<Event> got = new CompletableFuture<>();
    PMIxTool.registerEventHandler(List.of(Status.of(-4712)), got::complete);
    if (i % 10 == 0) {
      PMIxTool.notifyEvent(Status.of(-4712), DataRange.PROC_LOCAL);
      assertEquals(-4712, Await.get(got, Duration.ofSeconds(10)).status().code());
    }
    PMIxTool.finalize();
    TeardownContract.assertNothingRemains(ToolHolder.holder());
    return me;
  }

  @Test
  void aHundredNestedInits() throws Exception {
    cycle(byPid(), 1);
    Resources before = Resources.now();
    Proc me = init(byPid());
    List<Thread> threads = TeardownContract.libraryThreads(Role.TOOL);
    for (int i = 1; i < 100; i++) {
      assertEquals(me, init(byPid()), "a nested init attaches nothing new");
    }
    assertEquals(100, ToolHolder.holder().refCount());
    for (int i = 99; i > 0; i--) {
      PMIxTool.finalize();
      if (i % 33 == 0) {
        assertTrue(PMIxTool.queryNamespaces().contains(server.jobNspace));
      }
    }
    // Nested finalizes stop nothing (the queries may have started the callback thread).
    assertTrue(TeardownContract.libraryThreads(Role.TOOL).containsAll(threads), threads::toString);
    assertEquals(me, PMIxTool.myProc());
    PMIxTool.finalize();
    assertNoGrowth("100 nested inits", before, Resources.now());
  }
}
