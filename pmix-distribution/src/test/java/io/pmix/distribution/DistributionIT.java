package io.pmix.distribution;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmix.testkit.CCompiler;
import io.pmix.testkit.PmixTestExtension;
import io.pmix.testkit.Timing;
import io.pmix.testkit.UnprivilegedUser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The distribution as a user gets it: {@code pmix-java-VERSION.tar.gz} unpacked into an empty
 * directory and run from another one, by root and by an unprivileged user ({@code nobody},
 * uid/gid 65534, through setpriv, HOME an empty directory of its own), with a PATH that holds
 * no Maven: a 2-rank job of libpmix C clients and a 2-rank job of our Java client both succeed,
 * and so does the C job nested under Open MPI 4.1's mpirun, 3 pmixruns of 2 ranks (mpirun needs
 * {@code --allow-run-as-root} for root only; as the user, a TMPDIR it may write).
 */
class DistributionIT {
  private static final String[] C_STEPS = {
    "--init", "--put", "--commit", "--fence-collect", "--get-peers", "--finalize"
  };

  private static Path work;
  private static Path dist;
  private static Path client;
  private static Path pathDir;

  @BeforeAll
  static void unpack() throws Exception {
    Path tar = Path.of(System.getProperty("pmix.dist.tar"));
    assertTrue(Files.isRegularFile(tar), tar + " was not built");
    Path base = Path.of(System.getProperty("basedir", ".")).resolve("target/dist-it")
        .toAbsolutePath();
    Files.createDirectories(base);
    Path dir = Files.createTempDirectory(base, "unpacked-", rwxrxrx());
    work = dir;
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    run(List.of("tar", "xzf", tar.toString(), "-C", dir.toString()), dir, Map.of(), 60);
    dist = dir.resolve(System.getProperty("pmix.dist.name"));
    for (String tool : List.of("pmixrun", "pmix-dataserver", "pmix-decode", "pmix-state")) {
      assertTrue(Files.isExecutable(dist.resolve("bin").resolve(tool)), tool);
    }
    // The C client, where any user may run it.
    client = dir.resolve("pmix_client_check");
    Files.copy(CCompiler.clientCheck(), client, StandardCopyOption.REPLACE_EXISTING);
    Files.setPosixFilePermissions(client, PosixFilePermissions.fromString("rwxr-xr-x"));
    // A PATH of the few commands the scripts and jobs use, java among them, and no mvn.
    pathDir = dir.resolve("path");
    Files.createDirectories(pathDir);
    Files.createSymbolicLink(
        pathDir.resolve("java"), Path.of(System.getProperty("java.home"), "bin", "java"));
    // pmixrun's class-data sharing archive (bin/lib/testkit.sh) needs a few coreutils more;
    // mpirun (the nested job) refuses to start without its remote launcher, even on one node.
    for (String cmd : List.of("bash", "sh", "env", "dirname", "cat", "ldd", "sed", "uname",
        "mkdir", "readlink", "cksum", "grep", "mv", "rm", "ssh")) {
      Path real = which(cmd);
      if (real != null) {
        Files.createSymbolicLink(pathDir.resolve(cmd), real);
      }
    }
  }

  @Test
  void rootRunsItFromAnotherDirectory() throws Exception {
    Path home = Files.createTempDirectory(work, "home-root-", rwxrxrx());
    Files.createDirectories(home.resolve("tmp"));
    jobs(home, List.of());
    // The first run made pmixrun's class-data sharing archive in the distribution's cds/.
    assertTrue(hasArchive(dist.resolve("cds")), "no archive in " + dist.resolve("cds"));
  }

