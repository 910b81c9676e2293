package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Open MPI 5.0.10 programs (issue #16 §3) under {@code bin/pmixrun} and under Open MPI 5's own
 * {@code mpirun} (which execs PRRTE 3.0.14's prterun), at -n 2 and -n 4: each rank's result lines
 * are the expected ones under both.
 *
 * <ul>
 *   <li>{@code mpi_check --publish}: barrier, allreduce, a point-to-point ring, then
 *       publish/lookup/unpublish of a port with {@code MPI_INFO_NULL} (Open MPI 5 sends the
 *       lookup an uninitialised PMIX_RANGE, which must search the session);
 *   <li>{@code mpi_spawn 2}: MPI_Comm_spawn of 2 children, an allreduce across the
 *       intercommunicator;
 *   <li>{@code mpi_connect 2}: the parents publish a port, spawn 2 children which look it up
 *       (MPI_INFO_NULL: the range byte a spawned child's stack holds is 255, INVALID) and connect
 *       while the parents accept; an allreduce across the new intercommunicator.
 * </ul>
 */
@ExtendWith(PmixTestExtension.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class OpenMpi5IT {
  private static final Duration LIMIT = Duration.ofMinutes(2);
  private static final Path BASE = Path.of(System.getProperty("basedir", "."));
  /** A port name is the job's and differs run to run: each is checked, then written as this. */
  private static final String PORT = "<port>";

  private static final Pattern PORT_LINE =
      Pattern.compile("(rank 0 published|rank 1 lookup ok) (\\S+)");

  @ParameterizedTest(name = "{0} {1} -n {2}")
  @CsvSource({"mpi_check, --publish, 2", "mpi_check, --publish, 4", "mpi_spawn, 2, 2",
      "mpi_spawn, 2, 4", "mpi_connect, 2, 2", "mpi_connect, 2, 4"})
  void sameResultsUnderPmixrunAndMpirun(String program, String arg, int n) throws Exception {
    Path exe = Peers.ompiCompile(BASE.resolve("src/test/c/" + program + ".c"));
    List<String> expected = expected(program, n);

    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "-n", Integer.toString(n), "--timeout", "100", "-x",
            "LD_LIBRARY_PATH=" + Peers.ompiLibraryPath(), "-x",
            "OPAL_PREFIX=" + Peers.dir().resolve("ompi-5.0.10"), "--", exe.toString(), arg);
    assertEquals(0, p.exit(), p::describe);
    assertEquals(expected, resultLines(p.stdout()), p::describe);

    Peers.Run ref = Peers.mpirun(n, BASE.resolve("target/mpirun-it"), LIMIT, exe.toString(), arg);
    assertEquals(0, ref.exit(), ref.out());
    assertEquals(expected, resultLines(ref.out()), () -> "mpirun:\n" + ref.out());
  }

  /** What every rank of {@code program} prints at {@code -n n}, sorted. */
  private static List<String> expected(String program, int n) {
    List<String> lines = new ArrayList<>();
    int sum = n * (n + 1) / 2;
    switch (program) {
      case "mpi_check" -> {
        for (int r = 0; r < n; r++) {
          lines.addAll(List.of("rank " + r + " of " + n, "rank " + r + " barrier ok",
              "rank " + r + " allreduce ok sum " + sum,
              "rank " + r + " ring ok got " + (r + n - 1) % n, "rank " + r + " done"));
        }
        lines.addAll(List.of("rank 0 published " + PORT, "rank 1 lookup ok " + PORT,
            "rank 0 unpublished"));
      }
      case "mpi_spawn" -> {
        for (int r = 0; r < n; r++) {
          lines.add("parent " + r + " ok children=2 sum=3");
        }
        for (int c = 0; c < 2; c++) {
          lines.add("child " + c + " ok parents=" + n + " sum=" + sum);
        }
      }
      case "mpi_connect" -> {
        for (int r = 0; r < n; r++) {
          lines.addAll(List.of("parent " + r + " accept ok remote=2 sum=3", "parent " + r + " done"));
        }
        for (int c = 0; c < 2; c++) {
          lines.addAll(List.of("child " + c + " connect ok remote=" + n + " sum=" + sum,
              "child " + c + " done"));
        }
        lines.add("rank 0 unpublished");
      }
      default -> throw new IllegalArgumentException(program);
    }
    return lines.stream().sorted().collect(Collectors.toList());
  }

  /**
   * The programs' result lines (and any FAILED line), sorted since ranks interleave differently
   * run to run; the published and the looked-up port must be one, and are written {@link #PORT}.
   */
  private static List<String> resultLines(String out) {
    List<String> ports = new ArrayList<>();
    List<String> lines = new ArrayList<>();
    for (String l : out.lines().toList()) {
      if (!l.matches("(rank|parent|child|FAILED) .*") && !l.contains("FAILED")) {
        continue;
      }
      Matcher m = PORT_LINE.matcher(l);
      if (m.matches()) {
        ports.add(m.group(2));
        l = m.group(1) + " " + PORT;
      }
      lines.add(l);
    }
    if (ports.stream().distinct().count() > 1) {
      lines.add("FAILED: the port looked up is not the one published: " + ports);
    }
    return lines.stream().sorted().collect(Collectors.toList());
  }
}
