package io.pmix.tool.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.TeardownContract;
import io.pmix.server.HostModule;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import io.pmix.tool.PMIxTool;
import io.pmix.tool.internal.ToolHolder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PMIxTool attached to our own server (pmix-server's {@link PMIxServer} with tool and system
 * support, in this JVM), which answers the process table itself: attach by pid, namespace, URI
 * and the system file, queries with their values, events pushed by the server, a spawn through
 * the host, and 200 cycles plus 100 nested inits after which neither side keeps anything.
 */
class ToolJavaServerIT {
  private static final String HOST = "testhost";
  private static final String SERVER_NSPACE = "jsrv";
  private static final String JOB = "jjob";

  @TempDir Path tmp;
  private PMIxServer server;
  private Map<String, String> env;

  /** A host that can spawn: it registers the new job and names it. */
  private final class SpawningHost implements HostModule {
    private int spawned;

    @Override
    public CompletionStage<String> spawn(Proc requester, List<Info> jobInfo, List<Value.App> apps) {
      spawned++;
      String ns = "spawned-" + spawned;
      int n = apps.stream().mapToInt(Value.App::maxprocs).sum();
      var unused =
          server.registerNspace(ns, 0, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(n))));
      return CompletableFuture.completedFuture(ns);
    }
  }

  @BeforeEach
  void startServer() {
    server =
        PMIxServer.init(
            new SpawningHost(),
            ServerOptions.builder()
                .serverNspace(SERVER_NSPACE)
                .serverRank(0)
                .hostname(HOST)
                .tmpdir(tmp)
                .systemTmpdir(tmp)
                .toolSupport(true)
                .systemSupport(true)
                .build());
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(JOB, 2, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(2)))));
    for (int r = 0; r < 2; r++) {
      Proc p = Proc.of(JOB, r);
      assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(p, 0, 0));
      assertEquals(Status.OPERATION_SUCCEEDED, server.setProcInfo(p, 1000 + r, "/bin/app"));
    }
    env = new HashMap<>();
    env.put("PMIX_HOSTNAME", HOST);
    env.put("PMIX_SYSTEM_TMPDIR", tmp.toString());
  }

  @AfterEach
  void stop() {
    while (ToolHolder.peek() != null) {
      PMIxTool.finalize();
    }
    server.close();
    TeardownContract.assertNothingRemains(ToolHolder.holder());
  }

  @CanIgnoreReturnValue
  private Proc init(Info... directives) {
    return ToolHolder.init(env, List.of(directives)).me();
  }

  private static Info byPid() {
    return Info.of("pmix.srvr.pidinfo", Value.pid((int) ProcessHandle.current().pid()));
  }

  /** Waits until the server holds no tool peer any more (a tool peer is freed at close). */
  private void assertServerForgotTheTool() {
    Await.until(
        server::snapshot,
        s -> s.peers().stream().noneMatch(p -> p.role() == ServerSnapshot.Role.TOOL),
        Duration.ofSeconds(10),
        s -> "the server still holds tool peers: " + s.toJson());
  }

  @Test
  void attachByPidQueryTheProcTableAndGet() throws Exception {
    Proc me = init(byPid());
    assertTrue(PMIxTool.isConnected());
    assertEquals(Proc.of(SERVER_NSPACE, 0), PMIxTool.server().orElseThrow());
    assertTrue(me.nspace().startsWith(SERVER_NSPACE + "-tool-"), me.toString());
    assertTrue(PMIxTool.queryNamespaces().contains(JOB), PMIxTool.queryNamespaces()::toString);
    List<Value.ProcInfo> table = PMIxTool.queryProcTable(JOB);
    assertEquals(2, table.size(), table::toString);
    for (int r = 0; r < 2; r++) {
      Value.ProcInfo p = table.get(r);
      assertEquals(Proc.of(JOB, r), p.proc());
      assertEquals(1000 + r, p.pid());
      assertEquals("/bin/app", p.executableName());
      assertEquals(HOST, p.hostname());
    }
    assertEquals(2, PMIxTool.get(Proc.wildcard(JOB), "pmix.job.size").asInt());
    PMIxTool.finalize();
    assertServerForgotTheTool();
  }

  @Test
  void attachByNamespaceUriAndSystemFile() throws Exception {
    for (Info target :
        List.of(
            Info.of("pmix.srv.nspace", SERVER_NSPACE),
            Info.of("pmix.srvr.uri", server.uri()),
            Info.of("pmix.srvr.uri", server.uri()),
            Info.of("pmix.cnct.sys", true))) {
      init(target);
      assertEquals(Proc.of(SERVER_NSPACE, 0), PMIxTool.server().orElseThrow());
      assertTrue(PMIxTool.queryNamespaces().contains(JOB));
      PMIxTool.finalize();
    }
    assertServerForgotTheTool();
  }

  @Test
  void eventsThatTheServerRaisesReachTheTool() throws Exception {
    init(byPid(), Info.of("pmix.tool.nspace", "watcher"), Info.of("pmix.tool.rank", Value.rank(0)));
    CompletableFuture<Event> got = new CompletableFuture<>();
    PMIxTool.registerEventHandler(List.of(Status.of(-5001)), got::complete);
    CompletableFuture<Event> local = new CompletableFuture<>();
    PMIxTool.registerEventHandler(List.of(Status.of(-5002)), local::complete);
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.notifyEvent(
            Status.of(-5001),
            Proc.of(SERVER_NSPACE, 0),
            DataRange.SESSION.code(),
            List.of(Info.of("ev.data", "from the server"))));
    Event e = Await.get(got, Duration.ofSeconds(10));
    assertEquals("from the server", e.find("ev.data").orElseThrow().value().asString());
    PMIxTool.notifyEvent(Status.of(-5002), DataRange.PROC_LOCAL);
    assertEquals(Proc.of("watcher", 0), Await.get(local, Duration.ofSeconds(10)).source());
    PMIxTool.finalize();
  }

  @Test
  void spawnThroughTheHost() {
    init(byPid());
    String ns =
        PMIxTool.spawn(
            List.of(new Value.App("/bin/true", List.of(), List.of(), null, 3, List.of())));
    assertEquals("spawned-1", ns);
    assertEquals(3, PMIxTool.get(Proc.wildcard(ns), "pmix.job.size").asInt());
    PMIxTool.finalize();
  }

  private static long fds() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    }
  }

  private static long heap() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    Runtime rt = Runtime.getRuntime();
    return rt.totalMemory() - rt.freeMemory();
  }

  @Test
  void twoHundredCyclesThenAHundredNestedInits() throws Exception {
    List<Info> targets =
        List.of(byPid(), Info.of("pmix.srv.nspace", SERVER_NSPACE), Info.of("pmix.srvr.uri", server.uri()));
    for (int i = 0; i < 10; i++) {
      init(targets.get(i % 3));
      PMIxTool.finalize();
    }
    assertServerForgotTheTool();
    int threads = ManagementFactory.getThreadMXBean().getThreadCount();
    long fds = fds();
    long heap = heap();
    for (int i = 0; i < 200; i++) {
      init(targets.get(i % 3));
      assertTrue(PMIxTool.queryNamespaces().contains(JOB));
      PMIxTool.registerEventHandler(List.of(), e -> {});
      PMIxTool.finalize();
      TeardownContract.assertNothingRemains(ToolHolder.holder());
    }
    Proc me = init(byPid());
    for (int i = 1; i < 100; i++) {
      assertEquals(me, init(byPid()));
    }
    for (int i = 0; i < 99; i++) {
      PMIxTool.finalize();
      assertTrue(PMIxTool.isConnected());
    }
    assertEquals(1, server.snapshot().peers().stream()
        .filter(p -> p.role() == ServerSnapshot.Role.TOOL).count(), "one connection for 100 inits");
    PMIxTool.finalize();
    assertServerForgotTheTool();
    int threadsAfter = ManagementFactory.getThreadMXBean().getThreadCount();
    long fdsAfter = fds();
    long heapAfter = heap();
    System.out.println(
        "TOOL-RESOURCES java server: threads "
            + threads + " -> " + threadsAfter
            + ", fds " + fds + " -> " + fdsAfter
            + ", heap " + heap / 1024 + " -> " + heapAfter / 1024 + " KiB");
    assertEquals(List.of(), TeardownContract.libraryThreads(Role.TOOL));
    assertTrue(threadsAfter <= threads + 2, "threads " + threads + " -> " + threadsAfter);
    assertTrue(fdsAfter <= fds + 8, "fds " + fds + " -> " + fdsAfter);
    assertTrue(heapAfter <= heap + 32L * 1024 * 1024, "heap " + heap + " -> " + heapAfter);
    assertFalse(PMIxTool.initialized());
  }
}
