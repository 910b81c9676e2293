package io.pmix.server;

import static io.pmix.server.Launched.describe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.gds.DstoreReader;
import io.pmix.common.internal.gds.GdsKind;
import io.pmix.common.internal.gds.HeldReaderLock;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.CPrograms;
import io.pmix.common.testing.TestTiming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our server's ds21 and ds12 stores read by real OpenPMIx 4.2.2 clients ({@code
 * pmix_client_check}; {@code PMIX_MCA_gds} in a client's environment forces its module, docs/gds.md
 * §1): every scope and type of key through a collecting fence, with no GETNB for the peers' keys;
 * clients of one namespace on different modules; cycling; deregistration while clients run; and
 * nothing left after deregistration and shutdown.
 */
@Timeout(300)
class DstoreServerIT {
  private static final Duration WAIT = TestTiming.seconds(120);
  private static Path check;

  private PMIxServer server;
  private final List<Launched> started = new ArrayList<>();

  /** Accepts everything; fences complete locally (a single node). */
  static final class Host implements HostModule {
    @Override
    public CompletionStage<Void> clientConnected(Proc proc, Object hostObject) {
      return CompletableFuture.completedFuture(null);
    }
  }

  @BeforeAll
  static void compile() {
    check = CPrograms.compile("../pmix-testkit/src/main/c/pmix_client_check.c");
  }

  @AfterEach
  void stop() throws Exception {
    for (Launched p : started) {
      if (p.process.isAlive()) {
        p.process.destroyForcibly();
        p.process.waitFor();
      }
    }
    if (server != null) {
      List<Path> dirs = new ArrayList<>(server.gdsDirectories());
      if (!server.isTerminated()) {
        dirs.clear();
        for (ServerSnapshot.StoreView st : server.snapshot().stores()) {
          dirs.add(Path.of(st.directory())); // retired ones too
        }
      }
      server.close();
      assertTrue(server.isTerminated());
      for (Path d : dirs) {
        assertFalse(Files.exists(d), d + " survived the shutdown");
      }
    }
  }

  private void start(ServerOptions.Builder b) {
    server = PMIxServer.init(new Host(), b.hostname("dsnode").build());
  }

  private void register(String nspace, int n) {
    register(nspace, n, Launched.myUid(), Launched.myGid());
  }

