package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import io.pmix.common.testing.Await;
import io.pmix.dataserver.DataServer;
import io.pmix.dataserver.DataStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code bin/pmixrun} as a user runs it, with real libpmix 4.2.2 clients ({@code
 * pmix_client_check}): the basic flow at several sizes, init/finalize cycles, abort, timeout,
 * SIGTERM, hostile peers, plain commands, command-line errors and Open MPI programs (collectives,
 * a ring, publish/lookup).
 */
@ExtendWith(PmixTestExtension.class)
class PmixRunIT {
  private static final Duration LIMIT = Duration.ofMinutes(2);

  /** The steps of the basic flow, in the order the client reports them. */
  private static final List<String> FLOW =
      List.of(
          "init", "get-job-keys", "put", "commit", "fence", "fence-collect", "get-peers",
          "publish", "lookup", "unpublish", "event-send", "event-wait", "query", "finalize");

  private static String client;

  @BeforeAll
  static void build() {
    client = CCompiler.clientCheck().toString();
  }

  private static List<String> flowArgs(String... head) {
    List<String> a = new ArrayList<>(List.of(head));
    a.add("--");
    a.add(client);
    a.add("--strict-scope");
    a.add("--timeout");
    a.add("60");
    for (String s : FLOW) {
      a.add("--" + s);
    }
    return a;
  }

  private static String ranks(int n) {
    return IntStream.range(0, n).mapToObj(Integer::toString).collect(Collectors.joining(","));
  }

  @ParameterizedTest(name = "N={0}")
  @ValueSource(ints = {1, 2, 8, 32})
  void basicFlow(int n) {
    PmixRunProcess p =
        PmixRunProcess.run(
            LIMIT,
            flowArgs("-n", Integer.toString(n), "--tag-output", "--report-state", "state.json")
                .toArray(new String[0]));
    assertEquals(0, p.exit(), p::describe);
    String job = p.taggedJobId();
    Map<Integer, List<String>> byRank = p.taggedStdout();
    assertEquals(n, byRank.size(), p::describe);
    for (int rank = 0; rank < n; rank++) {
      final int r = rank;
      List<String> lines = byRank.get(r);
      List<String> steps = new ArrayList<>();
      for (String l : lines) {
        assertTrue(l.startsWith("STEP ") && l.contains(" OK "), () -> "rank: " + l + "\n" + p.describe());
        steps.add(l.split(" ", -1)[1]);
      }
      assertEquals(FLOW, steps, p::describe);
      String keys = lines.get(1);
      for (String want :
          List.of(
              "pmix.job.size@wild=UINT32:" + n,
              "pmix.univ.size@wild=UINT32:" + n,
              "pmix.max.size@wild=UINT32:" + n,
              "pmix.local.size@wild=UINT32:" + n,
              "pmix.lpeers@wild=STRING:" + ranks(n),
              "pmix.jobid@wild=STRING:" + job,
              "pmix.nspace@wild=STRING:" + job,
              "pmix.num.nodes@wild=UINT32:1",
              "pmix.rank@invalid=PROC_RANK:" + r,
              "pmix.lrank@self=UINT16:" + r,
              "pmix.nrank@self=UINT16:" + r,
              "pmix.appnum@self=UINT32:0",
              "pmix.nodeid@self=UINT32:0",
              "pmix.grank@self=PROC_RANK:" + r,
              "missing-optional=0")) {
        assertTrue(keys.contains(want), () -> "rank " + r + " lacks " + want + ": " + keys);
      }
    }
    JsonNode report = p.report("state.json");
    assertEquals(0, report.path("job").path("status").asInt());
    JsonNode before = report.path("beforeDeregister");
    assertEquals(n, before.path("peers").size(), report::toPrettyString);
    for (JsonNode peer : before.path("peers")) {
      assertEquals(job, peer.path("nspace").asText());
      assertEquals("client", peer.path("role").asText());
      assertEquals("tombstone", peer.path("state").asText(), report::toPrettyString);
    }
    JsonNode ns = before.path("namespaces").get(0);
    assertEquals(job, ns.path("nspace").asText());
    assertEquals(n, ns.path("nlocalprocs").asInt());
    assertEquals(n, ns.path("nfinalized").asInt());
    for (JsonNode rank : ns.path("ranks")) {
      assertEquals(0, rank.path("procCount").asInt(), report::toPrettyString);
    }
    // pmixrun's stores, best first, the job living in each; none left to it after.
    JsonNode stores = before.path("stores");
    assertEquals(2, stores.size(), report::toPrettyString);
    for (int i = 0; i < 2; i++) {
      JsonNode st = stores.get(i);
      assertEquals(i == 0 ? "ds21" : "ds12", st.path("module").asText(), report::toPrettyString);
      assertFalse(st.path("retired").asBoolean(), report::toPrettyString);
      assertEquals(job, st.path("namespaces").path(0).asText(), report::toPrettyString);
      assertEquals(1, st.path("namespaces").size(), report::toPrettyString);
    }
    JsonNode after = report.path("afterDeregister");
    assertEquals(0, after.path("peers").size(), report::toPrettyString);
    assertEquals(0, after.path("namespaces").size(), report::toPrettyString);
    for (JsonNode st : after.path("stores")) {
      assertEquals(0, st.path("namespaces").size(), report::toPrettyString);
    }
  }

