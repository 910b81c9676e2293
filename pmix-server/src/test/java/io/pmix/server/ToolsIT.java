package io.pmix.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.base.Splitter;
import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.CPrograms;
import io.pmix.common.testing.TestTiming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stock OpenPMIx 4.2.2 tools ({@code pps}, {@code pattrs}) and C tools of
 * this repository attached to a Java {@link PMIxServer} that runs a job of sleeping C clients:
 * found through the rendezvous files by pid and by namespace, answered from the server's own
 * knowledge, and cycled 200 times without the server keeping anything of them.
 */
class ToolsIT {
  private static final Duration WAIT = TestTiming.seconds(60);
  private static final String NSPACE = "tooljob";
  private static final String SERVER_NSPACE = "itsrv";
  private static final int NPROCS = 3;

  private static Path clientCheck;
  private static Path toolQuery;
  private static Path toolCycle;
  private static String hostname;

  @TempDir Path tmp;

  private PMIxServer server;
  private final List<Process> clients = new ArrayList<>();
  private final StoreHost host = new StoreHost();
  private long serverPid;

  /** A host with an in-memory publish/lookup store (keys outside "pmix." are data). */
  static final class StoreHost implements HostModule {
    final Map<String, Value.PData> store = new ConcurrentHashMap<>();

    @Override
    public CompletionStage<Void> publish(Proc proc, List<Info> info) {
      for (Info i : info) {
        if (!i.key().startsWith("pmix.")) {
          store.put(i.key(), new Value.PData(proc, i.key(), i.value()));
        }
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<List<Value.PData>> lookup(Proc proc, List<String> keys, List<Info> info) {
      List<Value.PData> found = new ArrayList<>();
      for (String k : keys) {
        Value.PData d = store.get(k);
        if (d != null) {
          found.add(d);
        }
      }
      if (found.isEmpty()) {
        return CompletableFuture.failedFuture(new PmixException(Status.ERR_NOT_FOUND, "none"));
      }
      return CompletableFuture.completedFuture(found);
    }
  }

  @BeforeAll
  static void compile() throws IOException {
    clientCheck = CPrograms.compile("../pmix-testkit/src/main/c/pmix_client_check.c");
    toolQuery = CPrograms.compile("src/test/c/tool_query.c");
    toolCycle = CPrograms.compile("src/test/c/tool_cycle.c");
    for (String t : List.of("pps", "pattrs")) {
      if (findInPath(t) == null) {
        throw CPrograms.unavailable(t + " is not installed (Debian: libpmix-bin)");
      }
    }
    // The name C tools use: gethostname() without the domain.
    String h = Files.readString(Paths.get("/proc/sys/kernel/hostname"), UTF_8).trim();
    int dot = h.indexOf('.');
    hostname = dot > 0 && !Character.isDigit(h.charAt(0)) ? h.substring(0, dot) : h;
  }

  private static Path findInPath(String exe) {
    for (String dir : Splitter.on(':').split(System.getenv().getOrDefault("PATH", "/usr/bin"))) {
      Path p = Paths.get(dir, exe);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  @BeforeEach
  void startJob() throws Exception {
    server =
        PMIxServer.init(
            host,
            ServerOptions.builder()
                .serverNspace(SERVER_NSPACE)
                .hostname(hostname)
                .tmpdir(tmp)
                .systemTmpdir(tmp)
                .toolSupport(true)
                .build());
    serverPid = ProcessHandle.current().pid();
    int uid = Launched.myUid();
    int gid = Launched.myGid();
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(
            NSPACE, NPROCS, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(NPROCS)))));
    for (int r = 0; r < NPROCS; r++) {
      Proc p = Proc.of(NSPACE, r);
      assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(p, uid, gid));
      ProcessBuilder pb =
          new ProcessBuilder(clientCheck.toString(), "--init", "--publish", "--sleep", "120000");
      pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
      pb.environment().putAll(server.setupFork(p));
      pb.redirectErrorStream(true);
      pb.redirectOutput(tmp.resolve("client" + r + ".out").toFile());
      Process proc = pb.start();
      clients.add(proc);
      assertEquals(
          Status.OPERATION_SUCCEEDED, server.setProcInfo(p, proc.pid(), clientCheck.toString()));
    }
    // Every client connected, and rank 0's publication arrived.
    awaitSnapshot(
        s ->
            s.peers().stream()
                    .filter(v -> v.state() == ServerSnapshot.PeerState.ACTIVE)
                    .count()
                == NPROCS);
    Await.condition(
        "rank 0's publication reached the host",
        () -> host.store.containsKey("svc." + NSPACE),
        Duration.ofSeconds(60));
  }