  private void register(String nspace, int n, int uid, int gid) {
    List<Info> infos =
        List.of(
            Info.of(Keys.JOB_SIZE, Value.uint32(n)),
            Info.of(Keys.UNIV_SIZE, Value.uint32(n)),
            Info.of(Keys.JOBID, Value.of(nspace)),
            Info.of(Keys.NSPACE, Value.of(nspace)));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerNspace(nspace, n, infos));
    for (int r = 0; r < n; r++) {
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerClient(Proc.of(nspace, r), uid, gid));
    }
  }

  private Launched launch(String nspace, int rank, String gds, String... args) throws IOException {
    return launchAs(-1, nspace, rank, gds, args);
  }

  /** As {@link #launch}, run by {@code uid} (its own group) unless it is -1. */
  private Launched launchAs(int uid, String nspace, int rank, String gds, String... args)
      throws IOException {
    Map<String, String> env = new java.util.HashMap<>(server.setupFork(Proc.of(nspace, rank)));
    if (!gds.isEmpty()) {
      env.put("PMIX_MCA_gds", gds);
    }
    Launched p =
        uid < 0 ? Launched.start(check, env, args) : Launched.startAs(uid, uid, null, check, env, args);
    started.add(p);
    return p;
  }


  private List<String> filesNaming(String nspace) throws IOException {
    List<String> out = new ArrayList<>();
    for (Path d : server.gdsDirectories()) {
      try (Stream<Path> s = Files.list(d)) {
        out.addAll(
            s.map(p -> d.getFileName() + "/" + p.getFileName())
                .filter(f -> f.contains(nspace))
                .collect(Collectors.toList()));
      }
      // The namespace table names it too while it lives.
      try (Stream<Path> s = Files.list(d)) {
        for (Path p : s.filter(f -> f.getFileName().toString().startsWith("initial-"))
            .collect(Collectors.toList())) {
          if (new String(Files.readAllBytes(p), java.nio.charset.StandardCharsets.ISO_8859_1)
              .contains(nspace + "\0")) {
            out.add(d.getFileName() + "/" + p.getFileName() + " names it");
          }
        }
      }
    }
    return out;
  }

  private static final String[] FLOW = {
    "--timeout", "60", "--init", "--put", "--commit", "--fence-collect",
    "--get-peers", "--fence", "--finalize"
  };

  private long getnbs() {
    return server.requestCounts().getOrDefault("GETNB", 0L);
  }

  @Test
  void theServerExportsItsStores() {
    start(ServerOptions.builder());
    register("exp", 1);
    Map<String, String> env = server.setupFork(Proc.of("exp", 0));
    assertEquals("ds21,ds12,hash", env.get("PMIX_GDS_MODULE"));
    assertEquals(server.gdsDirectories().get(0).toString(), env.get("PMIX_DSTORE_21_BASE_PATH"));
    assertEquals(server.gdsDirectories().get(1).toString(), env.get("PMIX_DSTORE_ESH_BASE_PATH"));
    assertTrue(server.gdsDirectories().get(0).getFileName().toString()
        .startsWith("pmix_dstor_ds21_" + ProcessHandle.current().pid()));
  }

  @Test
  void hashOnlyWhenAsked() throws Exception {
    start(ServerOptions.builder().gds("hash"));
    register("hashonly", 2);
    assertEquals("hash", server.setupFork(Proc.of("hashonly", 0)).get("PMIX_GDS_MODULE"));
    assertEquals(List.of(), server.gdsDirectories());
    List<Launched> ps = List.of(launch("hashonly", 0, "", FLOW), launch("hashonly", 1, "", FLOW));
    for (Launched p : ps) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    // The counter sees the peers' gets a hash client has to send.
    assertTrue(getnbs() > 0, server.requestCounts()::toString);
  }

  /**
   * Four C ranks on one module: every key of every scope and type through a collecting fence, the
   * peers' keys read from shared memory (no GETNB at all); the namespace's files go with it.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"ds21", "ds12"})
  void cClientsReadEveryPeerFromTheStore(String gds) throws Exception {
    start(ServerOptions.builder());
    String ns = "job-" + gds;
    register(ns, 4);
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      ps.add(launch(ns, r, gds + ",hash", FLOW));
    }
    for (Launched p : ps) {
      assertEquals(0, p.await(WAIT), describe(p));
      assertTrue(p.stdout().contains("STEP get-peers OK"), describe(p));
    }
    assertEquals(0, getnbs(), server.requestCounts()::toString);
    assertFalse(filesNaming(ns).isEmpty(), "the store was not written");
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace(ns));
    Await.until(() -> uncheckedFiles(ns), List::isEmpty, WAIT);
  }

  private List<String> uncheckedFiles(String ns) {
    try {
      return filesNaming(ns);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static final int NOBODY = 65534;

  /**
   * A root server for another user's job ({@link ServerOptions.Builder#jobUser}, libpmix's {@code
   * PMIX_USERID}): the stores' directories and files are that user's (0700/0600), and its C
   * clients, run as that user, read every peer from them (no GETNB) without a libpmix error.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"ds21", "ds12"})
  void anotherUsersJobReadsStoresMadeItsOwn(String gds) throws Exception {
    Launched.requireRoot();
    start(ServerOptions.builder().jobUser(NOBODY));
    String ns = "user-" + gds;
    register(ns, 2, NOBODY, NOBODY);
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      ps.add(launchAs(NOBODY, ns, r, gds + ",hash", FLOW));
    }
    for (Launched p : ps) {
      assertEquals(0, p.await(WAIT), describe(p));
      assertTrue(p.stdout().contains("STEP get-peers OK"), describe(p));
      assertFalse(p.stderr().contains("PMIX ERROR"), describe(p));
    }
    assertEquals(0, getnbs(), server.requestCounts()::toString);
    for (Path d : server.gdsDirectories()) {
      assertEquals(NOBODY, Files.getAttribute(d, "unix:uid"), d.toString());
      assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
          Files.getPosixFilePermissions(d)), d.toString());
      try (Stream<Path> s = Files.list(d)) {
        for (Path f : s.collect(Collectors.toList())) {
          assertEquals(NOBODY, Files.getAttribute(f, "unix:uid"), f.toString());
          assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
              Files.getPosixFilePermissions(f)), f.toString());
        }
      }
    }
  }

  /**
   * A rank the host registered under a user that cannot read the stores (the server's own files,
   * mode 0600) is told hash: its C client runs through the socket without libpmix's attach
   * errors (given the stores' paths, 4.2.2 logs a PMIX ERROR for each module and falls back).
   */
  @Test
  void aRankOfAnotherUserIsToldHash() throws Exception {
    Launched.requireRoot();
    start(ServerOptions.builder());
    register("own", 1);
    register("theirs", 2, NOBODY, NOBODY);
    assertEquals("ds21,ds12,hash", server.setupFork(Proc.of("own", 0)).get("PMIX_GDS_MODULE"));
    Map<String, String> env = server.setupFork(Proc.of("theirs", 0));
    assertEquals("hash", env.get("PMIX_GDS_MODULE"), env::toString);
    assertFalse(env.containsKey("PMIX_DSTORE_21_BASE_PATH"), env::toString);
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      ps.add(launchAs(NOBODY, "theirs", r, "", FLOW));
    }
    for (Launched p : ps) {
      assertEquals(0, p.await(WAIT), describe(p));
      assertTrue(p.stdout().contains("STEP get-peers OK"), describe(p));
      assertFalse(p.stderr().contains("PMIX ERROR"), describe(p));
    }
  }

  /** One namespace, clients announcing ds21, ds12 and hash: all see every commit. */
  /**
   * A reader that keeps its ds21 lock (a client stopped inside a read) holds up the store writes,
   * not the server: while it holds it, two ranks of a hash job run from init to finalize; a ds21
   * client's PMIx_Init waits for its job data to land in the store, and passes once the lock is
   * released, so the write was waited for, not given up.
   */
  @Test
  void aReaderHoldingItsLockDelaysTheStoreWritesNotTheServer() throws Exception {
    // A lock timeout far beyond the test's waits: only a server that goes on serving passes.
    start(ServerOptions.builder().gds("ds21,hash").storeLockTimeout(Duration.ofMinutes(10)));
    register("held", 1);
    register("dsjob", 1);
    register("hashjob", 2);
    Path ds21 = server.gdsDirectories().get(0);
    Launched ds;
    try (HeldReaderLock lock = HeldReaderLock.take(ds21, "held")) {
      ds = launch("dsjob", 0, "ds21,hash", FLOW);
      // Its REQ has reached the server: the job data write now waits for the lock.
      Await.until(() -> server.requestCounts().getOrDefault("REQ", 0L), n -> n >= 1, WAIT);
      List<Launched> hs = List.of(
          launch("hashjob", 0, "hash", FLOW), launch("hashjob", 1, "hash", FLOW));
      for (Launched p : hs) {
        assertEquals(0, p.await(WAIT), describe(p));
        assertTrue(p.stdout().contains("STEP get-peers OK"), describe(p));
      }
      assertTrue(ds.process.isAlive(), describe(ds));
      assertFalse(ds.stdout().contains("STEP init OK"), describe(ds));
    }
    assertEquals(0, ds.await(WAIT), describe(ds));
    assertTrue(ds.stdout().contains("STEP get-peers OK"), describe(ds));
  }

  /**
   * A ds12 reader lost inside a read (the test keeps the store's rwlock read-held: to the writer,
   * a reader killed there is the same, nothing ever gives its hold back) must not leave the peers
   * reading older values than the server's. Two C ranks cycle three times (each cycle puts its
   * number, fences, reads the other's); with the lock held, two new processes of the same ranks
   * (registered again) cycle once: the store still holds 2, but they must read this cycle's 0 (or
   * 1). The store is then retired: a process told of it before gets its rank-level job data
   * (hidden with its records) from the server; processes set up later are told hash, and run. A
   * namespace registered after the retirement lives in a fresh ds12 store of its own, which its
   * processes are told of; the retired store is removed with its last namespace.
   */
  @Test
  void aReaderLostInsideADs12ReadLeavesNoStaleValueBehind() throws Exception {
    Path cycler = CPrograms.compile("src/test/c/server_it_client.c");
    // Short: the writes waiting for the lost reader time out, as they must.
    start(ServerOptions.builder().gds("ds12,hash").storeLockTimeout(Duration.ofSeconds(1)));
    register("lost", 2);
    for (Launched p : cycle(cycler, "lost", 3)) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    Map<String, String> ds12 = server.setupFork(Proc.of("lost", 0));
    try (HeldReaderLock lock = HeldReaderLock.takeDs12(server.gdsDirectories().get(0))) {
      for (Launched p : cycle(cycler, "lost", 1)) {
        assertEquals(0, p.await(WAIT), describe(p));
        assertTrue(p.stdout().contains("cycles=1"), describe(p));
      }
      Launched keys =
          Launched.start(check, ds12, "--timeout", "60", "--init", "--get-job-keys", "--finalize");
      started.add(keys);
      // Checked by what it printed, not by its exit: this registration gives no app number, so
      // the step stops at pmix.appnum, which it gets after these.
      assertTrue(keys.await(WAIT) != -1, () -> "hung: " + describe(keys));
      assertTrue(keys.stdout().contains("pmix.lrank@self=UINT16:0"), describe(keys));
      assertTrue(keys.stdout().contains("pmix.nrank@self=UINT16:0"), describe(keys));
      Map<String, String> env = server.setupFork(Proc.of("lost", 0));
      assertEquals("hash", env.get("PMIX_GDS_MODULE"), env::toString);
      assertFalse(env.containsKey(GdsKind.ESH_BASE_PATH), env::toString);
      for (Launched p : cycle(cycler, "lost", 2)) {
        assertEquals(0, p.await(WAIT), describe(p));
      }

      Path retired = Path.of(ds12.get(GdsKind.ESH_BASE_PATH));
      register("found", 2);
      Map<String, String> fresh = server.setupFork(Proc.of("found", 0));
      assertEquals("ds12,hash", fresh.get("PMIX_GDS_MODULE"), fresh::toString);
      Path dir = Path.of(fresh.get(GdsKind.ESH_BASE_PATH));
      assertFalse(dir.equals(retired), dir::toString);
      assertEquals(List.of(dir), server.gdsDirectories());
      try (DstoreReader r =
          DstoreReader.attach(
              GdsKind.DS12, dir, "found", WireFormat.of(server.options().childBufferType()),
              WAIT)) {
        List<Info> job =
            Await.until(() -> r.fetchRecords(Proc.wildcard("found")).orElse(List.of()),
                l -> !l.isEmpty(), WAIT);
        assertEquals(List.of(Value.uint32(2)), valuesOf(job, Keys.JOB_SIZE.name()));
      }
      for (Launched p : cycle(cycler, "found", 2)) {
        assertEquals(0, p.await(WAIT), describe(p));
        assertTrue(p.stdout().contains("cycles=2"), describe(p));
      }
      assertTrue(Files.isDirectory(retired), "removed while a namespace lives in it");
      assertEquals(
          List.of(
              new ServerSnapshot.StoreView("ds12", dir.toString(), false, List.of("found")),
              new ServerSnapshot.StoreView("ds12", retired.toString(), true, List.of("lost"))),
          server.snapshot().stores());
      assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace("lost"));
      Await.until(() -> !Files.exists(retired), Boolean.TRUE::equals, WAIT);
      assertEquals(
          List.of(new ServerSnapshot.StoreView("ds12", dir.toString(), false, List.of("found"))),
          server.snapshot().stores());
      assertEquals(dir.toString(), server.setupFork(Proc.of("found", 1)).get(GdsKind.ESH_BASE_PATH));
    }
  }

  /**
   * With ds21 and ds12 served, a ds12 retired by a lost reader is left out only where it was
   * used: the namespaces that live in it keep ds21 (their processes set up from then on are told
   * "ds21,hash" and run), and a namespace registered after it is told of both ds21 and a fresh
   * ds12.
   */
  @Test
  void aRetiredStoreIsReplacedAndItsNamespacesKeepTheOtherStore() throws Exception {
    Path cycler = CPrograms.compile("src/test/c/server_it_client.c");
    start(ServerOptions.builder().gds("ds21,ds12,hash").storeLockTimeout(Duration.ofSeconds(1)));
    register("old", 2);
    Map<String, String> before = server.setupFork(Proc.of("old", 0));
    assertEquals("ds21,ds12,hash", before.get("PMIX_GDS_MODULE"), before::toString);
    Path ds12 = server.gdsDirectories().get(1);
    try (DstoreReader r =
        DstoreReader.attach(
            GdsKind.DS12, ds12, "old", WireFormat.of(server.options().childBufferType()), WAIT)) {
      Await.until(() -> r.fetchRecords(Proc.wildcard("old")).orElse(List.of()),
          l -> !l.isEmpty(), WAIT); // written before the lock is lost
    }
    try (HeldReaderLock lock = HeldReaderLock.takeDs12(ds12)) {
      register("during", 2); // its job data waits for the ds12 lock, which retires that store
      Await.until(
          () -> server.setupFork(Proc.of("old", 0)).get("PMIX_GDS_MODULE"), "ds21,hash"::equals,
          WAIT);
      Map<String, String> during = server.setupFork(Proc.of("during", 1));
      assertEquals("ds21,hash", during.get("PMIX_GDS_MODULE"), during::toString);
      assertEquals(before.get("PMIX_DSTORE_21_BASE_PATH"), during.get("PMIX_DSTORE_21_BASE_PATH"));
      assertFalse(during.containsKey(GdsKind.ESH_BASE_PATH), during::toString);
      for (Launched p : cycle(cycler, "old", 1)) {
        assertEquals(0, p.await(WAIT), describe(p));
      }

      register("after", 2);
      Map<String, String> after = server.setupFork(Proc.of("after", 0));
      assertEquals("ds21,ds12,hash", after.get("PMIX_GDS_MODULE"), after::toString);
      assertEquals(before.get("PMIX_DSTORE_21_BASE_PATH"), after.get("PMIX_DSTORE_21_BASE_PATH"));
      assertFalse(ds12.toString().equals(after.get(GdsKind.ESH_BASE_PATH)), after::toString);
      // On the fresh ds12, not ds21.
      for (Launched p : List.of(launch("after", 0, "ds12,hash", FLOW),
          launch("after", 1, "ds12,hash", FLOW))) {
        assertEquals(0, p.await(WAIT), describe(p));
        assertTrue(p.stdout().contains("STEP get-peers OK"), describe(p));
      }
    }
  }

  /**
   * Both ranks of {@code nspace}, registered (again) as a launcher starting them does, each
   * cycling init/put/fence/get-peers/finalize {@code n} times.
   */
  private List<Launched> cycle(Path exe, String nspace, int n) throws IOException {
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      assertEquals(
          Status.OPERATION_SUCCEEDED,
          server.registerClient(Proc.of(nspace, r), Launched.myUid(), Launched.myGid()));
      Launched p = Launched.start(exe, server.setupFork(Proc.of(nspace, r)), "cycles",
          Integer.toString(n));
      started.add(p);
      ps.add(p);
    }
    return ps;
  }

  /**
   * The job data is in the store once the namespace and its clients are registered, before any
   * process has connected (so the first inits do not wait for the write), and it is there once:
   * the first client's REQ adds only its pmix.bfrops.mod.
   */
  @Test
  void theJobDataIsStoredOnceBeforeAnyClientConnects() throws Exception {
    start(ServerOptions.builder().gds("ds21,hash"));
    register("early", 2);
    Proc job = Proc.wildcard("early");
    Path ds21 = server.gdsDirectories().get(0);
    try (DstoreReader r =
        DstoreReader.attach(
            GdsKind.DS21, ds21, "early", WireFormat.of(server.options().childBufferType()),
            Duration.ofSeconds(30))) {
      List<Info> before = Await.until(() -> r.fetchRecords(job).orElse(List.of()),
          l -> !l.isEmpty(), WAIT);
      assertEquals(List.of(Value.uint32(2)), valuesOf(before, Keys.JOB_SIZE.name()));
      assertEquals(List.of(), valuesOf(before, Keys.BFROPS_MODULE.name()));
      assertEquals(0L, server.requestCounts().getOrDefault("REQ", 0L));

      List<Launched> ranks = List.of(launch("early", 0, "", FLOW), launch("early", 1, "", FLOW));
      for (Launched p : ranks) {
        assertEquals(0, p.await(WAIT), describe(p));
        assertTrue(p.stdout().contains("STEP get-peers OK"), describe(p));
      }
      List<Info> after = r.fetchRecords(job).orElseThrow();
      assertEquals(List.of(Value.uint32(2)), valuesOf(after, Keys.JOB_SIZE.name()), after::toString);
      assertEquals(1, valuesOf(after, Keys.BFROPS_MODULE.name()).size(), after::toString);
      assertEquals(before.size() + 1, after.size(), after::toString);
    }
  }

  private static List<Value> valuesOf(List<Info> records, String key) {
    return records.stream().filter(i -> i.key().equals(key)).map(Info::value)
        .collect(Collectors.toList());
  }

  @Test
  void clientsOfOneNamespaceOnDifferentModules() throws Exception {
    start(ServerOptions.builder());
    register("mixed", 3);
    String[] gds = {"ds21,hash", "ds12,hash", "hash"};
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      ps.add(launch("mixed", r, gds[r], FLOW));
    }
    for (Launched p : ps) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
  }

  /**
   * 200 init/finalize cycles of one rank (ds21's one slot is used by the first; libpmix's client
   * falls back to ds12 for the others, both written) and eight ranks cycling together; no file
   * names the namespaces after their deregistration.
   */
  @Test
  void cyclesLeaveNoSegmentBehind() throws Exception {
    start(ServerOptions.builder());
    register("cyc1", 1);
    register("cyc8", 8);
    Launched one = launch("cyc1", 0, "", "--timeout", "30", "--cycle", "200");
    List<Launched> eight = new ArrayList<>();
    for (int r = 0; r < 8; r++) {
      eight.add(launch("cyc8", r, "", "--timeout", "60", "--cycle", "10"));
    }
    assertEquals(0, one.await(WAIT), describe(one));
    assertTrue(one.stdout().contains("STEP cycle OK"), describe(one));
    for (Launched p : eight) {
      assertEquals(0, p.await(WAIT), describe(p));
    }
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace("cyc1"));
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace("cyc8"));
    Await.until(() -> uncheckedFiles("cyc"), List::isEmpty, WAIT);
  }

  /** Deregistered while its clients are still running: its files go at once. */
  @Test
  void aNamespaceDeregisteredWhileClientsRunLosesItsFiles() throws Exception {
    start(ServerOptions.builder());
    register("busy", 2);
    List<Launched> ps = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      ps.add(launch("busy", r, "", "--timeout", "60", "--init", "--put", "--commit",
          "--fence-collect", "--get-peers", "--sleep", "60000"));
    }
    Await.until(() -> uncheckedFiles("busy"), f -> f.stream().anyMatch(n -> n.contains("smdataseg")),
        WAIT);
    assertEquals(Status.OPERATION_SUCCEEDED, server.deregisterNspace("busy"));
    Await.until(() -> uncheckedFiles("busy"), List::isEmpty, WAIT);
    for (Launched p : ps) {
      p.process.destroyForcibly();
      p.process.waitFor();
    }
  }
  /**
   * A new server removes the store directories of dead servers in its tmpdir (the pid gone, or
   * alive but started long after the directory last changed: reused), never a live one's.
   */
  @Test
  void staleDirectoriesOfDeadServersGoLiveOnesStay() throws Exception {
    Path tmp = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "stale-");
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    Process live = new ProcessBuilder("sleep", "120").start();
    try {
      Await.condition("sleep started", () -> live.info().startInstant().isPresent(), WAIT);
      Path dead = Files.createDirectory(tmp.resolve("pmix_dstor_ds21_" + gone.pid()));
      Files.write(dead.resolve("smdataseg-x-0"), new byte[16]);
      Path liveDir = Files.createDirectory(tmp.resolve("pmix_dstor_ds12_" + live.pid()));
      Files.write(liveDir.resolve("dstore_sm.lock"), new byte[16]);
      Path reused = Files.createDirectory(tmp.resolve("pmix_dstor_ds21_" + live.pid() + ".3"));
      Files.setLastModifiedTime(reused,
          java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(3600)));
      Path mine = Files.createDirectory(
          tmp.resolve("pmix_dstor_ds21_" + ProcessHandle.current().pid() + ".99"));
      Path other = Files.createDirectory(tmp.resolve("pmix_dstor_other_" + gone.pid()));
      start(ServerOptions.builder().tmpdir(tmp));
      assertFalse(Files.exists(dead), "a dead server's directory stayed");
      assertFalse(Files.exists(reused), "a directory older than its pid's process stayed");
      assertTrue(Files.exists(liveDir.resolve("dstore_sm.lock")), "a live server's files went");
      assertTrue(Files.exists(mine), "this process's directory went");
      assertTrue(Files.exists(other), "a directory not named as a store went");
    } finally {
      live.destroyForcibly();
      live.waitFor();
      if (server != null) {
        server.close();
      }
      io.pmix.common.internal.gds.DstoreWriter.deleteTree(tmp);
    }
  }
}
