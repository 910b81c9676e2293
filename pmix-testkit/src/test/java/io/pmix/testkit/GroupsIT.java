package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * PMIx groups under {@code bin/pmixrun} (issue #16): {@code group_client} (built against Debian's
 * 4.2.2, run with each OpenPMIx's libpmix, since the reply's layout changed at 5.0 and 6.0)
 * constructs a group with a context id and one without, destructs both, and a construct naming a
 * rank that died fails instead of hanging; and an Open MPI 5.0.10 program using MPI-4 sessions
 * ({@code mpi_sessions.c}: {@code MPI_Session_init}, {@code MPI_Group_from_session_pset}, {@code
 * MPI_Comm_create_from_group}, an allreduce and a ring) gives under pmixrun what it gives under
 * Open MPI 5's own {@code mpirun} (on PRRTE 3.0.14).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class GroupsIT {
  private static final Duration LIMIT = Duration.ofMinutes(2);
  private static final Path TEST_C =
      Path.of(System.getProperty("basedir", ".")).resolve("src/test/c");

  /** Where the libpmix of {@code version} is: Debian's (none) or a peer's. */
  private static List<String> libraryOption(String version) {
    return version.equals("4.2.2")
        ? List.of()
        : List.of("-x", "LD_LIBRARY_PATH=" + Peers.libraryPath(version));
  }

  private static PmixRunProcess runGroupClient(String version, int n, String... args) {
    Path exe = CCompiler.compile(TEST_C.resolve("group_client.c"));
    List<String> cmd = new ArrayList<>(List.of("-n", Integer.toString(n), "--timeout", "60"));
    cmd.addAll(libraryOption(version));
    cmd.add("--");
    cmd.add(exe.toString());
    cmd.addAll(List.of(args));
    return PmixRunProcess.run(LIMIT, cmd.toArray(new String[0]));
  }

  @ParameterizedTest(name = "{0} -n {1}")
  @CsvSource({"4.2.2, 2", "4.2.2, 4", "v5.0.11, 2", "v5.0.11, 4", "v6.1.0, 2", "v6.1.0, 4",
      "master, 2", "master, 4"})
  void constructAndDestructAmongEveryRank(String version, int n) {
    PmixRunProcess p = runGroupClient(version, n);
    assertEquals(0, p.exit(), p::describe);
    // 4.2.2's reply has no membership; 5.0+ clients report the n members the server sent.
    String members = version.equals("4.2.2") ? "-" : Integer.toString(n);
    // Every rank got the same context id from the launcher; the local group asked for none
    // (SIZE_MAX from 4.2.2's and 5.0's reply, absent from 6.0's: -1 either way).
    String ctx = null;
    for (int r = 0; r < n; r++) {
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile(
                  "rank " + r + " construct grp.ctx ok ctxid (\\d+) members " + members + "\n")
              .matcher(p.stdout());
      assertTrue(m.find(), p::describe);
      if (ctx == null) {
        ctx = m.group(1);
      }
      assertEquals(ctx, m.group(1), p::describe);
      for (String line : List.of("construct grp.local ok ctxid -1 members " + members,
          "destruct grp.local ok", "destruct grp.ctx ok", "done")) {
        assertTrue(p.stdout().contains("rank " + r + " " + line + "\n"), () -> line + p.describe());
      }
    }
    assertFalse(p.stdout().contains("FAILED"), p::describe);
  }

  /**
   * The last of 3 ranks exits unfinalized; once told, the others construct a group naming it:
   * PARTIAL_SUCCESS, the status a fence's survivors get (5.0.11's server would leave them
   * waiting), and they finalize. The job ends with the dead rank's status.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"4.2.2, PARTIAL SUCCESS", "v5.0.11, PMIX_ERR_PARTIAL_SUCCESS",
      "master, PMIX_ERR_PARTIAL_SUCCESS"})
  void aConstructNamingADeadRankFails(String version, String status) {
    PmixRunProcess p = runGroupClient(version, 3, "--die");
    assertEquals(3, p.exit(), p::describe);
    for (int r = 0; r < 2; r++) {
      assertTrue(
          p.stdout().contains("rank " + r + " construct with a dead member: " + status + "\n"),
          p::describe);
      assertTrue(p.stdout().contains("rank " + r + " done\n"), p::describe);
    }
    assertFalse(p.stdout().contains("FAILED"), p::describe);
  }

  /**
   * The sessions program at -n 2 and -n 4, three communicators from the group each, under
   * pmixrun and under Open MPI 5's mpirun: each rank's lines are the expected ones, the same
   * under both.
   */
  @ParameterizedTest(name = "-n {0}")
  @CsvSource({"2", "4"})
  void openMpiSessionsMatchMpirun(int n) throws Exception {
    Path exe = Peers.ompiCompile(TEST_C.resolve("mpi_sessions.c"));
    String libs = Peers.ompiLibraryPath();
    String opal = Peers.dir().resolve("ompi-5.0.10").toString();
    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", Integer.toString(n), "--timeout", "100", "-x",
            "LD_LIBRARY_PATH=" + libs, "-x", "OPAL_PREFIX=" + opal, "--", exe.toString(), "3");
    assertEquals(0, p.exit(), p::describe);
    List<String> ours = rankLines(p.stdout());
    int sum = n * (n + 1) / 2;
    for (int r = 0; r < n; r++) {
      assertTrue(ours.contains("rank " + r + " of " + n + " in mpi://WORLD"), p::describe);
      String comm = "rank " + r + " comm " + r + " of " + n + " allreduce sum " + sum
          + " ring got " + ((r + n - 1) % n);
      assertEquals(3, ours.stream().filter(comm::equals).count(), p::describe);
      assertTrue(ours.contains("rank " + r + " done"), p::describe);
    }
    assertFalse(p.stdout().contains("FAILED"), p::describe);

    Peers.Run reference =
        Peers.mpirun(n, Path.of(System.getProperty("basedir", ".")).resolve("target/mpirun-it"),
            LIMIT, exe.toString(), "3");
    assertEquals(0, reference.exit(), reference.out());
    assertEquals(rankLines(reference.out()), ours,
        () -> "mpirun:\n" + reference.out() + p.describe());
  }

  /** The program's "rank ..." lines, sorted (ranks interleave differently run to run). */
  private static List<String> rankLines(String out) {
    return out.lines().filter(l -> l.startsWith("rank ")).sorted().collect(Collectors.toList());
  }
}