  @Test
  void initFinalizeCycles() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "4", "--report-state", "state.json", "--",
            client, "--cycle", "3");
    assertEquals(0, p.exit(), p::describe);
    assertEquals(
        4,
        p.stdout().lines().filter(l -> l.startsWith("STEP cycle OK") && l.contains("iterations=3"))
            .count(),
        p::describe);
    assertEquals(12, count(p.stdout(), "STEP cycle."), p::describe);
    JsonNode ns = p.report("state.json").path("beforeDeregister").path("namespaces").get(0);
    assertEquals(4, ns.path("nfinalized").asInt());
  }

  private static long count(String text, String prefix) {
    return text.lines().filter(l -> l.startsWith(prefix)).count();
  }

  @Test
  void abortKillsTheJobAndSaysWhoAndWhy() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "4", "--report-state", "state.json", "--",
            client, "--init", "--abort", "--abort-rank", "1", "--abort-status", "7");
    assertEquals(7, p.exit(), p::describe);
    String err = p.stderr();
    assertTrue(err.contains("pmixrun: rank 1 called PMIx_Abort with status 7:"
        + " \"pmix_client_check abort test from rank 1\""), p::describe);
    assertTrue(err.contains("aborted by rank 1 with status 7"), p::describe);
    assertTrue(p.elapsed().compareTo(Duration.ofSeconds(60)) < 0, p::describe);
    JsonNode job = p.report("state.json").path("job");
    assertEquals(1, job.path("abort").path("rank").asInt());
    assertEquals(7, job.path("abort").path("status").asInt());
    // The bystanders were blocked in a fence without timeout: killed (143), or failed by the
    // fence once the aborter was gone (1); none finished.
    for (int r : List.of(0, 2, 3)) {
      int code = job.path("exitCodes").get(r).asInt();
      assertTrue(code == 143 || code == 137 || code == 1, () -> "rank " + r + " exit " + code);
    }
  }

  @Test
  void aRankThatFailsBeforeItConnectsDoesNotLeaveTheFenceWaiting() {
    // Rank 2 exits 3 before PMIx_Init: the server never saw it, yet the fence of ranks 0 and 1
    // names it. The launcher deregisters it, as a host must, so the fence ends among the
    // survivors (as 4.2.2 counts it, OK, or PARTIAL_SUCCESS when the fence had begun) instead
    // of waiting until --timeout; the job then fails with the rank's status.
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "60", "--report-state", "state.json",
            "--", client, "--init", "--fence", "--finalize", ":", "-n", "1", "sh", "-c",
            "exit 3");
    assertEquals(3, p.exit(), p::describe);
    assertTrue(p.stderr().contains("rank 2 (pid "), p::describe);
    assertTrue(p.stderr().contains("exited with status 3"), p::describe);
    assertFalse(p.stderr().contains("timeout"), p::describe);
    long fenced =
        p.stdout().lines()
            .filter(l -> l.startsWith("STEP fence OK")
                || l.startsWith("STEP fence FAIL PARTIAL_SUCCESS(-52)"))
            .count();
    assertEquals(2, fenced, p::describe);
    assertTrue(p.elapsed().compareTo(Duration.ofSeconds(30)) < 0, p::describe);
    JsonNode job = p.report("state.json").path("job");
    assertEquals(3, job.path("exitCodes").get(2).asInt(), job::toPrettyString);
  }

  @Test
  void timeoutKillsEverything() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "3", "--timeout", "2", "--report-state", "state.json",
            "--", client, "--init", "--sleep", "60000");
    assertEquals(124, p.exit(), p::describe);
    assertTrue(p.stderr().contains("pmixrun: timeout: the job ran for 2 s (--timeout 2);"
        + " killing 3 processes (ranks 0-2)"), p::describe);
    assertTrue(p.stderr().contains("timed out after 2 s"), p::describe);
    assertTrue(p.elapsed().compareTo(Duration.ofSeconds(30)) < 0, p::describe);
    assertTrue(p.report("state.json").path("job").path("timedOut").asBoolean());
  }

  @Test
  void sigtermKillsEverythingAndSaysSo() throws Exception {
    try (PmixRunProcess p =
        PmixRunProcess.start("-n", "3", "--", client, "--init", "--sleep", "60000")) {
      long deadline = System.nanoTime() + Timing.seconds(60).toNanos();
      while (count(p.stdout(), "STEP init OK") < 3) {
        assertTrue(p.process.isAlive() && System.nanoTime() < deadline, p::describe);
        Thread.sleep(50);
      }
      // exec: the script's pid is the JVM's, and the clients are its children.
      List<ProcessHandle> children = p.process.children().toList();
      assertEquals(3, children.size(), p::describe);
      p.process.destroy(); // SIGTERM
      p.await(Duration.ofSeconds(30));
      assertEquals(128 + 15, p.exit(), p::describe);
      assertTrue(p.stderr().contains("pmixrun: received SIGTERM: killing 3 processes (ranks 0-2)"),
          p::describe);
      for (ProcessHandle c : children) {
        c.onExit().get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertFalse(c.isAlive());
      }
    }
  }

  @Test
  void garbageInsteadOfAHandshakeIsDroppedAndTheJobRuns() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "3", "--report-state", "state.json", "--", "bash",
            PmixRunProcess.script("garbage_first.sh").toString(), client, "--init", "--put",
            "--commit", "--fence-collect", "--get-peers", "--finalize");
    assertEquals(0, p.exit(), p::describe);
    assertTrue(p.stderr().contains("garbage sent to"), p::describe);
    assertEquals(18, p.stdout().split("\n").length, p::describe);
    JsonNode before = p.report("state.json").path("beforeDeregister");
    assertEquals(3, before.path("peers").size(), before::toPrettyString);
    for (JsonNode peer : before.path("peers")) {
      assertEquals("client", peer.path("role").asText());
    }
  }

  @Test
  void aClientKilledInAFenceLeavesTheOthersAndTheServerStanding() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "4", "--tag-output", "--report-state", "state.json", "--",
            "bash", PmixRunProcess.script("killed_in_fence.sh").toString(), client);
    JsonNode report = p.report("state.json");
    JsonNode codes = report.path("job").path("exitCodes");
    assertEquals(137, codes.get(2).asInt(), p::describe);
    assertEquals(137, p.exit(), p::describe); // rank 2 ended first, with SIGKILL's status
    Map<Integer, List<String>> out = p.taggedStdout();
    for (int r : List.of(0, 1, 3)) {
      List<String> lines = out.get(r);
      String fence =
          lines.stream().filter(l -> l.startsWith("STEP fence-collect ")).findFirst().orElse("");
      int code = codes.get(r).asInt();
      if (code == 0) {
        assertTrue(fence.contains(" OK "), p::describe);
        assertTrue(lines.get(lines.size() - 1).startsWith("STEP finalize OK"), p::describe);
      } else {
        // A clean failure: the fence returned an error status to the caller.
        assertEquals(1, code, p::describe);
        assertTrue(fence.contains(" FAIL "), p::describe);
      }
    }
    assertTrue(p.stderr().contains("rank 2 (pid"), p::describe);
    // The server was up to the end: both snapshots exist, and deregistration cleaned up.
    assertTrue(report.path("beforeDeregister").isObject(), report::toPrettyString);
    assertEquals(0, report.path("afterDeregister").path("peers").size(), report::toPrettyString);
    assertEquals(
        0, report.path("afterDeregister").path("namespaces").size(), report::toPrettyString);
  }

  @Test
  void plainCommandsAndTheFirstNonZeroExit() {
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "3", "--tag-output", "--", "sh", "-c",
            "echo \"rank $PMIX_RANK of $PMIX_NAMESPACE\"; echo oops >&2;"
                + " case $PMIX_RANK in 0) sleep 1; exit 5;; 2) exit 9;; esac");
    assertEquals(9, p.exit(), p::describe);
    String job = p.taggedJobId();
    for (int r = 0; r < 3; r++) {
      assertTrue(p.stdout().contains("[" + job + "," + r + "]<stdout>: rank " + r + " of " + job),
          p::describe);
      assertTrue(p.stdout().contains("[" + job + "," + r + "]<stderr>: oops")
          || p.stderr().contains("[" + job + "," + r + "]<stderr>: oops"), p::describe);
    }
    assertTrue(p.stderr().contains("rank 2 (pid"), p::describe);
    assertTrue(p.stderr().contains("exited with status 9"), p::describe);
    assertTrue(p.stderr().contains("rank 2 exited first with status 9; 2 of 3 processes exited"
        + " non-zero; exit status 9"), p::describe);
  }

  /**
   * A rank begins with no signal blocked, as Open MPI's mpirun starts its ranks: the JVM's
   * threads block SIGQUIT, which a started process would otherwise inherit (ChildSignals).
   */
  @Test
  void aRankStartsWithNoSignalBlocked() {
    PmixRunProcess p = PmixRunProcess.run(LIMIT, "-n", "2", "--", "grep", "SigBlk",
        "/proc/self/status");
    assertEquals(0, p.exit(), p::describe);
    assertEquals(2, p.stdout().split("SigBlk:\t0000000000000000\n", -1).length - 1,
        p::describe);
  }

  /**
   * Untagged, a rank writes to pmixrun's own standard output and error and reads an empty input
   * unless it is rank 0 (which reads pmixrun's): no pipe and no pump thread per rank, whose ends
   * in pmixrun made each later start slower (docs/architecture.md, "Starting processes");
   * tagged, its output goes through pmixrun.
   */
  @Test
  void untaggedRanksWriteToPmixrunsOwnStreams() throws IOException {
    // $$: the shell's own descriptors (a command substitution's output is a pipe of its own).
    String show = "echo \"rank $PMIX_RANK in $(readlink /proc/$$/fd/0) out $(readlink /proc/$$/fd/1)"
        + " err $(readlink /proc/$$/fd/2)\"";
    PmixRunProcess p = PmixRunProcess.run(LIMIT, "-n", "2", "--", "sh", "-c", show);
    assertEquals(0, p.exit(), p::describe);
    String out = p.out.toRealPath().toString();
    String err = p.dir.resolve("stderr").toRealPath().toString();
    for (int r = 0; r < 2; r++) {
      assertTrue(p.stdout().contains("rank " + r + " in /dev/null out " + out + " err " + err),
          p::describe);
    }
    PmixRunProcess tagged = PmixRunProcess.run(LIMIT, "-n", "2", "--tag-output", "--", "sh", "-c",
        show);
    assertEquals(0, tagged.exit(), tagged::describe);
    for (int r = 0; r < 2; r++) {
      assertTrue(tagged.stdout().matches("(?s).*,"+ r + "\\]<stdout>: rank " + r
          + " in /dev/null out pipe:\\[\\d+\\] err pipe:\\[\\d+\\].*"), tagged::describe);
    }
  }

  /**
   * Issue #18: with TMPDIR set, pmixrun makes its files there, where a C tool attaching by pid
   * ({@code pps --pid}: PMIX_SERVER_PIDINFO) searches; nothing of it remains after it ends.
   */
  @Test
  void aToolAttachingByPidFindsPmixrunUnderTmpdir() throws Exception {
    Path tmp = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "tmpdir-");
    Path stop = tmp.resolve("stop");
    try (PmixRunProcess p =
        PmixRunProcess.start(
            List.of(),
            Map.of("TMPDIR", tmp.toString()),
            "--tool-support", "-n", "1", "--", "sh", "-c",
            "while [ ! -e " + stop + " ]; do sleep 0.1; done")) {
      String suffix = ".tool." + p.process.pid();
      Await.condition(
          "pmix.<host>" + suffix + " under " + tmp,
          () -> listTree(tmp).stream().anyMatch(f -> f.getFileName().toString().endsWith(suffix)),
          Timing.scaled(Duration.ofSeconds(60)));
      ProcessBuilder pb =
          new ProcessBuilder("pps", "--pid", Long.toString(p.process.pid()))
              .redirectErrorStream(true)
              .redirectOutput(tmp.resolve("pps.out").toFile());
      pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
      pb.environment().remove("TEMP");
      pb.environment().remove("TMP");
      pb.environment().put("TMPDIR", tmp.toString());
      Process pps = pb.start();
      assertTrue(pps.waitFor(Timing.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS),
          "pps hung");
      String out = Files.readString(tmp.resolve("pps.out"), UTF_8);
      assertEquals(0, pps.exitValue(), out);
      assertTrue(out.contains("Active nspaces: ") && out.contains("@1"), out);
      Files.createFile(stop);
      p.await(LIMIT);
      assertEquals(0, p.exit(), p::describe);
    }
    List<Path> left = listTree(tmp);
    assertTrue(left.stream().noneMatch(f -> f.getFileName().toString().startsWith("pmixrun-")),
        left::toString);
  }

  /**
   * Issue #18: pmixrun starts and runs a job of C clients where /tmp is read-only (a private mount
   * namespace) and TMPDIR points elsewhere: neither it, its JVM nor its server writes to /tmp.
   */
  @Test
  void pmixrunRunsWhereTmpIsNotWritable() throws Exception {
    assumeTrue(
        Files.readAllLines(Path.of("/proc/self/status"), UTF_8).stream()
            .anyMatch(l -> l.matches("Uid:\\s+\\d+\\s+0\\s.*")),
        "needs root for a private mount namespace with a read-only /tmp");
    Path tmp = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "tmpdir-");
    List<String> wrapper =
        List.of("unshare", "-m", "--propagation", "private", "sh", "-c",
            "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp"
                + " && ! touch /tmp/pmixrun-ro-check 2>/dev/null && exec \"$0\" \"$@\"");
    try (PmixRunProcess p =
        PmixRunProcess.start(
            wrapper,
            // PMIXRUN_JAVA_OPTS empty: the script's own choice of java.io.tmpdir (TMPDIR) counts.
            Map.of("TMPDIR", tmp.toString(), "PMIXRUN_JAVA_OPTS", ""),
            "-n", "2", "--", client, "--init", "--put", "--commit", "--fence-collect",
            "--get-peers", "--finalize")) {
      p.await(LIMIT);
      assertEquals(0, p.exit(), p::describe);
    }
  }

  /**
   * A pmixrun killed with SIGKILL leaves files only in its own directory (its stores included),
   * and the next pmixrun in the same TMPDIR removes that directory (its pid is gone).
   */
  @Test
  void aSigkilledPmixrunLeavesOnlyItsDirectoryAndTheNextOneRemovesIt() throws Exception {
    Path tmp = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "tmpdir-");
    long pid;
    try (PmixRunProcess p =
        PmixRunProcess.start(
            List.of(), Map.of("TMPDIR", tmp.toString()),
            "-n", "2", "--", client, "--timeout", "60", "--init", "--put", "--commit",
            "--fence-collect", "--get-peers", "--sleep", "60000")) {
      pid = p.process.pid();
      String store = "pmix_dstor_ds21_" + pid;
      Await.condition(
          "a data segment in " + store,
          () -> listTree(tmp).stream().anyMatch(f -> f.getFileName().toString().startsWith(
              "smdataseg-") && f.getParent().getFileName().toString().equals(store)),
          Timing.scaled(Duration.ofSeconds(60)));
      List<ProcessHandle> children = p.process.descendants().toList();
      p.process.destroyForcibly(); // SIGKILL
      p.process.waitFor();
      for (ProcessHandle c : children) {
        c.destroyForcibly();
      }
      try (java.util.stream.Stream<Path> s = Files.list(tmp)) {
        List<String> top = s.map(f -> f.getFileName().toString()).collect(Collectors.toList());
        assertEquals(1, top.size(), top::toString);
        assertTrue(top.get(0).startsWith("pmixrun-" + pid + "-"), top::toString);
      }
    }
    PmixRunProcess next =
        PmixRunProcess.run(LIMIT, List.of(), Map.of("TMPDIR", tmp.toString()), "-n", "1", "--",
            "true");
    assertEquals(0, next.exit(), next::describe);
    assertEquals(List.of(tmp), listTree(tmp), "the killed pmixrun's directory stayed");
  }

  private static List<Path> listTree(Path dir) {
    try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
      return s.collect(Collectors.toList());
    } catch (IOException e) {
      // A file vanished while we walked: the caller polls again.
      return List.of();
    }
  }

  @Test
  void commandLineErrors() {
    PmixRunProcess none = PmixRunProcess.run(LIMIT, "--", "true");
    assertEquals(2, none.exit(), none::describe);
    assertTrue(none.stderr().contains("-n N is required"), none::describe);
    PmixRunProcess help = PmixRunProcess.run(LIMIT, "--help");
    assertEquals(0, help.exit(), help::describe);
    assertTrue(help.stdout().startsWith("usage: pmixrun -n N [options] [--] command"),
        help::describe);
    PmixRunProcess missing = PmixRunProcess.run(LIMIT, "-n", "2", "--", "/nonexistent/program");
    assertEquals(127, missing.exit(), missing::describe);
    assertTrue(missing.stderr().contains("cannot start /nonexistent/program"), missing::describe);
    PmixRunProcess badServer =
        PmixRunProcess.run(LIMIT, "-n", "1", "--dataserver", "nohostport", "--", "true");
    assertEquals(2, badServer.exit(), badServer::describe);
  }

  @Test
  void publishLookupThroughASharedDataServer() throws Exception {
    try (DataServer ds = DataServer.builder().port(0).start()) {
      PmixRunProcess p =
          PmixRunProcess.run(LIMIT, "-n", "3", "--dataserver", "127.0.0.1:" + ds.port(), "--",
              client, "--init", "--publish", "--lookup", "--fence", "--finalize");
      assertEquals(0, p.exit(), p::describe);
      assertEquals(3, count(p.stdout(), "STEP lookup OK"), p::describe);
      // The data lived in the shared server, not in pmixrun: it outlives the job's processes
      // until pmixrun ended the namespace, which removed it.
      int items =
          ds.inspect(DataStore::itemCount)
              .toCompletableFuture()
              .get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
      assertEquals(0, items);
    }
  }

  @Test
  void anOpenMpiProgramIsDirectLaunched() throws IOException, InterruptedException {
    Path exe = mpicc(Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/mpi_allreduce.c"));
    PmixRunProcess p = PmixRunProcess.run(LIMIT, "-n", "4", "--timeout", "100", "--", exe.toString());
    assertEquals(0, p.exit(), p::describe);
    for (int r = 0; r < 4; r++) {
      assertTrue(p.stdout().contains("rank " + r + " of 4 sum 4"), p::describe);
    }
    assertTrue(p.stderr().contains("is linked against libmpi: exporting SLURM_JOBID"),
        p::describe);
  }

  /**
   * {@code mpi_check}: rank and size, MPI_Barrier, MPI_Allreduce (sum of rank+1) and a
   * point-to-point ring over 4 ranks, each result checked by the program itself.
   */
  @Test
  void anOpenMpiProgramPassesCollectivesAndARing() throws IOException, InterruptedException {
    Path exe = mpicc(Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/mpi_check.c"));
    PmixRunProcess p = PmixRunProcess.run(LIMIT, "-n", "4", "--timeout", "100", "--", exe.toString());
    assertEquals(0, p.exit(), p::describe);
    for (int r = 0; r < 4; r++) {
      assertTrue(p.stdout().contains("rank " + r + " of 4\n"), p::describe);
      assertTrue(p.stdout().contains("rank " + r + " barrier ok\n"), p::describe);
      assertTrue(p.stdout().contains("rank " + r + " allreduce ok sum 10\n"), p::describe);
      assertTrue(p.stdout().contains("rank " + r + " ring ok got " + ((r + 3) % 4) + "\n"),
          p::describe);
      assertTrue(p.stdout().contains("rank " + r + " done\n"), p::describe);
    }
    assertFalse(p.stderr().contains("FAILED"), p::describe);
  }

  /**
   * MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name of Open MPI 4.1 go through libpmix's
   * PMIx_Publish/Lookup/Unpublish to our server and its data server: rank 0 publishes the port
   * of MPI_Open_port, rank 1 looks it up and compares it with what rank 0 sent it directly.
   * Once with pmixrun's embedded store, once with a shared pmix-dataserver, which must be empty
   * afterwards.
   */
  @Test
  void anOpenMpiProgramPublishesAndLooksUpAName() throws Exception {
    Path exe = mpicc(Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/mpi_check.c"));
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "100", "--", exe.toString(), "--publish");
    assertMpiPublishLookup(p);
    try (DataServer ds = DataServer.builder().port(0).start()) {
      PmixRunProcess q =
          PmixRunProcess.run(LIMIT, "-n", "2", "--timeout", "100", "--dataserver",
              "127.0.0.1:" + ds.port(), "--", exe.toString(), "--publish");
      assertMpiPublishLookup(q);
      int items =
          ds.inspect(DataStore::itemCount)
              .toCompletableFuture()
              .get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
      assertEquals(0, items);
    }
  }

  private static void assertMpiPublishLookup(PmixRunProcess p) {
    assertEquals(0, p.exit(), p::describe);
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("rank 0 published (\\S+)\n").matcher(p.stdout());
    assertTrue(m.find(), p::describe);
    assertTrue(p.stdout().contains("rank 1 lookup ok " + m.group(1) + "\n"), p::describe);
    assertTrue(p.stdout().contains("rank 0 unpublished\n"), p::describe);
    assertTrue(p.stdout().contains("rank 0 done\n") && p.stdout().contains("rank 1 done\n"),
        p::describe);
    assertFalse(p.stderr().contains("FAILED"), p::describe);
  }

  /**
   * PMIx_Spawn of a command pmixrun cannot start (OpenPMIx's simpdyn spawns "./simpclient",
   * relative to its directory, issue #16): the requester gets JOB_FAILED_TO_LAUNCH at once, and
   * pmixrun says which command, as prterun does (docs/commands.md §4, SPAWNNB).
   */
  @Test
  void aSpawnThatCannotStartIsRefusedAndNamed() throws Exception {
    String c =
        CCompiler.compile(
                Path.of(System.getProperty("basedir", "."))
                    .resolve("src/test/c/pmix_connect_spawn.c")
                    .toAbsolutePath())
            .toString();
    PmixRunProcess p =
        PmixRunProcess.run(
            Duration.ofSeconds(60), "-n", "1", "--timeout", "30", "--", c, "spawn", "2",
            "./no-such-program", "-n", "2");
    assertEquals(1, p.exit(), p::describe);
    assertTrue(p.stdout().contains("CS 0 spawn FAIL status=-181 "),
        p::describe);
    assertTrue(
        p.stderr().contains("pmixrun: cannot spawn a job for rank 0 of jrun-")
            && p.stderr().contains(": cannot start ./no-such-program: ")
            && p.stderr().contains(" (answered PMIX_ERR_JOB_FAILED_TO_LAUNCH)\n"),
        p::describe);
  }

  /** Compiles an MPI program with mpicc into target/c-programs (DataServiceIT uses it too). */
  /**
   * PMIx_Connect naming a job this launcher does not run (another pmixrun's, issue #16) is
   * refused with UNREACH at once, not answered success while the other side never takes part.
   */
  @Test
  void aConnectToAnotherLaunchersJobIsUnreachable() {
    PmixRunProcess p =
        PmixRunProcess.run(
            Duration.ofSeconds(60),
            "-n", "1", "--tag-output", "--",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            ConnectForeignMain.class.getName(), "jrun-elsewhere-1@1");
    assertEquals(0, p.exit(), p::describe);
    String line = p.taggedStdout().get(0).get(0);
    assertTrue(line.startsWith("CONNECT PMIX_ERR_UNREACH"), p::describe);
  }

  static Path mpicc(Path src) throws IOException, InterruptedException {
    String name = src.getFileName().toString().replaceFirst("\\.c$", "");
    Path exe = Path.of(System.getProperty("basedir", ".")).resolve("target/c-programs/" + name);
    Files.createDirectories(exe.getParent());
    Process p;
    try {
      p = new ProcessBuilder("mpicc", "-O1", "-o", exe.toString(), src.toString())
          .redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new CToolchainUnavailableException(
          "mpicc is not available (" + e.getMessage() + "); install libopenmpi-dev"
              + " (bin/install-test-deps)");
    }
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertEquals(0, p.waitFor(), out);
    return exe;
  }
}