  private static boolean hasArchive(Path dir) throws java.io.IOException {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      return s.anyMatch(p -> p.getFileName().toString().matches("pmixrun-[0-9]+\\.jsa"));
    }
  }

  @Test
  void anUnprivilegedUserRunsItWithoutMavenOrARepository() throws Exception {
    try (UnprivilegedUser user = UnprivilegedUser.under(work)) {
      jobs(user.home(), user.wrapper());
      // The distribution's cds/ is root's: nobody's archive is in its own cache.
      Path cache = user.home().resolve(".cache/pmix-java/cds");
      assertTrue(hasArchive(cache), "no archive in " + cache);
    }
  }

  /**
   * A C job and a Java job, each of 2 ranks, in {@code home}, as root (no {@code wrapper}) or as
   * nobody ({@link UnprivilegedUser#wrapper}).
   */
  private static void jobs(Path home, List<String> wrapper) throws Exception {
    String pmixrun = dist.resolve("bin/pmixrun").toString();
    List<String> c = new ArrayList<>(List.of(pmixrun, "-n", "2", "--", client.toString()));
    c.addAll(List.of(C_STEPS));
    String out = run(user(c, wrapper), home, env(home), 120);
    for (int r = 0; r < 2; r++) {
      for (String step : List.of("init", "put", "commit", "fence-collect", "get-peers",
          "finalize")) {
        String want = "STEP " + step + " OK";
        assertEquals(2, count(out, want), () -> want + " twice\n" + out);
      }
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> j =
        List.of(pmixrun, "-n", "2", "--", java, "-XX:-UsePerfData", "-cp",
            dist.resolve("lib") + "/*", "io.pmix.testkit.demo.JavaDemoClient");
    String jout = run(user(j, wrapper), home, env(home), 120);
    assertEquals(2, count(jout, "STEP init OK lang=java"), jout);
    assertEquals(2, count(jout, "STEP finalize OK"), jout);
    String v = run(user(List.of(pmixrun, "--version"), wrapper), home, env(home), 60);
    assertTrue(v.startsWith("pmixrun (pmix-java) "), v);
    nested(home, wrapper);
  }

  /** The C job nested: {@code mpirun -n 3 pmixrun -n 2 -- client}, 6 ranks over 3 nodes. */
  private static void nested(Path home, List<String> wrapper) throws Exception {
    Path mpirun = Path.of("/usr/bin/mpirun");
    if (!Files.isExecutable(mpirun)) {
      String why = "Open MPI's mpirun is not installed (Debian: openmpi-bin)";
      if (PmixTestExtension.interopRequired()) {
        fail(why);
      }
      Assumptions.abort(why);
    }
    List<String> cmd = new ArrayList<>(List.of(mpirun.toString()));
    if (wrapper.isEmpty()) {
      cmd.add("--allow-run-as-root");
    }
    cmd.addAll(List.of("--oversubscribe", "-n", "3", dist.resolve("bin/pmixrun").toString(),
        "-n", "2", "--", client.toString()));
    cmd.addAll(List.of(C_STEPS));
    String out = run(user(cmd, wrapper), home, env(home), 180);
    for (String step : List.of("init", "fence-collect", "get-peers", "finalize")) {
      String want = "STEP " + step + " OK";
      assertEquals(6, count(out, want), () -> want + " 6 times\n" + out);
    }
    assertTrue(out.contains("peers=6 local=2 remote=4"), out);
  }

  private static Map<String, String> env(Path home) {
    return Map.of(
        "HOME", home.toString(),
        "PATH", pathDir.toString(),
        "TMPDIR", home.resolve("tmp").toString(),
        // This machine's /tmp is not writable by everyone (a normal /tmp is): the JVM's
        // temporary files go where the user may write. No perf data: the JVM would leave
        // /tmp/hsperfdata_<user> behind, whatever java.io.tmpdir says.
        "PMIXRUN_JAVA_OPTS", "-XX:-UsePerfData -Djava.io.tmpdir=" + home.resolve("tmp"));
  }

  private static List<String> user(List<String> cmd, List<String> wrapper) {
    List<String> l = new ArrayList<>(wrapper);
    l.addAll(cmd);
    return l;
  }

  /** Runs {@code cmd} in {@code dir} with only {@code env}; its output; fails unless exit 0. */
  private static String run(List<String> cmd, Path dir, Map<String, String> env, int seconds)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().clear();
    pb.environment().putAll(env);
    pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    Path log = Files.createTempFile(work, "run-", ".log");
    pb.redirectOutput(log.toFile());
    Process p = pb.start();
    if (!p.waitFor(Timing.seconds(seconds).toMillis(), TimeUnit.MILLISECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor();
      fail(cmd + " did not end\n" + Files.readString(log, UTF_8));
    }
    String out = Files.readString(log, UTF_8);
    assertEquals(0, p.exitValue(), () -> cmd + "\n" + out);
    return out;
  }

  private static java.nio.file.attribute.FileAttribute<?> rwxrxrx() {
    return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private static Path which(String cmd) {
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      Path p = Path.of(d.isEmpty() ? "." : d, cmd);
      if (Files.isExecutable(p)) {
        return p.toAbsolutePath();
      }
    }
    return null;
  }

  private static int count(String s, String what) {
    int n = 0;
    for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
      n++;
    }
    return n;
  }
}
