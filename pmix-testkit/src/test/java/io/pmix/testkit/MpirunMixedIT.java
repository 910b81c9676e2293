package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.CPrograms;
import io.pmix.testkit.demo.JavaDemoClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Java and C ranks in one job under Open MPI 4.1's {@code mpirun} (Debian's, default settings: its
 * PMIx server is libpmix 4.2.2 and exports {@code PMIX_GDS_MODULE=ds21,ds12,hash}), as an MPMD
 * job: {@code mpirun -n 1 java ... : -n 1 pmix_client_check ...}. Every rank gets every other
 * rank's keys of every type that are in scope, and the out-of-scope ones, which must give
 * NOT_FOUND ({@code --strict-scope}), fences and finalizes. The Java ranks must read the job's
 * data from ds21, as the C ranks do, for the job to work at all (docs/gds.md).
 */
@ExtendWith(PmixTestExtension.class)
class MpirunMixedIT {
  private static final Path MPIRUN = Path.of("/usr/bin/mpirun");
  private static final Pattern TAGGED = Pattern.compile("^\\[\\d+,(\\d+)\\]<stdout>:\\s?(.*)$");

  @Test
  void twoRanksJavaOnRankZero() throws Exception {
    mixed(2, true);
  }

  @Test
  void twoRanksCOnRankZero() throws Exception {
    mixed(2, false);
  }

  @Test
  void fourRanksJavaOnEvenRanks() throws Exception {
    mixed(4, true);
  }

  @Test
  void fourRanksCOnEvenRanks() throws Exception {
    mixed(4, false);
  }

  /**
   * The four-rank job run by an unprivileged user ({@code nobody} through setpriv, {@link
   * UnprivilegedUser}), as users run mpirun: without {@code --allow-run-as-root}, its session
   * directory and the PMIx server's files under the user's TMPDIR, the Java ranks from a copy of
   * the class path any user may read.
   */
  @Test
  void fourRanksOfAnUnprivilegedUser() throws Exception {
    Path parent = Path.of(System.getProperty("basedir", ".")).resolve("target/mpirun-users");
    try (UnprivilegedUser user = UnprivilegedUser.under(parent.toAbsolutePath())) {
      List<String> java =
          user.java(JavaDemoClient.class.getName(), "--no-publish", "--strict-scope");
      Path client = user.copy(CCompiler.clientCheck());
      List<String> cmd = new ArrayList<>(user.wrapper());
      cmd.addAll(List.of(MPIRUN.toString(), "--oversubscribe", "--tag-output"));
      run(4, true, cmd, java, client, user.environment(), user.home());
    }
  }

  private static void mixed(int n, boolean javaEven) throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(MPIRUN.toString(), "--allow-run-as-root", "--oversubscribe", "--tag-output"));
    run(n, javaEven, cmd,
        JavaDemoClient.command("--no-publish", "--strict-scope"), CCompiler.clientCheck(),
        Map.of(), null);
  }

  /**
   * Runs {@code mpirun} (the command so far: {@code launcher}) with {@code n} ranks, Java on the
   * even ones when {@code javaEven}, else on the odd ones, and checks every rank's steps.
   */
  private static void run(
      int n,
      boolean javaEven,
      List<String> launcher,
      List<String> java,
      Path client,
      Map<String, String> env,
      @Nullable Path dir)
      throws Exception {
    if (!Files.isExecutable(MPIRUN)) {
      throw CPrograms.unavailable("Open MPI's mpirun is not installed (Debian: openmpi-bin)");
    }
    List<String> c =
        List.of(
            client.toString(),
            "--strict-scope",
            "--init",
            "--put",
            "--commit",
            "--fence-collect",
            "--get-peers",
            "--fence",
            "--finalize");
    List<String> cmd = new ArrayList<>(launcher);
    for (int r = 0; r < n; r++) {
      if (r > 0) {
        cmd.add(":");
      }
      cmd.add("-n");
      cmd.add("1");
      cmd.addAll((r % 2 == 0) == javaEven ? java : c);
    }
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("OMPI_"));
    pb.environment().putAll(env);
    if (dir != null) {
      pb.directory(dir.toFile());
    }
    Path out = Files.createTempFile("mpirun-mixed", ".out");
    String all;
    int exit;
    try {
      Process p = pb.redirectOutput(out.toFile()).start();
      if (!p.waitFor(Timing.seconds(120).toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
        throw new AssertionError("mpirun did not end:\n" + Files.readString(out, UTF_8));
      }
      exit = p.exitValue();
      all = Files.readString(out, UTF_8);
    } finally {
      Files.deleteIfExists(out);
    }
    assertEquals(0, exit, all);
    Map<Integer, List<String>> steps = byRank(all);
    assertEquals(n, steps.size(), all);
    int javaRanks = 0;
    for (Map.Entry<Integer, List<String>> e : steps.entrySet()) {
      List<String> s = e.getValue();
      assertEquals(7, s.size(), () -> "rank " + e.getKey() + ":\n" + all);
      assertTrue(s.stream().allMatch(l -> l.contains(" OK ")), all);
      assertTrue(s.get(s.size() - 1).startsWith("STEP finalize OK"), all);
      if (s.get(0).startsWith("STEP init OK lang=java ")) {
        assertTrue(s.get(0).endsWith(" gds=ds21"), all);
        javaRanks++;
      }
    }
    assertEquals(javaEven ? (n + 1) / 2 : n / 2, javaRanks, all);
  }

  private static Map<Integer, List<String>> byRank(String all) {
    Map<Integer, List<String>> out = new TreeMap<>();
    for (String line : all.split("\n")) {
      Matcher m = TAGGED.matcher(line);
      if (m.matches() && m.group(2).startsWith("STEP ")) {
        out.computeIfAbsent(Integer.parseInt(m.group(1)), k -> new ArrayList<>()).add(m.group(2));
      }
    }
    return out;
  }
}
