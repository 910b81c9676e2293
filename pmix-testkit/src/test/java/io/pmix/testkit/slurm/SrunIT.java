package io.pmix.testkit.slurm;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.testkit.CCompiler;
import io.pmix.testkit.PmixTestExtension;
import io.pmix.testkit.Timing;
import io.pmix.testkit.UnprivilegedUser;
import io.pmix.testkit.demo.JavaDemoClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Our Java client and libpmix's C client as the tasks of real Slurm steps ({@code srun
 * --mpi=pmix}: Slurm 22.05's own PMIx server, libpmix 4.2.2 in slurmstepd, default settings),
 * each rank reading every peer's keys of each scope after a collecting fence.
 *
 * <p>The mixed steps put Java and C ranks into one job ({@code srun --multi-prog}). Slurm's
 * server exports {@code PMIX_GDS_MODULE=ds21,ds12,hash}, the C ranks take ds21, and libpmix 4.2.2
 * keeps one gds module per namespace (the one the last connecting client announced): the steps
 * pass only because our client chooses, attaches and reads ds21 as the C ranks do (docs/gds.md).
 * Every rank gets every other rank's keys of every type, in scope, and with {@code
 * --strict-scope} the out-of-scope ones, which must give NOT_FOUND.
 */
@ExtendWith({SlurmExtension.class, PmixTestExtension.class})
class SrunIT {
  private static final String[] C_STEPS = {
    "--init", "--put", "--commit", "--fence-collect", "--get-peers", "--fence", "--finalize"
  };

  @Test
  void javaOnlyStepOfFourRanks(SingleNodeSlurm slurm) throws Exception {
    Step s = srun(slurm, List.of("-n", "4"), javaCommand());
    s.assertAllOk(4, 7);
    s.assertJavaGds(4, "ds21");
  }

