package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.connector.Messages;
import io.pmix.common.internal.wire.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code PMIx_Connect}, {@code PMIx_Disconnect} and {@code PMIx_Spawn} with real peers, the Java
 * client ({@link ConnectSpawnMain}) and the libpmix 4.2.2 C client ({@code
 * src/test/c/pmix_connect_spawn.c}, same steps and output lines):
 *
 * <ul>
 *   <li>under Open MPI 4.1's {@code mpirun} (a libpmix 4.2.2 server whose host implements spawn
 *       and connect): the Java client against the reference server, including a spawned Java
 *       child and its parent connecting (each reading the other's job size from libpmix's
 *       connect reply);
 *   <li>under our server ({@link TestingPmixServer}, the {@link SingleNodeHost} that pmixrun
 *       uses): a job mixing a Java and a C rank connects and disconnects; the server's timeout
 *       and a participant dying mid-connect reach both kinds of client as error statuses; a Java
 *       and a C client each spawn a job whose processes (the other language) run and connect
 *       with their parent, the child's job size read from the spawn reply alone, each side's
 *       job size from our connect reply, dropped again at disconnect; a Java and a C client
 *       each spawn two apps (programs in both languages) as one job, whose ranks read their app
 *       number, app rank and app size, and have a required directive the host does not do
 *       refused;
 *   <li>under {@code bin/pmixrun}: a spawned job runs as {@code <pmixrun nspace>@2}, its output
 *       forwarded, and pmixrun ends after it; likewise a spawned job of two apps.
 * </ul>
 *
 * The C client's requests are the byte-level check of our server's decoding: libpmix packs
 * them, our server must read them to the last byte to answer as it does.
 */
class ConnectSpawnIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Path C_SOURCE =
      Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/pmix_connect_spawn.c");

  @RegisterExtension final PmixTestExtension pmix = new PmixTestExtension();

  private static List<String> javaCommand() {
    return List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        "-cp",
        System.getProperty("java.class.path"),
        ConnectSpawnMain.class.getName());
  }

  /** Rank 0 runs {@code first}, the other ranks {@code rest}, each followed by the steps. */
  private static List<String> mixed(List<String> first, List<String> rest, List<String> steps) {
    return List.of(
        "sh",
        "-c",
        "if [ \"$PMIX_RANK\" = 0 ]; then exec " + quoted(first, steps) + "; else exec "
            + quoted(rest, steps) + "; fi");
  }

  private static String quoted(List<String> cmd, List<String> steps) {
    StringBuilder b = new StringBuilder();
    for (List<String> l : List.of(cmd, steps)) {
      for (String a : l) {
        b.append(" '").append(a.replace("'", "'\\''")).append('\'');
      }
    }
    return b.toString();
  }

  private static Path cClient() {
    return CCompiler.compile(C_SOURCE);
  }

  private static String line(JobResult r, int rank, String step) {
    String prefix = "CS " + rank + " " + step + " ";
    return r.stdoutLines(rank).stream().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
  }

  // ---------------------------------------------------------------------------------------------
  // The reference server

  @Test
  void javaClientUnderMpirun() throws Exception {
    String out = mpirun(2, List.of("connect", "disconnect", "connect-timeout",
        "connect-lost-finalize", "spawn", "2", "/bin/true"));
    for (int r = 0; r < 2; r++) {
      assertTrue(out.contains("CS " + r + " connect OK"), out);
      assertTrue(out.contains("CS " + r + " disconnect OK"), out);
    }
    // Statuses libpmix's server decides: its connect timer, and a participant that left
    // (finalized and exited) while rank 0 waited.
    assertTrue(out.contains("CS 0 connect-timeout OK status=-24 "), out);
    assertTrue(out.contains("CS 0 connect-lost-finalize OK status=-52 "), out);
    Matcher m = Pattern.compile("CS 0 spawn OK nspace=(\\S+) job.size=(\\d+)").matcher(out);
    assertTrue(m.find(), out);
    assertEquals("2", m.group(2), out);
    assertTrue(out.contains("CS 0 finalize OK"), out);
  }

  /**
   * The reference for the two-app spawn of our server's tests: Open MPI 4.1's mpirun numbers
   * and describes the ranks of a two-app spawn the same way: one job of 3, ranks consecutive
   * across the apps, each with its app number, app rank, environment and directory. One
   * difference, observed and not asserted: there the C ranks of app 0 (2 processes) read {@code
   * pmix.app.size} 1 for their own app, while app 1's rank and the parent (qualified by {@code
   * pmix.appnum} 1) read 1 as expected; our host registers 2 for app 0, as PRRTE does ({@code
   * app->num_procs} in each app array).
   */
  @Test
  void javaClientSpawnsACAppAndAJavaAppAsOneJobUnderMpirun() throws Exception {
    List<String> steps = new ArrayList<>(List.of("spawn-apps", "2", cClient().toString(), "+",
        "1"));
    steps.addAll(javaCommand());
    String out = mpirun(1, steps);
    Matcher m = Pattern.compile("CS 0 spawn-apps OK nspace=(\\S+) job.size=3 app1.size=1")
        .matcher(out);
    assertTrue(m.find(), out);
    String cwd = Pattern.quote(Path.of("").toAbsolutePath().normalize().toRealPath().toString());
    for (String l : List.of(
        "CS 0 app-info OK appnum=0 apprank=0 app.size=\\d+ job.size=3 app=A cwd=" + cwd
            + " lang=c",
        "CS 1 app-info OK appnum=0 apprank=1 app.size=\\d+ job.size=3 app=A cwd=" + cwd
            + " lang=c",
        "CS 2 app-info OK appnum=1 apprank=0 app.size=1 job.size=3 app=B cwd=/ lang=java")) {
      assertTrue(out.lines().anyMatch(x -> x.matches(l)), l + "\n" + out);
    }
  }

  /** Runs {@code np} Java clients with {@code steps} under mpirun; its output, after exit 0. */
  private static String mpirun(int np, List<String> steps) throws Exception {
    Path mpirun = Path.of("/usr/bin/mpirun");
    if (!Files.isExecutable(mpirun)) {
      throw new CToolchainUnavailableException(
          "Open MPI's mpirun is not installed (Debian: openmpi-bin)");
    }
    List<String> cmd = new ArrayList<>(List.of(mpirun.toString(), "--allow-run-as-root",
        "--oversubscribe", "-np", Integer.toString(np)));
    cmd.addAll(javaCommand());
    cmd.addAll(steps);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("OMPI_"));
    Process p = pb.start();
    p.getOutputStream().close();
    String out = readAll(p, Timing.scaled(WAIT));
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  private static String readAll(Process p, Duration timeout)
      throws IOException, InterruptedException {
    StringBuilder sb = new StringBuilder();
    Thread t = new Thread(() -> {
      try {
        String s = new String(p.getInputStream().readAllBytes(), UTF_8);
        synchronized (sb) {
          sb.append(s);
        }
      } catch (IOException e) {
        // the process is gone
      }
    });
    t.setDaemon(true);
    t.start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor();
    }
    t.join(10_000);
    synchronized (sb) {
      return sb.toString();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Our server

  @Test
  void javaAndCClientsConnectAndDisconnectUnderOurServer() {
    JobResult r =
        pmix.server()
            .job(2)
            .command(mixed(javaCommand(), List.of(cClient().toString()),
                List.of("connect", "disconnect", "connect-timeout", "connect", "disconnect")))
            .run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    for (int rank = 0; rank < 2; rank++) {
      assertTrue(line(r, rank, "connect").contains(" OK"), r::describe);
      assertTrue(line(r, rank, "disconnect").contains(" OK"), r::describe);
      assertTrue(line(r, rank, "finalize").contains(" OK"), r::describe);
    }
    assertTrue(line(r, 0, "connect-timeout").contains("OK status=-24 "), r::describe);
  }

  @Test
  void aParticipantDyingMidConnectGivesTheOthersAnErrorAndTheServerGoesOn() {
    // A C rank 0 waits in connect with rank 1, a Java process that exits without finalizing.
    JobResult r =
        pmix.server()
            .job(2)
            .command(mixed(List.of(cClient().toString()), javaCommand(),
                List.of("connect-lost-halt")))
            .run(WAIT);
    assertEquals(List.of(0, 0), r.exitCodes(), r::describe);
    assertTrue(line(r, 0, "connect-lost-halt").contains("OK status=-52 "), r::describe);
    assertTrue(line(r, 0, "finalize").contains(" OK"), r::describe);
    // ... and the other way round, on the same server, which keeps serving.
    r = pmix.server()
        .job(2)
        .command(mixed(javaCommand(), List.of(cClient().toString()),
            List.of("connect-lost-halt")))
        .run(WAIT);
    assertEquals(List.of(0, 0), r.exitCodes(), r::describe);
    assertTrue(line(r, 0, "connect-lost-halt").contains("OK status=-52 "), r::describe);
    assertTrue(line(r, 0, "finalize").contains(" OK"), r::describe);
    assertEquals(0, pmix.server().snapshot().references().size(),
        () -> pmix.server().snapshot().toString());
  }

  @Test
  void javaClientSpawnsCClientsAndConnectsWithThemUnderOurServer() {
    TestingPmixServer s = pmix.server();
    List<String> cmd = new ArrayList<>(javaCommand());
    cmd.addAll(List.of("spawn-bad", "spawn-connect", "2", cClient().toString(), "connect-peer"));
    JobResult r = s.job(1).command(cmd).run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    // A command that cannot be started: the host's status reaches the client.
    assertTrue(line(r, 0, "spawn-bad").contains("OK status=-181 "), r::describe);
    JobResult child = spawned(s, r, 2);
    checkConnected(r, child, false, true);
  }

  @Test
  void cClientSpawnsAJavaClientAndConnectsWithItUnderOurServer() {
    TestingPmixServer s = pmix.server();
    List<String> cmd = new ArrayList<>(List.of(cClient().toString(), "spawn-connect", "1"));
    cmd.addAll(javaCommand());
    cmd.add("connect-peer");
    JobResult r = s.job(1).command(cmd).run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    JobResult child = spawned(s, r, 1);
    checkConnected(r, child, true, false);
  }

  @Test
  void javaClientSpawnsACAppAndAJavaAppAsOneJobUnderOurServer() throws IOException {
    TestingPmixServer s = pmix.server();
    List<String> cmd = new ArrayList<>(javaCommand());
    cmd.addAll(List.of("spawn-reqd", "/bin/true", "spawn-apps", "2", cClient().toString(), "+",
        "1"));
    cmd.addAll(javaCommand());
    JobResult r = s.job(1).command(cmd).run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    checkApps(s, r, "c", "java");
  }

  @Test
  void cClientSpawnsAJavaAppAndACAppAsOneJobUnderOurServer() throws IOException {
    TestingPmixServer s = pmix.server();
    List<String> cmd = new ArrayList<>(List.of(cClient().toString(), "spawn-reqd", "/bin/true",
        "spawn-apps", "2"));
    cmd.addAll(javaCommand());
    cmd.addAll(List.of("+", "1", cClient().toString()));
    JobResult r = s.job(1).command(cmd).run(WAIT);
    assertTrue(r.succeeded(), r::describe);
    checkApps(s, r, "java", "c");
  }

  /**
   * The parent's required {@code pmix.bindto} was refused (NOT_SUPPORTED, nothing started); its
   * two-app spawn (2 of a program in {@code langA}, 1 in {@code langB}) made one job of 3, whose
   * size and app 1's size the parent read from the spawn reply; each child ran its app's program
   * with its app's environment and directory, and read its app number, app rank and app size.
   */
  private static void checkApps(TestingPmixServer s, JobResult parent, String langA,
      String langB) throws IOException {
    assertTrue(line(parent, 0, "spawn-reqd").contains("OK status=-47 "), parent::describe);
    Matcher m =
        Pattern.compile("OK nspace=(\\S+) job.size=(\\d+) app1.size=(\\d+)")
            .matcher(line(parent, 0, "spawn-apps"));
    assertTrue(m.find(), parent::describe);
    assertEquals("3", m.group(2), parent::describe);
    assertEquals("1", m.group(3), parent::describe);
    // The parent's job and the one it spawned: the refused spawn started nothing.
    assertEquals(2, s.jobs().size(), () -> s.jobs().toString());
    RunningJob job =
        s.jobs().stream().filter(j -> j.nspace().equals(m.group(1))).findFirst().orElseThrow();
    assertEquals(3, job.nprocs());
    JobResult child = job.await(WAIT);
    assertTrue(child.succeeded(), child::describe);
    // The parent's directory, which its client filled in for app A (getcwd: symlinks resolved).
    String parentCwd = Path.of("").toAbsolutePath().normalize().toRealPath().toString();
    List<String> expected =
        List.of(
            "appnum=0 apprank=0 app.size=2 job.size=3 app=A cwd=" + parentCwd + " lang=" + langA,
            "appnum=0 apprank=1 app.size=2 job.size=3 app=A cwd=" + parentCwd + " lang=" + langA,
            "appnum=1 apprank=0 app.size=1 job.size=3 app=B cwd=/ lang=" + langB);
    for (int rank = 0; rank < 3; rank++) {
      assertEquals("CS " + rank + " app-info OK " + expected.get(rank),
          line(child, rank, "app-info"), child::describe);
      assertTrue(line(child, rank, "finalize").contains(" OK"), child::describe);
    }
  }

  /**
   * Parent and child ran, connected with each other (each then holding the other's job size,
   * which only the connect reply can have brought), disconnected and dropped the other's data;
   * a C client on ds21 (our server offers it, as mpirun's does) still finds the other job's size
   * in the store, as under libpmix's server ({@code pmix_connect_spawn.c} says "kept"), a Java
   * client reads only its own namespace from the store and drops it.
   */
  private static void checkConnected(
      JobResult parent, JobResult child, boolean parentIsC, boolean childIsC) {
    assertTrue(child.succeeded(), child::describe);
    assertTrue(
        line(parent, 0, "connect-peer")
            .contains("OK peer=" + child.nspace() + " peer.size=" + child.nprocs()),
        parent::describe);
    assertTrue(line(parent, 0, "disconnect-peer").contains(parentIsC ? "OK kept" : "OK dropped"),
        parent::describe);
    for (int rank = 0; rank < child.nprocs(); rank++) {
      assertTrue(line(child, rank, "init").contains("OK " + child.nspace() + ":" + rank),
          child::describe);
      // The spawned job's data names its parent.
      assertTrue(line(child, rank, "parent").endsWith("OK " + parent.nspace() + ":0"),
          child::describe);
      assertTrue(line(child, rank, "connect-peer")
          .contains("OK peer=" + parent.nspace() + " peer.size=1"), child::describe);
      assertTrue(
          line(child, rank, "disconnect-peer").contains(childIsC ? "OK kept" : "OK dropped"),
          child::describe);
      assertTrue(line(child, rank, "finalize").contains(" OK"), child::describe);
    }
  }

  @Test
  void javaParentAndChildConnectUnderMpirun() throws Exception {
    List<String> child = javaCommand();
    List<String> steps = new ArrayList<>(List.of("spawn-connect", "1"));
    steps.addAll(child);
    steps.add("connect-peer");
    String out = mpirun(1, steps);
    // Parent and child: the other's job size from libpmix's connect reply, dropped on disconnect.
    Matcher m = Pattern.compile("CS 0 spawn OK nspace=(\\S+) job.size=1").matcher(out);
    assertTrue(m.find(), out);
    String childNs = m.group(1);
    assertTrue(out.contains("CS 0 connect-peer OK peer=" + childNs + " peer.size=1"), out);
    Matcher p = Pattern.compile("CS 0 init OK (\\S+):0").matcher(out);
    assertTrue(p.find(), out);
    String parentNs = p.group(1);
    assertTrue(out.contains("CS 0 connect-peer OK peer=" + parentNs + " peer.size=1"), out);
    assertEquals(2, out.lines().filter(l -> l.startsWith("CS 0 disconnect-peer OK dropped")).count(),
        out);
    assertEquals(2, out.lines().filter(l -> l.equals("CS 0 finalize OK")).count(), out);
  }

  @Test
  void pmixrunRunsTheJobAClientSpawnsAndWaitsForIt() {
    String c = cClient().toString();
    PmixRunProcess p =
        PmixRunProcess.run(
            WAIT, "-n", "1", "--tag-output", "--", c, "spawn", "2", c, "connect", "disconnect");
    String out = p.stdout();
    assertEquals(0, p.exit(), () -> out + p.stderr());
    Matcher m = Pattern.compile("CS 0 spawn OK nspace=(\\S+) job.size=2").matcher(out);
    assertTrue(m.find(), out);
    String child = m.group(1);
    assertTrue(child.startsWith("jrun-") && child.endsWith("@2"), out);
    for (int rank = 0; rank < 2; rank++) {
      for (String step : List.of("connect", "disconnect", "finalize")) {
        String l = "[" + child + "," + rank + "]<stdout>: CS " + rank + " " + step + " OK";
        assertTrue(out.contains(l), l + "\n" + out);
      }
    }
  }

  @Test
  void pmixrunRunsTheTwoAppJobAClientSpawns() {
    String c = cClient().toString();
    PmixRunProcess p =
        PmixRunProcess.run(
            WAIT, "-n", "1", "--tag-output", "--", c, "spawn-reqd", "/bin/true", "spawn-apps",
            "2", c, "+", "1", c);
    String out = p.stdout();
    assertEquals(0, p.exit(), () -> out + p.stderr());
    assertTrue(out.contains("CS 0 spawn-reqd OK status=-47 "), out);
    Matcher m = Pattern.compile("CS 0 spawn-apps OK nspace=(\\S+) job.size=3 app1.size=1")
        .matcher(out);
    assertTrue(m.find(), out);
    String child = m.group(1);
    assertTrue(child.startsWith("jrun-") && child.endsWith("@2"), out);
    // App A runs where the parent does (pmixrun's directory, which its client filled in), B in /.
    List<String> expected =
        List.of(
            "appnum=0 apprank=0 app.size=2 job.size=3 app=A cwd=/\\S+ lang=c",
            "appnum=0 apprank=1 app.size=2 job.size=3 app=A cwd=/\\S+ lang=c",
            "appnum=1 apprank=0 app.size=1 job.size=3 app=B cwd=/ lang=c");
    for (int rank = 0; rank < 3; rank++) {
      String l = Pattern.quote("[" + child + "," + rank + "]<stdout>: CS " + rank + " app-info OK ")
          + expected.get(rank);
      assertTrue(out.lines().anyMatch(x -> x.matches(l)), l + "\n" + out);
    }
  }

  /**
   * The byte-level check: a libpmix C client and our Java client run the same steps (connect and
   * disconnect over their namespace, spawn of one {@code /bin/true}) through a proxy that records
   * what they send; each one's CONNECTNB, DISCONNECTNB and SPAWNNB frames must be exactly the
   * bodies pmix-common's {@link Messages} builds for the same call (the C client's working
   * directory and argv filled in as it fills them), each whole frame with its length.
   */
  @Test
  void javaAndCClientsSendTheSameConnectAndSpawnBytes() throws Exception {
    TestingPmixServer s = pmix.server();
    List<String> steps = List.of("connect", "disconnect", "spawn", "1", "/bin/true");
    List<List<String>> commands = new ArrayList<>();
    List<String> c = new ArrayList<>(List.of(cClient().toString()));
    c.addAll(steps);
    commands.add(c);
    List<String> j = new ArrayList<>(javaCommand());
    j.addAll(steps);
    commands.add(j);
    Path cwd = Path.of("").toAbsolutePath().normalize().toRealPath();
    for (List<String> command : commands) {
      try (RecordingProxy proxy = new RecordingProxy(s.uri())) {
        JobBuilder b = s.job(1).command(command);
        for (String v : List.of("PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
            "PMIX_SERVER_URI2", "PMIX_SERVER_URI21")) {
          b.env(v, proxy.uri(s.uri()));
        }
        JobResult r = b.run(WAIT);
        assertTrue(r.succeeded(), r::describe);
        JobResult child = spawned(s, r, 1);
        assertTrue(child.succeeded(), child::describe);
        byte[] sent = proxy.sent().get(0);
        Messages m = new Messages(WireFormat.DEFAULT);
        List<Proc> all = List.of(Proc.wildcard(r.nspace()));
        Value.App app =
            new Value.App("/bin/true", List.of("/bin/true"), List.of(), cwd.toString(), 1,
                List.of());
        String who = command.get(0);
        assertWholeFrame(sent, bytes(m.connect(Command.CONNECTNB, all, List.of())), "CONNECTNB",
            who);
        assertWholeFrame(sent, bytes(m.connect(Command.DISCONNECTNB, all, List.of())),
            "DISCONNECTNB", who);
        assertWholeFrame(sent, bytes(m.spawn(List.of(), List.of(app))), "SPAWNNB", who);
      }
    }
  }

  private static byte[] bytes(WireBuffer b) {
    return b.toByteArray();
  }

  /** {@code body} occurs in {@code stream} as a whole frame: after a header with its length. */
  private static void assertWholeFrame(byte[] stream, byte[] body, String what, String who) {
    for (int i = 16; i + body.length <= stream.length; i++) {
      if (Arrays.equals(stream, i, i + body.length, body, 0, body.length)) {
        int n = (stream[i - 8] & 0xff) << 24 | (stream[i - 7] & 0xff) << 16
            | (stream[i - 6] & 0xff) << 8 | (stream[i - 5] & 0xff);
        if (n == body.length
            && stream[i - 4] == 0 && stream[i - 3] == 0 && stream[i - 2] == 0
            && stream[i - 1] == 0) {
          return;
        }
      }
    }
    throw new AssertionError(who + " sent no " + what + " frame with the body "
        + ByteBufUtil.hexDump(body) + "; it sent " + ByteBufUtil.hexDump(stream));
  }

  /** The job the parent's rank 0 reported spawning, awaited; its size as the parent read it. */
  private static JobResult spawned(TestingPmixServer s, JobResult parent, int size) {
    Matcher m =
        Pattern.compile("OK nspace=(\\S+) job.size=(\\d+)").matcher(line(parent, 0, "spawn"));
    assertTrue(m.find(), parent::describe);
    assertEquals(Integer.toString(size), m.group(2), parent::describe);
    String ns = m.group(1);
    RunningJob job =
        s.jobs().stream().filter(j -> j.nspace().equals(ns)).findFirst().orElseThrow(
            () -> new AssertionError("no job " + ns + " on the server: " + s.jobs()));
    assertEquals(size, job.nprocs());
    return job.await(WAIT);
  }
}
