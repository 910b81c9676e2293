package io.pmix.testkit;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.pmix.common.internal.LazyLogger;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import java.io.PrintStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A real {@link PMIxServer} for tests, with the {@linkplain SingleNodeHost single-node host
 * module} {@code pmixrun} uses, that launches real client processes: C programs compiled against
 * libpmix, Java main classes in forked JVMs, or any command (Curator's {@code TestingServer}, for
 * PMIx).
 *
 * <pre>{@code
 * try (TestingPmixServer pmix = TestingPmixServer.start()) {
 *   JobResult r = pmix.job(4).command("sh", "-c", "echo $PMIX_RANK").run(Duration.ofSeconds(30));
 *   assertTrue(r.succeeded(), r::describe);
 *   assertEquals("2\n", r.stdout(2));
 * }
 * }</pre>
 *
 * <p>Each job gets its own namespace with the job data a launcher registers (sizes, node and
 * process maps, local peers and ranks, app number, job id, ...); each process gets the server's
 * fork environment. When the job ends it is deregistered, and its {@link JobResult} carries exit
 * codes, captured output, and server snapshots from just before and just after deregistration.
 *
 * <p>{@link #close()} kills whatever still runs, closes the server and removes its temporary
 * directory. {@link PmixTestExtension} does that after each test and fails the test if something
 * was left running. Timeouts given to the kit are {@linkplain Timing#scaled scaled}.
 *
 * <p>Thread-safe. Owns the server, its host and its temporary directory, and every process it
 * starts.
 */
public final class TestingPmixServer implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(TestingPmixServer.class);
  private static final AtomicInteger SERVERS = new AtomicInteger();

  private final PMIxServer server;
  private final SingleNodeHost host;
  private final Path tmpdir;
  private final boolean echo;
  private final String prefix;
  private final AtomicInteger jobSeq = new AtomicInteger();
  // Shared by every job that echoes: writes synchronize on these streams. They go through
  // System.out/err as they are at the time (a test runner may have replaced them), never to the
  // raw descriptors, which a forked test JVM uses to talk to its build tool.
  private final OutputStream stdout = new CurrentStream(false);
  private final OutputStream stderr = new CurrentStream(true);

  @GuardedBy("this")
  private final List<RunningJob> jobs = new ArrayList<>();

  @GuardedBy("this")
  private boolean closed;

  private TestingPmixServer(Builder b) {
    int id = SERVERS.incrementAndGet();
    this.prefix = "tk" + ProcessHandle.current().pid() + "-" + id + "-";
    this.echo = b.echo;
    try {
      this.tmpdir =
          Files.createTempDirectory(
              "pmix-testkit-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the server's temporary directory", e);
    }
    ServerOptions.Builder ob =
        ServerOptions.builder()
            // Not "pmix...": libpmix reserves keys starting so, and clients build keys from it.
            .serverNspace("tk" + ProcessHandle.current().pid() + "-" + id)
            .tmpdir(tmpdir)
            .systemTmpdir(tmpdir);
    if (b.hostname != null) {
      ob.hostname(b.hostname);
    }
    b.configure.accept(ob);
    ServerOptions options = ob.build();
    // As pmixrun: the embedded store runs on the server's progress thread.
    this.host = SingleNodeHost.storeOnServerThread(options.hostname());
    try {
      this.server = PMIxServer.init(host, options);
    } catch (RuntimeException e) {
      host.close();
      deleteTree(tmpdir);
      throw e;
    }
    try {
      host.storeOn(server, b.storeOptions);
    } catch (RuntimeException e) {
      server.close();
      host.close();
      deleteTree(tmpdir);
      throw e;
    }
    // Jobs clients spawn run like the test's own: listed in jobs(), killed at close.
    host.spawner(
        (requester, apps, jobInfo) -> {
          String ns = prefix + jobSeq.incrementAndGet();
          Launch.Output out =
              echo ? new Launch.Output(true, stdout, stderr, true, false) : Launch.Output.captureOnly();
          return start(Launch.spawnSpec(ns, requester, apps, false, Map.of(), out, null))
              .nspace();
        });
  }

  /** A started server with the defaults. */
  public static TestingPmixServer start() {
    return builder().build();
  }

  /** A builder for a server with other settings. */
  public static Builder builder() {
    return new Builder();
  }

  /** The server itself, for whatever the kit does not cover (it stays owned by this object). */
  public PMIxServer server() {
    return server;
  }

  /** The host module. */
  public SingleNodeHost host() {
    return host;
  }

  /** The URI clients connect to. */
  public String uri() {
    return server.uri();
  }

  /** The server's temporary directory (removed by {@link #close()}). */
  public Path tmpdir() {
    return tmpdir;
  }

  /** The server's state now. */
  public ServerSnapshot snapshot() {
    return server.snapshot();
  }

  /** A job of {@code nprocs} processes, to describe and start. */
  public JobBuilder job(int nprocs) {
    return new JobBuilder(this, nprocs, echo);
  }

  /** Every job started so far, running or not, the jobs clients spawned included. */
  public synchronized List<RunningJob> jobs() {
    return List.copyOf(jobs);
  }

  RunningJob launch(
      int nprocs,
      List<String> argv,
      Map<String, String> env,
      @Nullable Path directory,
      @Nullable String nspace,
      boolean slurmEnv,
      @Nullable Duration timeout,
      boolean echoOutput,
      Launch.@Nullable User user) {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the server is closed");
      }
    }
    String ns = nspace != null ? nspace : prefix + jobSeq.incrementAndGet();
    Launch.Output out =
        echoOutput
            ? new Launch.Output(true, stdout, stderr, true, false)
            : Launch.Output.captureOnly();
    Launch.Spec spec =
        new Launch.Spec(ns, nprocs, argv, env, directory, slurmEnv, timeout, out, List.of(), user);
    try {
      return start(spec);
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** Starts a job and lists it; refused once closed. */
  private RunningJob start(Launch.Spec spec) throws IOException {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the server is closed");
      }
    }
    Launch l = Launch.start(server, host, spec, new Launch.Reporter() {});
    RunningJob job = new RunningJob(l);
    boolean late;
    synchronized (this) {
      late = closed;
      jobs.add(job);
    }
    if (late) {
      job.close();
      throw new IllegalStateException("the server was closed while the job started");
    }
    return job;
  }

  /**
   * Kills every job still running, closes the server and its host, removes the temporary
   * directory. Idempotent. A job found running is logged; {@link PmixTestExtension} fails the
   * test for it.
   */
  @Override
  public void close() {
    List<String> left = shutdown();
    for (String s : left) {
      LOG.log(Level.WARNING, "left running at close: {0}", s);
    }
  }

  /** {@link #close()}, returning what was still running (killed now), one line per job. */
  @CanIgnoreReturnValue
  List<String> shutdown() {
    List<RunningJob> all;
    synchronized (this) {
      if (closed) {
        return List.of();
      }
      closed = true;
      all = new ArrayList<>(jobs);
    }
    List<String> left = new ArrayList<>();
    for (RunningJob j : all) {
      if (j.isAlive()) {
        left.add(j.nspace() + " (" + j.nprocs() + " processes, pids " + j.pids() + ")");
      }
      try {
        j.close();
      } catch (RuntimeException e) {
        left.add(j.nspace() + ": " + e.getMessage());
      }
    }
    server.close();
    host.close();
    if (!server.isTerminated()) {
      left.add("the PMIx server did not terminate");
    }
    deleteTree(tmpdir);
    return left;
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      LOG.log(Level.DEBUG, "cannot remove " + dir, e);
    }
  }

  @Override
  public String toString() {
    return "TestingPmixServer{" + server.uri() + "}";
  }

  /** Writes to whatever {@code System.out} (or {@code System.err}) is when written to. */
  private static final class CurrentStream extends OutputStream {
    private final boolean err;

    CurrentStream(boolean err) {
      this.err = err;
    }

    private PrintStream target() {
      return err ? System.err : System.out;
    }

    @Override
    public void write(int b) {
      target().write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      target().write(b, off, len);
    }

    @Override
    public void flush() {
      target().flush();
    }
  }

  /** Settings of a {@link TestingPmixServer}. Not thread-safe. */
  public static final class Builder {
    private @Nullable String hostname;
    private Consumer<ServerOptions.Builder> configure = b -> {};
    private DataStoreOptions storeOptions = DataStoreOptions.defaults();
    private boolean echo;

    private Builder() {}

    /** The node's name, as the jobs see it (default: the server's default). */
    @CanIgnoreReturnValue
    public Builder hostname(String name) {
      this.hostname = requireNonNull(name, "name");
      return this;
    }

    /**
     * Adjusts the server's options after the kit's own settings (server namespace, temporary
     * directories, hostname).
     */
    @CanIgnoreReturnValue
    public Builder serverOptions(Consumer<ServerOptions.Builder> adjust) {
      this.configure = requireNonNull(adjust, "adjust");
      return this;
    }

    /** The options of the host's publish/lookup store. */
    @CanIgnoreReturnValue
    public Builder dataStoreOptions(DataStoreOptions options) {
      this.storeOptions = requireNonNull(options, "options");
      return this;
    }

    /** Whether jobs copy their output to this JVM's stdout/stderr by default (default false). */
    @CanIgnoreReturnValue
    public Builder echoOutput(boolean on) {
      this.echo = on;
      return this;
    }

    /** Starts the server. */
    public TestingPmixServer build() {
      return new TestingPmixServer(this);
    }
  }
}
