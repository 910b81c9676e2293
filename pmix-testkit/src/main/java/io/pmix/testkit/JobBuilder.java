package io.pmix.testkit;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Describes a job of N processes for a {@link TestingPmixServer}: what each rank runs (a command,
 * a C program compiled against libpmix, or a Java main class in a forked JVM), its arguments and
 * environment. Every rank runs the same program with the same arguments and learns its rank from
 * the PMIx environment ({@code PMIX_RANK}, {@code PMIX_NAMESPACE}, ...), as under {@code mpirun}.
 *
 * <pre>{@code
 * JobResult r = pmix.job(4)
 *     .cProgram(Path.of("src/test/c/my_client.c"))
 *     .args("--iterations", "3")
 *     .run(Duration.ofSeconds(60));
 * assertTrue(r.succeeded(), r::describe);
 * }</pre>
 *
 * <p>Get one from {@link TestingPmixServer#job(int)}. Not thread-safe; use it from one thread.
 */
public final class JobBuilder {
  private enum Kind {
    NONE,
    COMMAND,
    C_SOURCE,
    JAVA
  }

  private final TestingPmixServer owner;
  private final int nprocs;
  private Kind kind = Kind.NONE;
  private final List<String> program = new ArrayList<>();
  private final List<String> args = new ArrayList<>();
  private final List<String> gccArgs = new ArrayList<>();
  private final List<String> jvmArgs = new ArrayList<>(defaultJvmArgs());
  private final Map<String, String> env = new LinkedHashMap<>();
  private @Nullable Path cSource;
  private @Nullable String mainClass;
  private @Nullable String classpath;
  private @Nullable Path directory;
  private @Nullable String nspace;
  private @Nullable Duration timeout;
  private boolean slurmEnv;
  private boolean echo;
  private Launch.@Nullable User user;

  JobBuilder(TestingPmixServer owner, int nprocs, boolean echo) {
    checkArgument(nprocs >= 1 && nprocs <= 65535, "nprocs must be 1 to 65535: %s", nprocs);
    this.owner = owner;
    this.nprocs = nprocs;
    this.echo = echo;
  }

  private static List<String> defaultJvmArgs() {
    List<String> l = new ArrayList<>(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData", "-Xshare:auto"));
    String scale = System.getProperty(Timing.PROPERTY);
    if (scale != null) {
      l.add("-D" + Timing.PROPERTY + "=" + scale);
    }
    return l;
  }

  private void setKind(Kind k) {
    checkState(kind == Kind.NONE, "the job already runs a %s", kind);
    kind = k;
  }

  /** Every rank runs this command (the executable is looked up on the PATH). */
  @CanIgnoreReturnValue
  public JobBuilder command(String executable, String... arguments) {
    setKind(Kind.COMMAND);
    program.add(requireNonNull(executable, "executable"));
    program.addAll(List.of(arguments));
    return this;
  }

  /** Every rank runs this command. */
  @CanIgnoreReturnValue
  public JobBuilder command(List<String> argv) {
    checkArgument(!argv.isEmpty(), "empty command");
    return command(argv.get(0), argv.subList(1, argv.size()).toArray(new String[0]));
  }

  /**
   * Every rank runs the C program built from {@code source} against libpmix ({@link
   * CCompiler#compile}), compiled when the job starts (once, then cached).
   *
   * @param source the C file, absolute or relative to the module directory
   * @param extraGccArgs more gcc arguments
   */
  @CanIgnoreReturnValue
  public JobBuilder cProgram(Path source, String... extraGccArgs) {
    setKind(Kind.C_SOURCE);
    this.cSource = requireNonNull(source, "source");
    gccArgs.addAll(List.of(extraGccArgs));
    return this;
  }

  /**
   * Every rank runs {@code mainClass} in a JVM of its own (this JVM's {@code java}, this JVM's
   * class path unless {@link #classpath} says otherwise).
   */
  @CanIgnoreReturnValue
  public JobBuilder javaMain(Class<?> mainClass) {
    return javaMain(mainClass.getName());
  }

  /** Every rank runs the main class named {@code className} in a JVM of its own. */
  @CanIgnoreReturnValue
  public JobBuilder javaMain(String className) {
    setKind(Kind.JAVA);
    this.mainClass = requireNonNull(className, "className");
    return this;
  }

  /** The class path of the forked JVMs (default: this JVM's {@code java.class.path}). */
  @CanIgnoreReturnValue
  public JobBuilder classpath(String path) {
    this.classpath = requireNonNull(path, "path");
    return this;
  }

  /**
   * Replaces the options of the forked JVMs (default: serial GC, C1 only, no perf data, class
   * data sharing, and this JVM's {@value Timing#PROPERTY} if set: small, quick-starting JVMs).
   */
  @CanIgnoreReturnValue
  public JobBuilder jvmArgs(String... options) {
    jvmArgs.clear();
    jvmArgs.addAll(List.of(options));
    return this;
  }

  /** Appends arguments given to every rank's program. */
  @CanIgnoreReturnValue
  public JobBuilder args(String... more) {
    args.addAll(List.of(more));
    return this;
  }

  /** Appends arguments given to every rank's program. */
  @CanIgnoreReturnValue
  public JobBuilder args(List<String> more) {
    args.addAll(more);
    return this;
  }

  /** Adds a variable to every rank's environment (after the server's, so it wins). */
  @CanIgnoreReturnValue
  public JobBuilder env(String name, String value) {
    env.put(requireNonNull(name, "name"), requireNonNull(value, "value"));
    return this;
  }

  /** The working directory of the processes (default: this JVM's). */
  @CanIgnoreReturnValue
  public JobBuilder directory(Path dir) {
    this.directory = requireNonNull(dir, "dir");
    return this;
  }

  /** The job's namespace (default: a fresh {@code tk-<pid>-<n>}). */
  @CanIgnoreReturnValue
  public JobBuilder nspace(String name) {
    this.nspace = requireNonNull(name, "name");
    return this;
  }

  /**
   * Kill the job when it runs longer than {@code limit} ({@linkplain Timing#scaled scaled}); its
   * result then says {@link JobResult#timedOut()}. Default: no limit of its own ({@link
   * RunningJob#await} still bounds the wait).
   */
  @CanIgnoreReturnValue
  public JobBuilder timeout(Duration limit) {
    this.timeout = Timing.scaled(requireNonNull(limit, "limit"));
    return this;
  }

  /**
   * Export {@code SLURM_JOBID}, {@code SLURM_STEP_ID} and {@code SLURM_NODELIST}, without which
   * Open MPI 4.1 runs each rank of a directly launched job as a singleton.
   */
  @CanIgnoreReturnValue
  public JobBuilder slurmEnv(boolean on) {
    this.slurmEnv = on;
    return this;
  }

  /**
   * Run every process as user {@code uid} and group {@code gid} (no supplementary groups)
   * instead of as this JVM's user: the job is registered with these ids, so they are what the
   * server authenticates and what the host's publish/lookup rules see, and each process is
   * started through {@code setpriv --reuid=UID --regid=GID --clear-groups} (util-linux), which
   * needs this JVM to run as root. Numeric ids need no passwd entry. The program, the working
   * directory and the server's {@linkplain TestingPmixServer#tmpdir temporary directory} (created
   * {@code rwxr-xr-x}) must be reachable by that user; the kit's compiled C programs are.
   */
  @CanIgnoreReturnValue
  public JobBuilder user(int uid, int gid) {
    this.user = new Launch.User(uid, gid);
    return this;
  }

  /**
   * Also copy the processes' output to this JVM's stdout and stderr, each line tagged {@code
   * [nspace,rank]<stdout>: } (default: the server's {@link TestingPmixServer.Builder#echoOutput}).
   * Output is captured for the {@link JobResult} either way.
   */
  @CanIgnoreReturnValue
  public JobBuilder echoOutput(boolean on) {
    this.echo = on;
    return this;
  }

  /**
   * Registers the job and starts its processes (compiling a C program first if needed).
   *
   * @throws CToolchainUnavailableException if a C program cannot be built on this machine
   * @throws IllegalStateException if nothing to run was given, or the processes cannot start
   */
  public RunningJob start() {
    return owner.launch(nprocs, argv(), env, directory, nspace, slurmEnv, timeout, echo, user);
  }

  /** {@link #start()}, then {@link RunningJob#await} with {@code timeout}. */
  public JobResult run(Duration timeout) {
    return start().await(timeout);
  }

  private List<String> argv() {
    List<String> argv = new ArrayList<>();
    switch (kind) {
      case NONE -> throw new IllegalStateException("nothing to run: give a command, C program or main");
      case COMMAND -> argv.addAll(program);
      case C_SOURCE ->
          argv.add(CCompiler.compile(requireNonNull(cSource), gccArgs.toArray(new String[0]))
              .toString());
      case JAVA -> {
        argv.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        argv.addAll(jvmArgs);
        argv.add("-cp");
        argv.add(classpath != null ? classpath : System.getProperty("java.class.path", "."));
        argv.add(requireNonNull(mainClass));
      }
    }
    argv.addAll(args);
    return argv;
  }
}