  @Test
  void cOnlyStepOfFourRanks(SingleNodeSlurm slurm) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(CCompiler.clientCheck().toString()));
    cmd.addAll(List.of(C_STEPS));
    Step s = srun(slurm, List.of("-n", "4"), cmd);
    s.assertAllOk(4, 7);
  }

  @Test
  void mixedStepOfTwoRanksJavaOnRankZero(SingleNodeSlurm slurm) throws Exception {
    Step s = mixed(slurm, 2, true);
    s.assertAllOk(2, 7);
    s.assertJavaGds(1, "ds21");
  }

  @Test
  void mixedStepOfTwoRanksCOnRankZero(SingleNodeSlurm slurm) throws Exception {
    Step s = mixed(slurm, 2, false);
    s.assertAllOk(2, 7);
    s.assertJavaGds(1, "ds21");
  }

  @Test
  void mixedStepOfFourRanksJavaOnEvenRanks(SingleNodeSlurm slurm) throws Exception {
    Step s = mixed(slurm, 4, true);
    s.assertAllOk(4, 7);
    s.assertJavaGds(2, "ds21");
  }

  @Test
  void mixedStepOfFourRanksCOnEvenRanks(SingleNodeSlurm slurm) throws Exception {
    Step s = mixed(slurm, 4, false);
    s.assertAllOk(4, 7);
    s.assertJavaGds(2, "ds21");
  }

  /**
   * A Java client cycling init/finalize 1,000 times in one task, each cycle on ds21: afterwards
   * no extra thread or descriptor and no mapping of the store's segments remains (checked every
   * hundred cycles too), and its one ds21 lock slot served every cycle (a C client would have
   * fallen back to ds12 at its second init: libpmix never frees a slot, docs/gds.md section 5).
   */
  @Test
  void aJavaClientCyclesAThousandTimesOnDs21(SingleNodeSlurm slurm) throws Exception {
    List<String> cmd = new ArrayList<>(javaCommand().subList(0, 5));
    cmd.addAll(List.of(CyclingClientMain.class.getName(), "1000", "ds21"));
    Step s = srun(slurm, List.of("-n", "1"), cmd, Timing.seconds(600));
    assertEquals(0, s.exit(), s.all());
    String line =
        s.lines().get(0).stream().filter(l -> l.startsWith("CYCLES ")).findFirst().orElse("");
    assertTrue(line.startsWith("CYCLES OK n=1000 "), s.all());
    System.out.println("SrunIT: " + line);
  }

  /**
   * The mixed step of four ranks submitted by an unprivileged user ({@code nobody}, uid/gid
   * 65534, through setpriv), as every user of a real cluster submits: slurmstepd (root) makes
   * the step's PMIx directory and stores and hands them to the user, whose ranks must attach to
   * them. The Java ranks run from a copy of the class path that any user may read (this JVM's
   * comes partly from root's Maven repository), with HOME and TMPDIR directories of the user's
   * own ({@link UnprivilegedUser}); every rank reads every peer's keys, the Java ones through ds21.
   */
  @Test
  void aMixedStepOfAnUnprivilegedUser(SingleNodeSlurm slurm) throws Exception {
    try (UnprivilegedUser user = UnprivilegedUser.under(slurm.directory())) {
      List<String> java =
          user.java(JavaDemoClient.class.getName(), "--no-publish", "--strict-scope");
      List<String> c =
          new ArrayList<>(List.of(user.copy(CCompiler.clientCheck()).toString(), "--strict-scope"));
      c.addAll(List.of(C_STEPS));
      Path conf =
          user.write(
              "multi-prog.conf",
              "0,2 " + String.join(" ", java) + "\n1,3 " + String.join(" ", c) + "\n");
      // The step's tasks run as the submitting user.
      Step id =
          srun(slurm, user.wrapper(), user.environment(), user.home(), List.of("-n", "1"),
              List.of("id", "-u"), Timing.seconds(60));
      assertEquals(List.of(Integer.toString(UnprivilegedUser.ID)), id.lines().get(0), id.all());
      Step s =
          srun(slurm, user.wrapper(), user.environment(), user.home(),
              List.of("-n", "4", "--multi-prog"), List.of(conf.toString()), Timing.seconds(120));
      s.assertAllOk(4, 7);
      s.assertJavaGds(2, "ds21");
    }
  }

  /**
   * A step of {@code n} ranks, Java on the even ranks and C on the odd ones ({@code javaEven}),
   * or the other way round; rank 0 is then Java, or C.
   */
  private static Step mixed(SingleNodeSlurm slurm, int n, boolean javaEven) throws Exception {
    List<String> java = new ArrayList<>(javaCommand());
    java.add("--strict-scope");
    List<String> c = new ArrayList<>(List.of(CCompiler.clientCheck().toString(), "--strict-scope"));
    c.addAll(List.of(C_STEPS));
    StringBuilder even = new StringBuilder();
    StringBuilder odd = new StringBuilder();
    for (int r = 0; r < n; r++) {
      StringBuilder b = r % 2 == 0 ? even : odd;
      b.append(b.length() == 0 ? "" : ",").append(r);
    }
    String conf =
        even + " " + String.join(" ", javaEven ? java : c) + "\n"
            + odd + " " + String.join(" ", javaEven ? c : java) + "\n";
    Path file = Files.createTempFile(slurm.directory(), "multi-prog", ".conf");
    try {
      Files.writeString(file, conf, UTF_8);
      return srun(
          slurm, List.of("-n", Integer.toString(n), "--multi-prog"), List.of(file.toString()));
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** The java command line of a JavaDemoClient rank (this JVM's class path). */
  static List<String> javaCommand() {
    return JavaDemoClient.command("--no-publish");
  }

  /** What one srun printed, by rank (srun -l labels every line "rank: "). */
  record Step(int exit, Map<Integer, List<String>> lines, String all) {
    /** {@code javaRanks} Java ranks said they read their data through {@code gds}. */
    void assertJavaGds(int javaRanks, String gds) {
      long n =
          lines.values().stream()
              .flatMap(List::stream)
              .filter(l -> l.startsWith("STEP init OK lang=java ") && l.endsWith(" gds=" + gds))
              .count();
      assertEquals(javaRanks, n, all);
    }

    void assertAllOk(int ranks, int steps) {
      assertEquals(0, exit, all);
      assertEquals(ranks, lines.size(), all);
      for (Map.Entry<Integer, List<String>> e : lines.entrySet()) {
        List<String> step = e.getValue().stream().filter(l -> l.startsWith("STEP ")).toList();
        assertEquals(steps, step.size(), () -> "rank " + e.getKey() + ":\n" + all);
        assertTrue(step.stream().allMatch(l -> l.contains(" OK ")), all);
        assertTrue(step.get(step.size() - 1).startsWith("STEP finalize OK"), all);
      }
    }
  }

  static Step srun(SingleNodeSlurm slurm, List<String> options, List<String> command)
      throws IOException, InterruptedException {
    return srun(slurm, options, command, Timing.seconds(120));
  }

  static Step srun(
      SingleNodeSlurm slurm, List<String> options, List<String> command, Duration timeout)
      throws IOException, InterruptedException {
    return srun(slurm, List.of(), Map.of(), null, options, command, timeout);
  }

  /**
   * srun started through {@code wrapper} (e.g. setpriv), with {@code env} added to its
   * environment, in {@code dir} (null: this JVM's).
   */
  static Step srun(
      SingleNodeSlurm slurm,
      List<String> wrapper,
      Map<String, String> env,
      @Nullable Path dir,
      List<String> options,
      List<String> command,
      Duration timeout)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(wrapper);
    cmd.addAll(List.of("srun", "--mpi=pmix", "-l", "--kill-on-bad-exit=0"));
    cmd.addAll(options);
    cmd.addAll(command);
    Path out = Files.createTempFile(slurm.directory(), "srun", ".out");
    try {
      ProcessBuilder pb = slurm.command(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
      pb.environment().putAll(env);
      if (dir != null) {
        pb.directory(dir.toFile());
      }
      Process p = pb.start();
      if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
        throw new AssertionError("srun did not end:\n" + Files.readString(out, UTF_8));
      }
      String all = Files.readString(out, UTF_8);
      Map<Integer, List<String>> byRank = new TreeMap<>();
      for (String line : all.split("\n")) {
        int colon = line.indexOf(": ");
        if (colon > 0 && line.substring(0, colon).strip().matches("\\d+")) {
          byRank
              .computeIfAbsent(Integer.parseInt(line.substring(0, colon).strip()),
                  k -> new ArrayList<>())
              .add(line.substring(colon + 2));
        }
      }
      return new Step(p.exitValue(), byRank, all);
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