  @AfterEach
  void stop() throws Exception {
    List<Path> files = server.rendezvousFiles();
    for (Process p : clients) {
      p.destroyForcibly();
      p.waitFor(TestTiming.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
    }
    server.close();
    assertTrue(server.isTerminated());
    for (Path f : files) {
      assertFalse(Files.exists(f), f + " outlived the server");
      assertFalse(Files.exists(f.getParent()), f.getParent() + " outlived the server");
    }
    assertTrue(Files.isDirectory(tmp), "the tmpdir was not the server's to remove");
  }

  private record Run(int exit, String output) {}

  /** Runs a tool with only this test's tmpdir in its environment; stdout and stderr merged. */
  private Run run(String... command) throws Exception {
    return run(Map.of(), command);
  }

  private Run run(Map<String, String> env, String... command) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("OMPI_"));
    pb.environment().put("TMPDIR", tmp.toString());
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Process p = pb.start();
    CompletableFuture<String> out =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(p.getInputStream().readAllBytes(), UTF_8);
              } catch (IOException e) {
                return e.toString();
              }
            });
    if (!p.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor();
      throw new AssertionError(String.join(" ", command) + " hung:\n" + out.getNow(""));
    }
    return new Run(p.exitValue(), Await.get(out, Duration.ofSeconds(10)));
  }

  @CanIgnoreReturnValue
  private ServerSnapshot awaitSnapshot(Predicate<ServerSnapshot> ok) {
    return Await.until(server::snapshot, ok, Duration.ofSeconds(60), ServerSnapshot::toJson);
  }

  private String pid() {
    return Long.toString(serverPid);
  }

  @Test
  void rendezvousFilesCarryTheServer() throws Exception {
    List<Path> files = server.rendezvousFiles();
    assertEquals(2, files.size());
    assertEquals("pmix." + hostname + ".tool." + serverPid, files.get(0).getFileName().toString());
    assertEquals("pmix." + hostname + ".tool." + SERVER_NSPACE, files.get(1).getFileName().toString());
    List<String> lines = Files.readAllLines(files.get(0), UTF_8);
    assertEquals(server.uri(), lines.get(0));
    assertEquals(PMIxServer.PMIX_VERSION, lines.get(1));
    assertEquals(pid(), lines.get(2));
    assertEquals(Launched.myUid() + ":" + Launched.myGid(), lines.get(3));
    assertEquals("", lines.get(5));
  }

  @Test
  void ppsListsTheJobByPidAndByNamespace() throws Exception {
    Run byPid = run("pps", "--pid", pid());
    assertEquals(0, byPid.exit(), byPid.output());
    assertTrue(byPid.output().contains("Active nspaces: " + NSPACE + "\n"), byPid.output());
    Run byNs = run("pps", "--namespace", SERVER_NSPACE);
    assertEquals(0, byNs.exit(), byNs.output());
    assertTrue(byNs.output().contains("Active nspaces: " + NSPACE + "\n"), byNs.output());
  }

  @Test
  void pattrsShowsTheHostsFunctionsAndPublishAttributes() throws Exception {
    Run fns = run("pattrs", "--pid", pid(), "--host-fns");
    assertEquals(0, fns.exit(), fns.output());
    assertTrue(fns.output().contains("HOST SUPPORTED FUNCTIONS:"), fns.output());
    assertTrue(fns.output().contains("\tPMIx_Publish\n"), fns.output());
    assertTrue(fns.output().contains("\tPMIx_Lookup\n"), fns.output());
    assertFalse(fns.output().contains("PMIx_Spawn"), fns.output());

    Run pub = run("pattrs", "--pid", pid(), "--host", "PMIx_Publish");
    assertEquals(0, pub.exit(), pub.output());
    String o = pub.output();
    assertTrue(o.contains("HOST SUPPORTED ATTRIBUTES:"), o);
    assertTrue(o.contains("PMIx_Publish:"), o);
    assertTrue(
        o.lines().anyMatch(l -> l.matches("PRTE_PUBLISH_REPLACE +prte\\.pub\\.replace +PMIX_BOOL .*")),
        o);
    assertTrue(
        o.lines().anyMatch(l -> l.matches("PMIX_RANGE +pmix\\.range +PMIX_DATA_RANGE .*")), o);

    Run all = run("pattrs", "--namespace", SERVER_NSPACE, "--host", "all");
    assertEquals(0, all.exit(), all.output());
    assertTrue(all.output().contains("PMIx_Query_info:"), all.output());
    assertTrue(
        all.output().lines().anyMatch(l -> l.matches("PMIX_QUERY_PROC_TABLE +pmix\\.qry\\.ptable +PMIX_DATA_ARRAY .*")),
        all.output());
  }

  /**
   * A tool looks up what rank 0 of the job published, through the host's store. (The stock
   * {@code plookup} of 4.2.2 cannot do it: it dereferences its never-filled key list and dies
   * with SIGSEGV right after its event registration, against any server, the C reference
   * included.)
   */
  @Test
  void aToolLooksUpWhatTheJobPublished() throws Exception {
    Run r = run(toolQuery.toString(), "--pid", pid(), "lookup:svc." + NSPACE, "lookup:no.such.key");
    assertTrue(
        r.output().contains("\nlookup svc." + NSPACE + "=svc-value-" + NSPACE + " proc=" + NSPACE + ":0\n"),
        r.output());
    assertTrue(r.output().contains("\nlookup:no.such.key:status=-46\n"), r.output());
    assertEquals(3, r.exit(), r.output());
  }

  @Test
  void aCToolReadsTheProcessTable() throws Exception {
    Run r =
        run(
            toolQuery.toString(),
            "--pid",
            pid(),
            "ns",
            "jobsize:" + NSPACE,
            "ptable:" + NSPACE,
            "lptable:" + NSPACE,
            "nsinfo");
    assertEquals(0, r.exit(), r.output());
    String o = r.output();
    assertTrue(o.startsWith("me=" + SERVER_NSPACE + "-tool-"), o);
    assertTrue(o.contains("\nns=" + NSPACE + "\n"), o);
    assertTrue(o.contains("\njobsize=" + NPROCS + "\n"), o);
    for (int rank = 0; rank < NPROCS; rank++) {
      String row =
          NSPACE
              + ":"
              + rank
              + " host="
              + hostname
              + " exe="
              + clientCheck
              + " pid="
              + clients.get(rank).pid()
              + " state=6\n";
      assertTrue(o.contains("\nptable " + row), o);
      assertTrue(o.contains("\nlptable " + row), o);
    }
    assertTrue(
        o.contains("\nnsinfo " + NSPACE + " size=3 ranks=0,1,2 hosts=" + hostname + "," + hostname + "," + hostname + "\n"),
        o);
    assertTrue(o.endsWith("done finalize=0\n"), o);
  }

  @Test
  void identitiesOfToolsAndLaunchers() throws Exception {
    Run given = run(toolQuery.toString(), "--pid", pid(), "--id", "mytool:7", "ns");
    assertEquals(0, given.exit(), given.output());
    assertTrue(given.output().startsWith("me=mytool:7\nns=" + NSPACE + "\n"), given.output());

    Run launcher = run(toolQuery.toString(), "--server-nspace", SERVER_NSPACE, "--launcher", "ns");
    assertEquals(0, launcher.exit(), launcher.output());
    assertTrue(launcher.output().startsWith("me=" + SERVER_NSPACE + "-tool-"), launcher.output());

    Run byUri = run(toolQuery.toString(), "--uri", server.uri(), "--launcher", "--id", "l:3", "ns");
    assertEquals(0, byUri.exit(), byUri.output());
    assertTrue(byUri.output().startsWith("me=l:3\n"), byUri.output());
    // Nothing of them stays.
    awaitSnapshot(s -> s.peers().size() == NPROCS && s.namespaces().size() == 1);
  }

  /**
   * A second server acting as this host's system server: its {@code pmix.sys.<host>} file (in the
   * system tmpdir itself) leads a tool asking for the system server and a singleton client to
   * it, and goes away with it.
   */
  @Test
  void theSystemServerIsFoundByToolsAndSingletons() throws Exception {
    Path sysFile = tmp.resolve("pmix.sys." + hostname);
    try (PMIxServer sys =
        PMIxServer.init(
            new HostModule() {},
            ServerOptions.builder()
                .serverNspace("syssrv")
                .hostname(hostname)
                .tmpdir(tmp.resolve("sys-session"))
                .systemTmpdir(tmp)
                .systemSupport(true)
                .build())) {
      assertEquals(List.of(sysFile), sys.rendezvousFiles());
      assertTrue(Files.readString(sysFile, UTF_8).startsWith(sys.uri() + "\n"));
      Run tool = run(toolQuery.toString(), "--system", "ns");
      assertEquals(0, tool.exit(), tool.output());
      assertTrue(tool.output().startsWith("me=syssrv-tool-1:0\nns=\n"), tool.output());
      Run singleton = run(clientCheck.toString(), "--init", "--finalize");
      assertEquals(0, singleton.exit(), singleton.output());
      assertTrue(singleton.output().contains("nspace=singleton." + hostname + "."), singleton.output());
      awaitSnapshot(s -> s.peers().size() == NPROCS); // the job's server saw none of this
    }
    assertFalse(Files.exists(sysFile));
  }

  /**
   * A tool the launcher started with a client's environment (connect flag 5) on a rank the host
   * registered: served like a client of that job, it leaves a tombstone when it finalizes, which
   * its next run reclaims.
   */
  @Test
  void aToolStartedAsALaunchedClientKeepsTheClientLifecycle() throws Exception {
    Proc child = Proc.of("launched", 0);
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace("launched", 1, List.of()));
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerClient(child, Launched.myUid(), Launched.myGid()));
    for (int cycle = 0; cycle < 3; cycle++) {
      Run r = run(server.setupFork(child), toolQuery.toString(), "ns");
      assertEquals(0, r.exit(), r.output());
      assertTrue(r.output().startsWith("me=launched:0\nns=" + NSPACE + ",launched\n"), r.output());
      ServerSnapshot s =
          awaitSnapshot(
              x ->
                  x.peers().stream()
                      .anyMatch(
                          p ->
                              p.nspace().equals("launched")
                                  && p.state() == ServerSnapshot.PeerState.TOMBSTONE));
      assertEquals(NPROCS + 1, s.peers().size(), s.toJson());
      assertEquals(
          ServerSnapshot.Role.TOOL,
          s.peers().stream().filter(p -> p.nspace().equals("launched")).findFirst().orElseThrow().role());
      ServerSnapshot.NamespaceView ns = s.namespace("launched").orElseThrow();
      assertEquals(1, ns.nfinalized(), s.toJson());
      assertEquals(0, ns.ranks().get(0).procCount(), s.toJson());
    }
  }

  @Test
  void twoHundredToolCyclesLeaveNothingBehind() throws Exception {
    ServerSnapshot before = server.snapshot();
    Run r = run(toolCycle.toString(), pid(), "200", "--query");
    assertEquals(0, r.exit(), r.output());
    assertTrue(r.output().contains("cycles=200"), r.output());
    ServerSnapshot after =
        awaitSnapshot(s -> s.peers().size() == NPROCS && s.namespaces().size() == 1);
    assertEquals(before.peers(), after.peers());
    assertEquals(before.namespaces(), after.namespaces());
  }
}
