package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pmix.common.Status;
import io.pmix.dataserver.DataStoreOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The publish/lookup rules of docs/dataserver.md as real OpenPMIx 4.2.2
 * C clients ({@code src/test/c/ds_client.c}) see them through our server: name collisions (also
 * as Open MPI's MPI_Publish_name meets them), {@code NO_PERMISSIONS} against {@code NOT_FOUND},
 * two real users (processes started under other uids with {@code setpriv}), a crashed job's
 * names, the per-uid cap, and two {@code pmixrun} jobs sharing a standalone {@code
 * pmix-dataserver}. Every assertion is on the status or value libpmix (or libmpi) handed back to
 * the C program.
 */
class DataServiceIT {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /** Two users nobody else on a test machine is likely to be (numeric: no passwd entry). */
  private static final int USER_A = 47_101;

  private static final int USER_B = 47_202;

  /** The per-uid cap of the tests about eviction: three 1000-byte items fit, four do not. */
  private static final long CAP = 4096;

  private static final Pattern RESULT =
      Pattern.compile("^RESULT (\\d+) (\\S+) (\\S+) (-?\\d+) (\\S+)(?: (\\S+) (\\S+) (\\d+))?$");

  @RegisterExtension static final PmixTestExtension pmix = new PmixTestExtension();

  private static Path client;

  /** A missing toolchain skips the class, or fails it when CI=true (the extension decides). */
  @BeforeAll
  static void build() {
    client = CCompiler.compile(Path.of("src/test/c/ds_client.c"));
  }

  private static String client() {
    return client.toString();
  }

  /** One line of ds_client's output: what libpmix answered to one step. */
  record Result(
      int rank, String step, String key, int code, @Nullable String value,
      @Nullable String publisherNspace, int publisherRank) {
    Status status() {
      return Status.of(code);
    }
  }

  private static List<Result> results(JobResult r, int rank) {
    List<Result> out = new ArrayList<>();
    for (String line : r.stdoutLines(rank)) {
      Result x = parse(line);
      if (x != null) {
        out.add(x);
      }
    }
    return out;
  }

  private static @Nullable Result parse(String line) {
    Matcher m = RESULT.matcher(line);
    if (!m.matches()) {
      return null;
    }
    return new Result(
        Integer.parseInt(m.group(1)), m.group(2), m.group(3), Integer.parseInt(m.group(4)),
        m.group(6), m.group(7), m.group(8) == null ? -1 : Integer.parseInt(m.group(8)));
  }

  /** The answer to step {@code step} on {@code key}, the {@code nth} such (0 first). */
  private static Result answer(List<Result> rs, String step, String key, int nth) {
    int seen = 0;
    for (Result x : rs) {
      if (x.step().equals(step) && x.key().equals(key) && seen++ == nth) {
        return x;
      }
    }
    throw new AssertionError("no answer #" + nth + " to " + step + " " + key + " in " + rs);
  }

  private static void assertStatus(Status want, Result got, PmixRunProcess p) {
    assertEquals(want, got.status(), () -> got + "\n" + p.describe());
  }

  private static void assertFound(String value, String publisherNspace, Result got,
      PmixRunProcess p) {
    assertEquals(Status.SUCCESS, got.status(), () -> got + "\n" + p.describe());
    assertEquals(value, got.value(), () -> got + "\n" + p.describe());
    assertEquals(publisherNspace, got.publisherNspace(), () -> got + "\n" + p.describe());
  }

  private static void assertStatus(Status want, Result got, JobResult job) {
    assertEquals(want, got.status(), () -> got + "\n" + job.describe());
  }

  private static void assertFound(String value, String publisherNspace, Result got, JobResult job) {
    assertEquals(Status.SUCCESS, got.status(), () -> got + "\n" + job.describe());
    assertEquals(value, got.value(), () -> got + "\n" + job.describe());
    assertEquals(publisherNspace, got.publisherNspace(), () -> got + "\n" + job.describe());
  }

  /** A directory every user may write to, for the files that order two jobs' steps. */
  private static Path sharedDir() throws IOException {
    Path base = Path.of(System.getProperty("basedir", ".")).resolve("target/ds-it");
    Files.createDirectories(base);
    Path d = Files.createTempDirectory(base, "sync-");
    Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxrwxrwx"));
    return d;
  }

  /**
   * MPI_Publish_name's collision: two processes publish one key on the default range (the
   * session); the second gets PMIX_ERR_DUPLICATE_KEY and the first publication is untouched.
   */
  @Test
  void twoClientsPublishingOneNameCollide() {
    JobResult r =
        pmix.server().job(2).command(client(),
                "--rank", "0", "publish:ompi.svc=first", "fence",
                "--rank", "1", "publish:ompi.svc=second", "fence",
                "lookup:ompi.svc", "finalize")
            .run(LIMIT);
    assertEquals(List.of(0, 0), r.exitCodes(), r::describe);
    assertStatus(Status.SUCCESS, answer(results(r, 0), "publish", "ompi.svc", 0), r);
    assertStatus(Status.ERR_DUPLICATE_KEY, answer(results(r, 1), "publish", "ompi.svc", 0), r);
    for (int rank = 0; rank < 2; rank++) {
      Result l = answer(results(r, rank), "lookup", "ompi.svc", 0);
      assertFound("first", r.nspace(), l, r);
      assertEquals(0, l.publisherRank(), r::describe);
    }
  }

  /**
   * The same collision through Open MPI 4.1.4: the second MPI_Publish_name of a service name
   * fails (Open MPI reports PMIX_ERR_DUPLICATE_KEY with the class MPI_ERR_INTERN; it has no
   * more specific mapping), and every rank's MPI_Lookup_name still finds the first port.
   */
  @Test
  void aSecondMpiPublishNameOfAServiceFails() throws Exception {
    Path exe =
        PmixRunIT.mpicc(
            Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/mpi_publish_twice.c"));
    JobResult r = pmix.server().job(2).slurmEnv(true).command(exe.toString()).run(LIMIT);
    assertEquals(List.of(0, 0), r.exitCodes(), r::describe);
    assertTrue(r.stdoutLines(0).contains("PUBLISH 0 0 MPI_SUCCESS: no errors"), r::describe);
    String second =
        r.stdoutLines(1).stream().filter(l -> l.startsWith("PUBLISH 1 ")).findFirst()
            .orElseThrow(() -> new AssertionError(r.describe()));
    assertTrue(!second.startsWith("PUBLISH 1 0 "), r::describe);
    for (int rank = 0; rank < 2; rank++) {
      assertTrue(r.stdoutLines(rank).contains("LOOKUP " + rank + " 0 port-of-rank-0"),
          r::describe);
    }
  }

  /**
   * A range is a set of processes: the same key on PMIX_RANGE_NAMESPACE in two running jobs names
   * two disjoint sets and does not collide; each job reads its own value.
   */
  @Test
  void namespaceRangesOfTwoJobsDoNotCollide() throws IOException {
    Path sync = sharedDir();
    String aReady = sync.resolve("a-ready").toString();
    String bDone = sync.resolve("b-done").toString();
    RunningJob a =
        pmix.server().job(1).command(client(),
                "--range", "namespace", "publish:job.port=port-a", "touch:" + aReady,
                "await:" + bDone, "--range", "namespace", "lookup:job.port", "finalize")
            .start();
    RunningJob b =
        pmix.server().job(1).command(client(),
                "await:" + aReady, "--range", "namespace", "publish:job.port=port-b",
                "--range", "namespace", "lookup:job.port", "touch:" + bDone, "finalize")
            .start();
    JobResult ra = a.await(LIMIT);
    JobResult rb = b.await(LIMIT);
    assertTrue(ra.succeeded() && rb.succeeded(), () -> ra.describe() + rb.describe());
    assertStatus(Status.SUCCESS, answer(results(rb, 0), "publish", "job.port", 0), rb);
    assertFound("port-a", ra.nspace(), answer(results(ra, 0), "lookup", "job.port", 0), ra);
    assertFound("port-b", rb.nspace(), answer(results(rb, 0), "lookup", "job.port", 0), rb);
  }

  /**
   * A lookup refused data it would have found is PMIX_ERR_NO_PERMISSIONS, not NOT_FOUND: here the
   * publisher's accessor list names only another uid, which keeps the publisher itself out; a key
   * nobody published is NOT_FOUND. The owner may still remove what it cannot read.
   */
  @Test
  void noPermissionsIsNotNotFound() {
    JobResult r =
        pmix.server().job(1).command(client(),
                "--access-uid", Integer.toString(USER_B), "publish:restricted=for-b",
                "lookup:restricted", "lookup:nobody.published.this",
                "unpublish:restricted", "lookup:restricted", "finalize")
            .run(LIMIT);
    assertTrue(r.succeeded(), r::describe);
    List<Result> rs = results(r, 0);
    assertStatus(Status.SUCCESS, answer(rs, "publish", "restricted", 0), r);
    assertStatus(Status.ERR_NO_PERMISSIONS, answer(rs, "lookup", "restricted", 0), r);
    assertStatus(Status.ERR_NOT_FOUND, answer(rs, "lookup", "nobody.published.this", 0), r);
    assertStatus(Status.SUCCESS, answer(rs, "unpublish", "restricted", 0), r);
    assertStatus(Status.ERR_NOT_FOUND, answer(rs, "lookup", "restricted", 1), r);
  }

  /**
   * Two real users on one server (processes under other uids, started with {@code setpriv}):
   * B cannot read A's default-private item (NO_PERMISSIONS) but reads what A shared with it; B's
   * unpublish of A's keys succeeds and removes nothing; B cannot publish over A's visible name;
   * B's publications beyond the per-uid cap evict B's own oldest item and never one of A's; B's
   * publish larger than the cap is refused and evicts nothing.
   */
  @Test
  void twoUsersShareTheStoreButNotTheirData() throws IOException {
    requireRoot();
    TestingPmixServer server =
        pmix.newServer(b -> b.dataStoreOptions(DataStoreOptions.builder().maxBytesPerUid(CAP).build()));
    Path sync = sharedDir();
    String aReady = sync.resolve("a-ready").toString();
    String bDone = sync.resolve("b-done").toString();
    String a = Integer.toString(USER_A);
    String b = Integer.toString(USER_B);
    RunningJob ja =
        server.job(1).user(USER_A, USER_A).command(client(),
                "publish:a.private=a-secret",
                // A names itself too: an accessor list that left A out would lock A out.
                "--access-uid", b, "--access-uid", a, "publish:a.shared=a-for-b",
                "publish-size:a.big1=1000", "publish-size:a.big2=1000",
                "touch:" + aReady, "await:" + bDone,
                "lookup:a.private", "lookup:a.shared", "lookup:a.big1", "lookup:a.big2",
                "finalize")
            .start();
    RunningJob jb =
        server.job(1).user(USER_B, USER_B).command(client(),
                "await:" + aReady,
                "lookup:a.private", "lookup:a.shared",
                "unpublish:a.private", "unpublish:a.shared",
                "lookup:a.shared", "publish:a.shared=b-takes-it",
                "publish-size:b.big1=1000", "publish-size:b.big2=1000",
                "publish-size:b.big3=1000", "publish-size:b.big4=1000",
                "lookup:b.big1", "lookup:b.big4",
                "publish-size:b.huge=5000", "lookup:b.huge", "lookup:b.big2", "lookup:b.big4",
                "touch:" + bDone, "finalize")
            .start();
    JobResult ra = ja.await(LIMIT);
    JobResult rb = jb.await(LIMIT);
    assertTrue(ra.succeeded() && rb.succeeded(), () -> ra.describe() + rb.describe());
    List<Result> as = results(ra, 0);
    List<Result> bs = results(rb, 0);
    for (Result x : as) {
      if (x.step().startsWith("publish")) {
        assertStatus(Status.SUCCESS, x, ra);
      }
    }
    assertStatus(Status.ERR_NO_PERMISSIONS, answer(bs, "lookup", "a.private", 0), rb);
    assertFound("a-for-b", ra.nspace(), answer(bs, "lookup", "a.shared", 0), rb);
    assertStatus(Status.SUCCESS, answer(bs, "unpublish", "a.private", 0), rb);
    assertStatus(Status.SUCCESS, answer(bs, "unpublish", "a.shared", 0), rb);
    assertFound("a-for-b", ra.nspace(), answer(bs, "lookup", "a.shared", 1), rb);
    assertStatus(Status.ERR_DUPLICATE_KEY, answer(bs, "publish", "a.shared", 0), rb);
    for (int i = 1; i <= 4; i++) {
      assertStatus(Status.SUCCESS, answer(bs, "publish-size", "b.big" + i, 0), rb);
    }
    // The fourth went over the cap: B's least recently used item went, not one of A's.
    assertStatus(Status.ERR_NOT_FOUND, answer(bs, "lookup", "b.big1", 0), rb);
    assertFound("len=1000", rb.nspace(), answer(bs, "lookup", "b.big4", 0), rb);
    assertStatus(Status.ERR_OUT_OF_RESOURCE, answer(bs, "publish-size", "b.huge", 0), rb);
    assertStatus(Status.ERR_NOT_FOUND, answer(bs, "lookup", "b.huge", 0), rb);
    assertFound("len=1000", rb.nspace(), answer(bs, "lookup", "b.big2", 0), rb);
    assertFound("len=1000", rb.nspace(), answer(bs, "lookup", "b.big4", 1), rb);
    // A, after all of that, still has every item it published.
    assertFound("a-secret", ra.nspace(), answer(as, "lookup", "a.private", 0), ra);
    assertFound("a-for-b", ra.nspace(), answer(as, "lookup", "a.shared", 0), ra);
    assertFound("len=1000", ra.nspace(), answer(as, "lookup", "a.big1", 0), ra);
    assertFound("len=1000", ra.nspace(), answer(as, "lookup", "a.big2", 0), ra);
  }

  /**
   * A publish larger than the whole per-uid cap: PMIX_ERR_OUT_OF_RESOURCE, nothing stored, and
   * nothing of the publisher's evicted to make room.
   */
  @Test
  void anOversizedPublishIsRefusedAndEvictsNothing() {
    TestingPmixServer server =
        pmix.newServer(b -> b.dataStoreOptions(DataStoreOptions.builder().maxBytesPerUid(CAP).build()));
    JobResult r =
        server.job(1).command(client(),
                "publish-size:keep1=1000", "publish-size:keep2=1000", "publish-size:huge=5000",
                "lookup:huge", "lookup:keep1", "lookup:keep2", "finalize")
            .run(LIMIT);
    assertTrue(r.succeeded(), r::describe);
    List<Result> rs = results(r, 0);
    assertStatus(Status.SUCCESS, answer(rs, "publish-size", "keep1", 0), r);
    assertStatus(Status.SUCCESS, answer(rs, "publish-size", "keep2", 0), r);
    assertStatus(Status.ERR_OUT_OF_RESOURCE, answer(rs, "publish-size", "huge", 0), r);
    assertStatus(Status.ERR_NOT_FOUND, answer(rs, "lookup", "huge", 0), r);
    assertFound("len=1000", r.nspace(), answer(rs, "lookup", "keep1", 0), r);
    assertFound("len=1000", r.nspace(), answer(rs, "lookup", "keep2", 0), r);
  }

  /**
   * A job that crashes (SIGKILL: no unpublish, no finalize) after publishing with the default
   * persistence (the namespace's lifetime): its name goes with the job, so the same user's next
   * job finds nothing and publishes the name afresh.
   */
  @Test
  void aCrashedJobsDefaultPersistenceNameIsGoneForTheNextJob() {
    TestingPmixServer server = pmix.server();
    JobResult crashed =
        server.job(1).command(client(), "publish:svc.name=gen1", "lookup:svc.name", "kill").run(LIMIT);
    assertTrue(crashed.exitCode(0) != 0, crashed::describe);
    assertFound("gen1", crashed.nspace(),
        answer(results(crashed, 0), "lookup", "svc.name", 0), crashed);
    JobResult next =
        server.job(1).command(client(),
                "lookup:svc.name", "publish:svc.name=gen2", "lookup:svc.name", "finalize")
            .run(LIMIT);
    assertTrue(next.succeeded(), next::describe);
    List<Result> rs = results(next, 0);
    assertStatus(Status.ERR_NOT_FOUND, answer(rs, "lookup", "svc.name", 0), next);
    assertStatus(Status.SUCCESS, answer(rs, "publish", "svc.name", 0), next);
    assertFound("gen2", next.nspace(), answer(rs, "lookup", "svc.name", 1), next);
  }

  /**
   * A job that aborts after publishing with PMIX_PERSIST_INDEF leaves its name behind. The owner
   * is the user, not the process: the same user's next job reads it, cannot publish over it (a
   * duplicate), but may take it back, by unpublishing and publishing, or in one step with {@code
   * prte.pub.replace}. Another user can do neither: its unpublish succeeds and removes nothing.
   */
  @Test
  void aCrashedJobsIndefiniteNameIsTakenBackByTheSameUsersNextJob() {
    requireRoot();
    TestingPmixServer server = pmix.server();
    String other = Integer.toString(USER_B);
    JobResult crashed =
        server.job(2).command(client(),
                "--rank", "0", "--persist", "indef", "--access-uid", other,
                "--access-uid", "0", "publish:svc.name=gen1", "fence", "--rank", "0", "abort:7")
            .run(LIMIT);
    assertEquals(Status.of(7), crashed.abort().orElseThrow(() -> new AssertionError(
        crashed.describe())).status(), crashed::describe);
    assertStatus(Status.SUCCESS, answer(results(crashed, 0), "publish", "svc.name", 0), crashed);

    JobResult stranger =
        server.job(1).user(USER_B, USER_B).command(client(),
                "lookup:svc.name", "unpublish:svc.name", "lookup:svc.name",
                "publish:svc.name=not-yours", "finalize")
            .run(LIMIT);
    assertTrue(stranger.succeeded(), stranger::describe);
    List<Result> ss = results(stranger, 0);
    assertFound("gen1", crashed.nspace(), answer(ss, "lookup", "svc.name", 0), stranger);
    assertStatus(Status.SUCCESS, answer(ss, "unpublish", "svc.name", 0), stranger);
    assertFound("gen1", crashed.nspace(), answer(ss, "lookup", "svc.name", 1), stranger);
    assertStatus(Status.ERR_DUPLICATE_KEY, answer(ss, "publish", "svc.name", 0), stranger);

    JobResult next =
        server.job(1).command(client(),
                "lookup:svc.name", "--persist", "indef", "publish:svc.name=gen2",
                "unpublish:svc.name", "--persist", "indef", "publish:svc.name=gen2",
                "lookup:svc.name",
                "--persist", "indef", "--replace", "publish:svc.name=gen3", "lookup:svc.name",
                "unpublish:svc.name", "finalize")
            .run(LIMIT);
    assertTrue(next.succeeded(), next::describe);
    List<Result> rs = results(next, 0);
    assertFound("gen1", crashed.nspace(), answer(rs, "lookup", "svc.name", 0), next);
    assertStatus(Status.ERR_DUPLICATE_KEY, answer(rs, "publish", "svc.name", 0), next);
    assertStatus(Status.SUCCESS, answer(rs, "unpublish", "svc.name", 0), next);
    assertStatus(Status.SUCCESS, answer(rs, "publish", "svc.name", 1), next);
    assertFound("gen2", next.nspace(), answer(rs, "lookup", "svc.name", 1), next);
    assertStatus(Status.SUCCESS, answer(rs, "publish", "svc.name", 2), next);
    assertFound("gen3", next.nspace(), answer(rs, "lookup", "svc.name", 2), next);
  }

  /**
   * Two {@code pmixrun} launchers (two JVMs, two PMIx servers) sharing one standalone {@code
   * bin/pmix-dataserver}: job B's waiting lookup is answered by job A's publication, and B's
   * attempt to publish the same name is a duplicate, because there is one store.
   */
  @Test
  void twoPmixrunJobsShareAStandaloneDataServer() throws Exception {
    Path sync = sharedDir();
    String bDone = sync.resolve("b-done").toString();
    Process ds =
        new ProcessBuilder(
                PmixRunProcess.repoRoot().resolve("bin/pmix-dataserver").toString(),
                "--port", "0", "--bind", "127.0.0.1")
            .redirectError(sync.resolve("dataserver.err").toFile())
            .start();
    try {
      String address = listeningAddress(ds, sync);
      // B first, so its lookup really waits for A's publish.
      PmixRunProcess b =
          PmixRunProcess.start("-n", "1", "--timeout", "60", "--dataserver", address, "--",
              client(), "--range", "global", "--wait", "--timeout", "30", "lookup:rdv.port",
              "--range", "global", "publish:rdv.port=from-b", "touch:" + bDone, "finalize");
      PmixRunProcess a =
          PmixRunProcess.start("-n", "1", "--timeout", "60", "--dataserver", address, "--",
              client(), "sleep:500", "--range", "global", "publish:rdv.port=from-a",
              "await:" + bDone, "finalize");
      b.await(LIMIT);
      a.await(LIMIT);
      assertEquals(0, a.exit(), a::describe);
      assertEquals(0, b.exit(), b::describe);
      Result pa = only(a.stdout(), "publish");
      Result lb = only(b.stdout(), "lookup");
      Result pb = only(b.stdout(), "publish");
      assertEquals(Status.SUCCESS, pa.status(), a::describe);
      assertEquals(Status.SUCCESS, lb.status(), b::describe);
      assertEquals("from-a", lb.value(), b::describe);
      // Published by A's job, a namespace of the other launcher.
      assertEquals(only(a.stdout(), "init").key(), lb.publisherNspace(), b::describe);
      assertTrue(!lb.publisherNspace().equals(only(b.stdout(), "init").key()), b::describe);
      assertEquals(Status.ERR_DUPLICATE_KEY, pb.status(), b::describe);
    } finally {
      ds.destroy();
      if (!ds.waitFor(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
        ds.destroyForcibly();
      }
    }
  }

  /**
   * PMIX_PERSIST_PROC data goes when its publisher exits, PMIX_PERSIST_APP data when every process
   * of the publisher's app has exited, PMIX_PERSIST_SESSION data stays: under pmixrun with its
   * embedded store and with a standalone pmix-dataserver, a job of two apps (rank 0; ranks 1 and
   * 2). Rank 1 publishes one key of each, all of them see the three after a fence, rank 1 exits
   * after a second fence; rank 0 waits until the PROC key is gone (the exit's effect: its
   * lookups answer NOT_FOUND) and still finds the APP key (rank 2 of the app lives); rank 2
   * exits when rank 0 says so, and rank 0 waits until the APP key is gone; the SESSION key is
   * still found. (PRRTE 3.0.14 keeps PROC and APP data until the job ends: libpmix-facts.md §4.)
   */
  @ParameterizedTest(name = "standalone data server: {0}")
  @ValueSource(booleans = {false, true})
  void persistProcAndAppDataGoWithTheirProcessAndApp(boolean standalone) throws Exception {
    Path sync = sharedDir();
    String go = sync.resolve("rank2-go").toString();
    List<String> steps = List.of(
        "--rank", "1", "--persist", "proc", "publish:p1=proc-data",
        "--rank", "1", "--persist", "app", "publish:a1=app-data",
        "--rank", "1", "--persist", "session", "publish:s1=session-data",
        "fence", "lookup:p1", "lookup:a1", "lookup:s1", "fence",
        "--rank", "1", "finalize",
        "--rank", "0", "gone:p1", "--rank", "0", "lookup:a1", "--rank", "0", "touch:" + go,
        "--rank", "2", "await:" + go, "--rank", "2", "finalize",
        "--rank", "0", "gone:a1", "--rank", "0", "lookup:s1", "--rank", "0", "finalize");
    Process ds = null;
    List<String> args = new ArrayList<>(List.of("--timeout", "90"));
    if (standalone) {
      ds = new ProcessBuilder(
              PmixRunProcess.repoRoot().resolve("bin/pmix-dataserver").toString(),
              "--port", "0", "--bind", "127.0.0.1")
          .redirectError(sync.resolve("dataserver.err").toFile())
          .start();
      args.addAll(List.of("--dataserver", listeningAddress(ds, sync)));
    }
    try {
      args.addAll(List.of("-n", "1", client()));
      args.addAll(steps);
      args.addAll(List.of(":", "-n", "2", client()));
      args.addAll(steps);
      PmixRunProcess p = PmixRunProcess.run(LIMIT, args.toArray(new String[0]));
      assertEquals(0, p.exit(), p::describe);
      List<Result> rs = p.stdout().lines().map(DataServiceIT::parse)
          .filter(x -> x != null).toList();
      String nspace = rs.stream().filter(x -> x.step().equals("init")).findFirst().orElseThrow()
          .key();
      for (int rank = 0; rank < 3; rank++) {
        int r = rank;
        List<Result> mine = rs.stream().filter(x -> x.rank() == r).toList();
        assertFound("proc-data", nspace, answer(mine, "lookup", "p1", 0), p);
        assertFound("app-data", nspace, answer(mine, "lookup", "a1", 0), p);
        assertFound("session-data", nspace, answer(mine, "lookup", "s1", 0), p);
      }
      List<Result> zero = rs.stream().filter(x -> x.rank() == 0).toList();
      assertStatus(Status.ERR_NOT_FOUND, answer(zero, "gone", "p1", 0), p);
      // Rank 2, of the publisher's app, still runs: the APP key stays.
      assertFound("app-data", nspace, answer(zero, "lookup", "a1", 1), p);
      assertStatus(Status.ERR_NOT_FOUND, answer(zero, "gone", "a1", 0), p);
      assertFound("session-data", nspace, answer(zero, "lookup", "s1", 1), p);
    } finally {
      if (ds != null) {
        ds.destroy();
        if (!ds.waitFor(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
          ds.destroyForcibly();
        }
      }
    }
  }

  private static Result only(String stdout, String step) {
    List<Result> l = stdout.lines().map(DataServiceIT::parse)
        .filter(x -> x != null && x.step().equals(step)).toList();
    assertEquals(1, l.size(), () -> step + " in:\n" + stdout);
    return l.get(0);
  }

  /** The HOST:PORT the data server prints once it listens. */
  private static String listeningAddress(Process ds, Path dir) throws Exception {
    CompletableFuture<String> line =
        CompletableFuture.supplyAsync(() -> {
          try {
            BufferedReader in = new BufferedReader(new InputStreamReader(ds.getInputStream(), UTF_8));
            return in.readLine();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
    String l = line.get(Timing.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
    String prefix = "pmix-dataserver listening on ";
    if (l == null || !l.startsWith(prefix)) {
      throw new AssertionError("pmix-dataserver said " + l + "; stderr: "
          + Files.readString(dir.resolve("dataserver.err"), UTF_8));
    }
    return l.substring(prefix.length()).trim();
  }

  /**
   * Tests that start processes under other uids need root: skipped without it, except where the
   * interop tests are required (CI=true), where a skip would hide that they never ran.
   */
  private static void requireRoot() {
    boolean root = Launch.ids()[0] == 0;
    if (!root && PmixTestExtension.interopRequired()) {
      throw new AssertionError("CI=true: this test starts processes under other uids and needs root");
    }
    assumeTrue(root, "starting processes under other uids needs root");
  }
}
