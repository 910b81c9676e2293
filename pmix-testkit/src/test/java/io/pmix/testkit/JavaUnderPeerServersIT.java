package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.testkit.demo.JavaDemoClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our Java client ({@link JavaDemoClient}) under real servers (issue #16 §3): under each OpenPMIx
 * version's own {@code simptest} (v5.0.11, v6.1.0, master), 2 Java ranks init, put, commit, fence
 * collecting data, read each other's keys, publish, look up, unpublish and finalize. simptest's
 * lookup ignores {@code PMIX_WAIT}, so the ranks run with {@code --fenced-lookup}: a fence orders
 * rank 0's publish before the lookups. simptest starts one executable without arguments: a shell
 * script under target/ execs the Java rank.
 *
 * <p>Under PRRTE 3.0.14's {@code prterun} (libpmix 5.0.11): a Java-only job of 2 ranks, and MPMD
 * jobs of a Java rank and a C rank ({@code pmix_client_check}) that read each other's keys and
 * share a published service, the lookup waiting for it ({@code PMIX_WAIT}): the C rank built
 * against 5.0.11; built against Debian's 4.2.2 and run on 5.0.11's libpmix (the ranks inherit
 * prterun's {@code LD_LIBRARY_PATH}); and built against and run on Debian's 4.2.2.
 */
@ExtendWith(PmixTestExtension.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class JavaUnderPeerServersIT {
  private static final Duration LIMIT = Duration.ofMinutes(2);
  private static final Path DIR =
      Path.of(System.getProperty("basedir", ".")).resolve("target/java-under-peers")
          .toAbsolutePath();
  private static final Pattern TAGGED = Pattern.compile("^\\[\\d+,(\\d+)\\]<stdout>:\\s?(.*)$");
  /** The steps of JavaDemoClient and of pmix_client_check with {@link #C_STEPS}, in order. */
  private static final List<String> STEPS =
      List.of("init", "put", "commit", "fence-collect", "get-peers", "publish", "lookup",
          "unpublish", "finalize");
  private static final List<String> C_STEPS =
      List.of("--init", "--put", "--commit", "--fence-collect", "--get-peers", "--publish",
          "--lookup", "--unpublish", "--finalize");

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"v5.0.11", "v6.1.0", "master"})
  void javaRanksUnderSimptest(String version) throws Exception {
    Path simptest = Peers.program(version, "simptest");
    Path rank = script("java-rank-fenced-lookup.sh", JavaDemoClient.command("--fenced-lookup"));
    Result r =
        run(List.of(simptest.toString(), "-n", "2", "-e", rank.toString()),
            Peers.libraryPath(version).toString());
    assertEquals(0, r.exit, r.out);
    assertTrue(r.out.contains("Test finished OK!"), r.out);
    assertFalse(r.out.contains(" FAIL "), r.out);
    // simptest does not tag its clients' output: each step OK twice, once by each rank.
    List<String> lines = r.out.lines().filter(l -> l.startsWith("STEP ")).toList();
    for (String step : STEPS) {
      assertEquals(2, lines.stream().filter(l -> l.startsWith("STEP " + step + " OK lang=java "))
          .count(), () -> step + "\n" + r.out);
    }
    assertEquals(2 * STEPS.size(), lines.size(), r.out);
    for (int k = 0; k < 2; k++) {
      assertTrue(r.out.contains(" rank=" + k + " size=2 nspace=foobar gds=hash\n"), r.out);
    }
    assertEquals(2, count(r.out, "STEP get-peers OK lang=java .* gets=12 peers=2\n"), r.out);
    assertEquals(2, count(r.out, "STEP lookup OK lang=java .* key=svc.foobar wait=0"
        + " value=svc-value-foobar publisher=foobar:0\n"), r.out);
    assertTrue(r.out.contains(" role=publisher key=svc.foobar\n"), r.out);
  }

  @Test
  void javaOnlyJobUnderPrterun() throws Exception {
    Map<Integer, List<String>> ranks =
        prterun(List.of("-n", "2"), JavaDemoClient.command());
    assertRank(ranks, 0, true, true);
    assertRank(ranks, 1, true, false);
  }

  @Test
  void javaAndC5011UnderPrterun() throws Exception {
    mixed(clientCheck5011(), false);
  }

  @Test
  void javaAndC422OnLibpmix5011UnderPrterun() throws Exception {
    mixed(CCompiler.clientCheck(), false);
  }

  @Test
  void javaAndC422OnLibpmix422UnderPrterun() throws Exception {
    mixed(CCompiler.clientCheck(), true);
  }

  /**
   * A Java rank and a 5.0.11 C rank under prterun run by an unprivileged user ({@code nobody}
   * through setpriv, {@link UnprivilegedUser}), as users run it: without {@code
   * --allow-run-as-root}, its session directory under the user's TMPDIR, the Java rank from a copy
   * of the class path any user may read.
   */
  @Test
  void javaAndC5011UnderPrterunOfAnUnprivilegedUser() throws Exception {
    try (UnprivilegedUser user = UnprivilegedUser.under(DIR.toAbsolutePath())) {
      List<String> cmd = new ArrayList<>(user.wrapper());
      cmd.addAll(List.of(Peers.mendedProgram("prrte-3.0.14", "prterun").toString(),
          "--map-by", ":OVERSUBSCRIBE", "--output", "tag", "-x", "LD_LIBRARY_PATH", "-n", "1"));
      cmd.addAll(user.java(JavaDemoClient.class.getName()));
      cmd.addAll(List.of(":", "-n", "1", user.copy(clientCheck5011()).toString()));
      cmd.addAll(C_STEPS);
      Map<String, String> env = new HashMap<>(user.environment());
      env.put("LD_LIBRARY_PATH",
          Peers.libraryPath("prrte-3.0.14") + ":" + Peers.libraryPath("v5.0.11"));
      Peers.Run r = Peers.run(cmd, env, user.home(), LIMIT);
      String out = "$ " + String.join(" ", cmd) + "\n" + r.out();
      Map<Integer, List<String>> ranks = steps(new Result(r.exit(), out));
      assertRank(ranks, 0, true, true);
      assertRank(ranks, 1, false, false);
    }
  }

  /** {@code -n 1 <C rank> : -n 1 <Java rank>} and the other way round. */
  private static void mixed(Path clientCheck, boolean debianLibpmix) throws Exception {
    List<String> c = new ArrayList<>();
    if (debianLibpmix) {
      // Drop prterun's LD_LIBRARY_PATH: the C rank loads Debian's libpmix 4.2.2.
      c.addAll(List.of("/usr/bin/env", "-u", "LD_LIBRARY_PATH"));
    }
    c.add(clientCheck.toString());
    c.addAll(C_STEPS);
    List<String> java = JavaDemoClient.command();
    for (boolean javaFirst : new boolean[] {true, false}) {
      List<String> args = new ArrayList<>(List.of("-n", "1"));
      args.addAll(javaFirst ? java : c);
      args.addAll(List.of(":", "-n", "1"));
      args.addAll(javaFirst ? c : java);
      Map<Integer, List<String>> ranks = prterun(args, List.of());
      assertRank(ranks, 0, javaFirst, true);
      assertRank(ranks, 1, !javaFirst, false);
    }
  }

  /**
   * Rank {@code r} did every step, OK, in order; it read its peer's keys (Java: 12 gets of 2
   * ranks; C: 10) and got the service of rank 0, waiting for it unless it published it.
   */
  private static void assertRank(Map<Integer, List<String>> ranks, int r, boolean java,
      boolean publisher) {
    String all = ranks.toString();
    List<String> s = ranks.get(r);
    assertTrue(s != null, all);
    assertEquals(STEPS, s.stream().map(l -> l.split(" ")[1]).toList(), all);
    assertTrue(s.stream().allMatch(l -> l.split(" ")[2].equals("OK")), all);
    assertEquals(java, s.get(0).startsWith("STEP init OK lang=java "), all);
    assertTrue(s.get(0).contains(" rank=" + r + " ") && s.get(0).contains(" size=2"), all);
    assertTrue(s.get(4).contains(java ? " gets=12 peers=2" : " peers=2 local=2 remote=0 gets=10"),
        all);
    assertTrue(s.get(5).contains(publisher ? " role=publisher " : " role=none"), all);
    String lookup = s.get(6);
    assertTrue(lookup.contains(" wait=" + (publisher ? 0 : 1) + " "), all);
    assertTrue(lookup.matches(".* value=(STRING:)?svc-value-(\\S+) publisher=\\2:0"), all);
  }

  /** pmix_client_check compiled against 5.0.11's headers and libpmix. */
  private static Path clientCheck5011() throws IOException, InterruptedException {
    Path src = Path.of(System.getProperty("basedir", ".")).resolve("src/main/c/pmix_client_check.c")
        .toAbsolutePath();
    Path exe = DIR.resolve("pmix_client_check-v5.0.11");
    Files.createDirectories(DIR);
    Path lib = Peers.libraryPath("v5.0.11");
    Process p =
        new ProcessBuilder("gcc", "-O1", "-I" + Peers.dir().resolve("v5.0.11/include"), "-o",
            exe.toString(), src.toString(), "-L" + lib, "-Wl,-rpath-link," + lib, "-lpmix",
            "-lpthread")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    if (p.waitFor() != 0) {
      throw new AssertionError("cannot compile " + src + " against OpenPMIx 5.0.11:\n" + out);
    }
    return exe;
  }

  /**
   * Runs {@code prterun --allow-run-as-root --map-by :OVERSUBSCRIBE --output tag -x
   * LD_LIBRARY_PATH ARGS RANK}; after exit 0, each rank's STEP lines.
   */
  private static Map<Integer, List<String>> prterun(List<String> args, List<String> rank)
      throws Exception {
    Path prterun = Peers.mendedProgram("prrte-3.0.14", "prterun");
    List<String> cmd = new ArrayList<>(List.of(prterun.toString(), "--allow-run-as-root",
        "--map-by", ":OVERSUBSCRIBE", "--output", "tag", "-x", "LD_LIBRARY_PATH"));
    cmd.addAll(args);
    cmd.addAll(rank);
    return steps(
        run(cmd, Peers.libraryPath("prrte-3.0.14") + ":" + Peers.libraryPath("v5.0.11")));
  }

  /** After exit 0, each rank's STEP lines of a prterun job of 2 ranks. */
  private static Map<Integer, List<String>> steps(Result r) {
    assertEquals(0, r.exit, r.out);
    assertFalse(r.out.contains(" FAIL "), r.out);
    Map<Integer, List<String>> ranks = new TreeMap<>();
    for (String line : r.out.split("\n")) {
      Matcher m = TAGGED.matcher(line);
      if (m.matches() && m.group(2).startsWith("STEP ")) {
        ranks.computeIfAbsent(Integer.parseInt(m.group(1)), k -> new ArrayList<>())
            .add(m.group(2));
      }
    }
    assertEquals(2, ranks.size(), r.out);
    return ranks;
  }

  private record Result(int exit, String out) {}

  /** Runs {@code cmd} with {@code LD_LIBRARY_PATH=libs} ({@link Peers#run}). */
  private static Result run(List<String> cmd, String libs) throws Exception {
    Peers.Run r = Peers.run(cmd, Map.of("LD_LIBRARY_PATH", libs), DIR, LIMIT);
    return new Result(r.exit(), "$ " + String.join(" ", cmd) + "\n" + r.out());
  }

  /** An executable shell script under target/ that execs {@code cmd} (simptest passes no args). */
  private static Path script(String name, List<String> cmd) throws IOException {
    Files.createDirectories(DIR);
    Path f = DIR.resolve(name);
    String line =
        cmd.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" "));
    Files.writeString(f, "#!/bin/sh\nexec " + line + "\n", UTF_8);
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
    return f;
  }

  private static long count(String s, String regex) {
    return Pattern.compile(regex).matcher(s).results().count();
  }
}
