package io.pmix.testkit.slurm;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import io.pmix.common.internal.LazyLogger;
import io.pmix.testkit.Timing;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real Slurm (Debian's slurm-wlm 22.05: slurmctld, slurmd and a private munged) on this one
 * machine, for tests that run tasks under {@code srun --mpi=pmix}, whose PMIx server is Slurm's
 * own (libpmix 4.2.2 inside slurmstepd).
 *
 * <p>Everything it makes lives in one directory given at {@link #start}: the munge key and
 * socket, {@code slurm.conf}, spool and state directories, logs and pid files, and Slurm's tmp
 * ({@code TmpFS}, where its PMIx plugin keeps each step's client directory). Nothing under
 * {@code /etc}, {@code /run}, {@code /var} or {@code /tmp} is touched, and the daemons listen on ports picked
 * when it starts, so it does not disturb a Slurm the machine already runs. Commands reach it
 * through {@code SLURM_CONF} ({@link #environment()}, {@link #command}). {@link #close()} stops
 * the three daemons and waits until they are gone.
 *
 * <p>The daemons must run as root (slurmd starts tasks as their users); without root, or without
 * the programs, {@link #start} throws {@link SlurmUnavailableException}. Not thread-safe: one
 * owner starts and closes it; {@link #command} may be called from any thread.
 */
public final class SingleNodeSlurm implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(SingleNodeSlurm.class);
  private static final Duration DAEMON_STOP_WAIT = Duration.ofSeconds(10);
  /** How long a leftover step daemon gets after SIGTERM (a hung one ignores it: seen in CI). */
  private static final Duration STEP_STOP_WAIT = Duration.ofSeconds(2);

  private final Path dir;
  private final String node;
  private final List<Daemon> daemons = new ArrayList<>();
  private boolean closed;

  /** A daemon we started, known by its pid file (they fork away from us). */
  private record Daemon(String name, Path pidFile) {}

  private SingleNodeSlurm(Path dir, String node) {
    this.dir = dir;
    this.node = node;
  }

  /**
   * Starts munged, slurmctld and slurmd with their files under {@code dir} (created if needed)
   * and waits until the node is idle, at most {@code timeout} (scaled by {@link Timing}).
   *
   * @throws SlurmUnavailableException if this is not root or Slurm or munge is not installed
   * @throws IllegalStateException if a daemon fails to start or the node does not come up
   */
  public static SingleNodeSlurm start(Path dir, Duration timeout) {
    requireNonNull(dir, "dir");
    requireNonNull(timeout, "timeout");
    checkAvailable();
    Path root = dir.toAbsolutePath().normalize();
    SingleNodeSlurm s = new SingleNodeSlurm(root, hostname());
    try {
      s.startDaemons(Timing.scaled(timeout));
      return s;
    } catch (IOException e) {
      s.close();
      throw new UncheckedIOException(e);
    } catch (RuntimeException | Error e) {
      s.close();
      throw e;
    }
  }

  /** Throws {@link SlurmUnavailableException} unless this machine can run {@link #start}. */
  public static void checkAvailable() {
    for (String p : List.of("munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol")) {
      if (find(p).isEmpty()) {
        throw new SlurmUnavailableException(
            p + " not found: install Debian's slurm-wlm and munge (bin/install-test-deps does)");
      }
    }
    if (!isRoot()) {
      throw new SlurmUnavailableException("the Slurm daemons of a test cluster must run as root");
    }
  }

  /** The directory holding everything this cluster made. */
  public Path directory() {
    return dir;
  }

  /** The node's name (this machine's short host name). */
  public String nodeName() {
    return node;
  }

  /** The slurm.conf that Slurm's commands must read. */
  public Path conf() {
    return dir.resolve("slurm.conf");
  }

  /** The environment a Slurm command needs to reach this cluster ({@code SLURM_CONF}). */
  public Map<String, String> environment() {
    return Map.of("SLURM_CONF", conf().toString());
  }

  /**
   * A process builder for a Slurm command of this cluster ({@code srun}, {@code sinfo}, ...) with
   * {@link #environment()} set; the caller starts it.
   */
  public ProcessBuilder command(List<String> commandAndArgs) {
    if (commandAndArgs.isEmpty()) {
      throw new IllegalArgumentException("no command");
    }
    ProcessBuilder pb = new ProcessBuilder(commandAndArgs);
    pb.environment().putAll(environment());
    return pb;
  }

  /** A Slurm log ({@code slurmctld.log}, {@code slurmd.log}, {@code munged.log}), or "". */
  public String log(String name) {
    try {
      Path p = dir.resolve("log").resolve(name);
      return Files.exists(p) ? Files.readString(p, UTF_8) : "";
    } catch (IOException e) {
      return "(cannot read " + name + ": " + e.getMessage() + ")";
    }
  }

  private void startDaemons(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (String sub : List.of("munge", "spool/ctld", "spool/d", "log", "run")) {
      Files.createDirectories(dir.resolve(sub));
    }
    stopStale();
    // Slurm's tmp (TmpFS): its PMIx plugin makes spmix_appdir_<uid>_<job>.<step> there per step
    // and leaves it behind when a step's processes are killed. Job ids start at 1 again with each
    // fresh slurmctld, so a leftover of an earlier instance made a later step of the same id fail
    // to launch ("File exists"). Ours, emptied at every start and close: nothing in /tmp.
    Path tmp = dir.resolve("tmp");
    deleteTree(tmp);
    Files.createDirectories(tmp);
    // Slurm (root) makes and hands over each step directory: others only pass through.
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    // munged checks its directories: the socket's must be searchable by all (users' sruns reach
    // it), the key private to root.
    Path munge = dir.resolve("munge");
    Files.setPosixFilePermissions(munge, PosixFilePermissions.fromString("rwx--x--x"));
    Path key = munge.resolve("munge.key");
    if (!Files.exists(key)) {
      byte[] bytes = new byte[1024];
      new SecureRandom().nextBytes(bytes);
      Files.write(key, bytes);
    }
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("r--------"));
    Path socket = munge.resolve("munge.socket");
    Path mungePid = munge.resolve("munged.pid");
    run(
        deadline,
        find("munged").orElseThrow().toString(),
        "--force",
        "--socket=" + socket,
        "--key-file=" + key,
        "--log-file=" + dir.resolve("log/munged.log"),
        "--pid-file=" + mungePid,
        "--seed-file=" + munge.resolve("munged.seed"));
    daemons.add(new Daemon("munged", mungePid));

    int[] ports = freePorts(2);
    Files.writeString(conf(), slurmConf(socket, ports[0], ports[1]), UTF_8);
    // slurmd 22.05 always loads a cgroup plugin; with proctrack/linuxproc nothing is constrained.
    Files.writeString(dir.resolve("cgroup.conf"), "CgroupPlugin=cgroup/v1\n", UTF_8);

    run(deadline, find("slurmctld").orElseThrow().toString(), "-f", conf().toString());
    daemons.add(new Daemon("slurmctld", dir.resolve("run/slurmctld.pid")));
    run(deadline, find("slurmd").orElseThrow().toString(), "-f", conf().toString());
    daemons.add(new Daemon("slurmd", dir.resolve("run/slurmd.pid")));
    awaitIdle(deadline);
  }

  private String slurmConf(Path mungeSocket, int ctldPort, int slurmdPort) {
    return String.join(
        "\n",
        "# Written by pmix-testkit's SingleNodeSlurm; everything lives under " + dir,
        "ClusterName=pmixtest",
        "SlurmctldHost=" + node,
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "AuthInfo=socket=" + mungeSocket,
        "CredType=cred/munge",
        "MpiDefault=none",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        // Lets the node declare more CPUs than the machine has (else it is marked invalid), so a
        // step may have more tasks than cores.
        "SlurmdParameters=config_overrides",
        "SlurmctldPort=" + ctldPort,
        "SlurmdPort=" + slurmdPort,
        "SlurmctldPidFile=" + dir.resolve("run/slurmctld.pid"),
        "SlurmdPidFile=" + dir.resolve("run/slurmd.pid"),
        "SlurmdSpoolDir=" + dir.resolve("spool/d"),
        "TmpFS=" + dir.resolve("tmp"),
        "StateSaveLocation=" + dir.resolve("spool/ctld"),
        "SlurmctldLogFile=" + dir.resolve("log/slurmctld.log"),
        "SlurmdLogFile=" + dir.resolve("log/slurmd.log"),
        "NodeName=" + node + " CPUs=16 State=UNKNOWN",
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16",
        "");
  }

  /** Waits until sinfo reports the node idle, resuming it if Slurm holds it down. */
  private void awaitIdle(long deadline) throws IOException {
    String state = "";
    while (System.nanoTime() < deadline) {
      state = output(deadline, "sinfo", "-h", "-n", node, "-o", "%T").strip();
      if (state.startsWith("idle") || state.startsWith("mixed") || state.startsWith("allocated")) {
        return;
      }
      if (state.startsWith("down") || state.startsWith("drain")) {
        String unused =
            output(deadline, "scontrol", "update", "nodename=" + node, "state=resume");
      }
      sleepQuietly(Duration.ofMillis(200));
    }
    throw new IllegalStateException(
        "the Slurm node did not become idle (state '" + state + "'); slurmd.log:\n"
            + tail(log("slurmd.log")) + "\nslurmctld.log:\n" + tail(log("slurmctld.log")));
  }

  /** Runs a daemon's start command, which forks the daemon and exits. */
  private void run(long deadline, String... command) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(environment());
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("log/start.log").toFile()));
    Process p = pb.start();
    if (!waitFor(p, deadline)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", command) + " did not return");
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + " exited " + p.exitValue() + ":\n" + tail(log("start.log")));
    }
  }

  private String output(long deadline, String... command) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(command));
    cmd.set(0, find(command[0]).orElseThrow().toString());
    Process p = command(cmd).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!waitFor(p, deadline)) {
      p.destroyForcibly();
    }
    return new String(out, UTF_8);
  }

  private static boolean waitFor(Process p, long deadline) {
    try {
      return p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Stops daemons a previous run in this directory left (a killed test JVM). */
  private void stopStale() {
    stop(new Daemon("slurmd", dir.resolve("run/slurmd.pid")));
    stop(new Daemon("slurmctld", dir.resolve("run/slurmctld.pid")));
    stop(new Daemon("munged", dir.resolve("munge/munged.pid")));
  }

  /** Stops slurmd, slurmctld and munged, in that order, and waits for each to exit. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (int i = daemons.size() - 1; i >= 0; i--) {
      stop(daemons.get(i));
    }
    daemons.clear();
    stopLeftoverSteps();
    try {
      deleteTree(dir.resolve("tmp"));
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot empty " + dir.resolve("tmp"), e);
    }
  }

  /**
   * Ends the step daemons of this instance still running once its daemons are gone. Slurm 22.05's
   * slurmstepd of a step cancelled under {@code --mpi=pmix} can hang for good (seen in CI: {@code
   * [8.0]} of a job whose task was SIGKILLed, blocked on a futex, minutes after its job completed),
   * and nothing else would end it. Ours are told apart by the {@code SLURM_CONF} they inherited
   * from our slurmd; a process whose environment cannot be read is not ours to end.
   */
  private void stopLeftoverSteps() {
    String stepd = realPath("slurmstepd");
    String conf = "SLURM_CONF=" + conf();
    List<ProcessHandle> ours =
        ProcessHandle.allProcesses()
            .filter(h -> h.info().command().map(stepd::equals).orElse(false))
            .filter(h -> environmentHolds(h.pid(), conf))
            .toList();
    for (ProcessHandle h : ours) {
      LOG.log(
          System.Logger.Level.WARNING,
          "a Slurm step daemon (pid {0}) outlived its slurmd; ending it",
          h.pid());
      boolean unused = h.destroy();
    }
    for (ProcessHandle h : ours) {
      try {
        h.onExit().get(STEP_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        boolean unused = h.destroyForcibly();
      }
    }
  }

  /** Whether process {@code pid}'s environment holds the entry {@code entry} ({@code K=V}). */
  private static boolean environmentHolds(long pid, String entry) {
    byte[] env;
    try {
      env = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
    } catch (IOException | SecurityException e) {
      return false;
    }
    String all = new String(env, UTF_8);
    int from = 0;
    while (from < all.length()) {
      int end = all.indexOf('\0', from);
      if (end < 0) {
        end = all.length();
      }
      if (end - from == entry.length() && all.startsWith(entry, from)) {
        return true;
      }
      from = end + 1;
    }
    return false;
  }

  /** Removes {@code p} and everything under it, if it exists. */
  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (java.util.stream.Stream<Path> w = Files.walk(p)) {
      for (Path f : w.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }

  private static void stop(Daemon d) {
    Optional<ProcessHandle> h = pidOf(d.pidFile()).flatMap(ProcessHandle::of);
    if (h.isEmpty() || !h.get().isAlive()) {
      return;
    }
    ProcessHandle p = h.get();
    if (!p.info().command().map(c -> c.equals(realPath(d.name()))).orElse(false)) {
      return; // the pid file is stale and its pid now belongs to something else
    }
    boolean unused = p.destroy();
    try {
      p.onExit().get(DAEMON_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.log(System.Logger.Level.WARNING, "{0} did not stop; killing it", d.name());
      boolean unused2 = p.destroyForcibly();
    }
  }

  /** The executable a daemon's process runs (Debian's slurmd is a link to slurmd-wlm). */
  private static String realPath(String program) {
    try {
      Optional<Path> p = find(program);
      return p.isPresent() ? p.get().toRealPath().toString() : program;
    } catch (IOException e) {
      return program;
    }
  }

  private static Optional<Long> pidOf(Path pidFile) {
    try {
      if (!Files.exists(pidFile)) {
        return Optional.empty();
      }
      return Optional.of(Long.parseLong(Files.readString(pidFile, UTF_8).strip()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** Ports free now; a daemon that cannot bind one fails to start and the test says so. */
  private static int[] freePorts(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] out = new int[n];
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        out[i] = s.getLocalPort();
      }
      return out;
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }

  private static Optional<Path> find(String program) {
    List<String> dirs = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      dirs.addAll(List.of(path.split(":")));
    }
    dirs.addAll(List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin"));
    for (String d : dirs) {
      if (d.isEmpty()) {
        continue;
      }
      Path p = Path.of(d, program);
      if (Files.isExecutable(p)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  private static boolean isRoot() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"), UTF_8)) {
        if (line.startsWith("Uid:")) {
          return line.split("\\s+")[2].equals("0"); // the effective uid
        }
      }
    } catch (IOException e) {
      return false;
    }
    return false;
  }

  /** The short host name, which slurmd takes as its node name. */
  private static String hostname() {
    try {
      String h = Files.readString(Path.of("/proc/sys/kernel/hostname"), UTF_8).strip();
      int dot = h.indexOf('.');
      return dot > 0 ? h.substring(0, dot) : h;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String tail(String s) {
    return s.length() <= 4000 ? s : s.substring(s.length() - 4000);
  }

  private static void sleepQuietly(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
