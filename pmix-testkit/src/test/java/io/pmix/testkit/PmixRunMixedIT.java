package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.testkit.demo.JavaDemoClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Java and C ranks in one MPMD job under {@code bin/pmixrun}, whose server offers ds21, ds12 and
 * hash: the C ranks and the Java ranks both read ds21 (the Java ranks say so), every rank gets
 * every other rank's keys of every type in scope and NOT_FOUND for the out-of-scope ones ({@code
 * --strict-scope}), fences and finalizes. The same jobs as {@link MpirunMixedIT} under mpirun.
 */
@ExtendWith(PmixTestExtension.class)
class PmixRunMixedIT {
  private static final Duration LIMIT = Duration.ofMinutes(2);

  @Test
  void twoRanksJavaOnRankZero() {
    mixed(2, true);
  }

  @Test
  void fourRanksCOnEvenRanks() {
    mixed(4, false);
  }

  private static void mixed(int n, boolean javaEven) {
    List<String> java =
        JavaDemoClient.command("--no-publish", "--strict-scope");
    List<String> c =
        List.of(
            CCompiler.clientCheck().toString(), "--strict-scope", "--init", "--put", "--commit",
            "--fence-collect", "--get-peers", "--fence", "--finalize");
    List<String> args = new ArrayList<>(List.of("--tag-output", "--timeout", "100"));
    for (int r = 0; r < n; r++) {
      if (r > 0) {
        args.add(":");
      }
      args.add("-n");
      args.add("1");
      args.addAll((r % 2 == 0) == javaEven ? java : c);
    }
    PmixRunProcess p = PmixRunProcess.run(LIMIT, args.toArray(new String[0]));
    assertEquals(0, p.exit(), p::describe);
    Map<Integer, List<String>> out = p.taggedStdout();
    assertEquals(n, out.size(), p::describe);
    int javaRanks = 0;
    for (Map.Entry<Integer, List<String>> e : out.entrySet()) {
      List<String> s = e.getValue().stream().filter(l -> l.startsWith("STEP ")).toList();
      assertEquals(7, s.size(), () -> "rank " + e.getKey() + ":\n" + p.describe());
      assertTrue(s.stream().allMatch(l -> l.contains(" OK ")), p::describe);
      assertTrue(s.get(s.size() - 1).startsWith("STEP finalize OK"), p::describe);
      if (s.get(0).startsWith("STEP init OK lang=java ")) {
        assertTrue(s.get(0).endsWith(" gds=ds21"), p::describe);
        javaRanks++;
      }
    }
    assertEquals(javaEven ? (n + 1) / 2 : n / 2, javaRanks, p::describe);
  }
}
