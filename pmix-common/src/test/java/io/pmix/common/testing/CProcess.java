package io.pmix.common.testing;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A child process (usually a C program from {@link CPrograms}) driven by a line protocol: the test
 * writes request lines to its stdin and reads reply lines from its stdout, each with a timeout. Its
 * stderr is drained continuously (so the child never blocks on a full pipe) and the last {@value
 * #STDERR_LINES} lines are kept for failure messages.
 *
 * <p>Failures are test failures: a timeout, an unexpected end of output or a dead child throws
 * {@link AssertionError} with the command, the exit status and the stderr tail. Every timeout is
 * multiplied by the system property {@code pmix.test.timeScale} (default 1), so a slow machine can
 * stretch them all at once.
 *
 * <p>The caller owns the process: {@link #close()} ends it (stdin is closed, then the child is
 * killed if it has not exited within a grace period). Use it in try-with-resources or close it in
 * an after-all hook. One thread at a time may send and read; {@link #isAlive()}, {@link
 * #describe()} and {@link #close()} may be called from any thread.
 */
public final class CProcess implements AutoCloseable {
  private static final int STDERR_LINES = 50;
  private static final Duration DEFAULT_CLOSE_GRACE = Duration.ofSeconds(2);

  private final String name;
  private final List<String> command;
  private final Process process;
  private final Writer stdin;
  private final Duration closeGrace;
  private final BlockingQueue<Line> stdout = new LinkedBlockingQueue<>();

  @GuardedBy("stderrTail")
  private final ArrayDeque<String> stderrTail = new ArrayDeque<>();

  /** Stderr watchers: each completes with the first line it matches after it was added. */
  private final List<StderrWatch> watches = new CopyOnWriteArrayList<>();

  private boolean stdoutEnded;

  private record StderrWatch(Predicate<String> match, CompletableFuture<String> line) {}

  /** One line of stdout, or its end (line null, maybe with the error that ended it). */
  private record Line(@Nullable String text, @Nullable IOException error) {}

  private CProcess(String name, List<String> command, Process process, Duration closeGrace) {
    this.name = name;
    this.closeGrace = closeGrace;
    this.command = command;
    this.process = process;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), UTF_8);
    pump(process.getInputStream(), "stdout", line -> stdout.add(new Line(line, null)));
    pump(
        process.getErrorStream(),
        "stderr",
        line -> {
          synchronized (stderrTail) {
            if (stderrTail.size() == STDERR_LINES) {
              stderrTail.removeFirst();
            }
            stderrTail.addLast(line);
          }
          watches.removeIf(w -> w.match().test(line) && w.line().complete(line));
        });
  }

  /** A builder for a process running {@code executable}. */
  public static Builder builder(Path executable) {
    return new Builder(executable);
  }

  /** {@code timeout} stretched by the system property {@code pmix.test.timeScale} ({@link TestTiming}). */
  public static Duration scaled(Duration timeout) {
    return TestTiming.scaled(timeout);
  }

  /**
   * A line of stderr to wait for: the returned future completes with the first line written
   * after this call that {@code match} accepts (a program's log of having reached some point, so
   * a test waits on that event instead of sleeping). It never completes if no such line comes;
   * wait on it with a timeout.
   */
  public CompletableFuture<String> watchStderr(Predicate<String> match) {
    StderrWatch w = new StderrWatch(requireNonNull(match, "match"), new CompletableFuture<>());
    watches.add(w);
    return w.line();
  }

  /** Writes one line (a newline is added) and flushes it. */
  public void send(String line) {
    checkArgument(line.indexOf('\n') < 0, "a line cannot contain a newline");
    try {
      stdin.write(line);
      stdin.write('\n');
      stdin.flush();
    } catch (IOException e) {
      throw new AssertionError("cannot write to " + describe(), e);
    }
  }

  /**
   * The next line of stdout, waiting at most {@code timeout} (scaled).
   *
   * @throws AssertionError on timeout or when the child's output has ended
   */
  public String readLine(Duration timeout) {
    checkState(!stdoutEnded, "the output of %s has ended", name);
    Duration wait = scaled(timeout);
    Line l;
    try {
      l = stdout.poll(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted waiting for " + name, e);
    }
    if (l == null) {
      throw new AssertionError("no line from " + describe() + " within " + wait);
    }
    if (l.text() == null) {
      stdoutEnded = true;
      // Give the exit status a moment to arrive so the message can show it.
      waitForExit(Duration.ofSeconds(1));
      throw new AssertionError("output ended: " + describe(), l.error());
    }
    return l.text();
  }

  /** {@link #send} then {@link #readLine}: one request, one reply. */
  public String request(String line, Duration timeout) {
    send(line);
    return readLine(timeout);
  }

  /** Whether the child is still running. */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** The operating-system process id. */
  public long pid() {
    return process.pid();
  }

  /** For messages: the command, whether it runs or how it ended, and the tail of its stderr. */
  public String describe() {
    StringBuilder b = new StringBuilder(name).append(" (pid ").append(process.pid());
    if (process.isAlive()) {
      b.append(", running");
    } else {
      int code = process.exitValue();
      b.append(", exited with ").append(code);
      if (code > 128) {
        b.append(" = signal ").append(code - 128);
      }
    }
    b.append("; command ").append(command).append(')');
    List<String> tail;
    synchronized (stderrTail) {
      tail = new ArrayList<>(stderrTail);
    }
    if (!tail.isEmpty()) {
      b.append("\n--- last lines of stderr ---\n").append(String.join("\n", tail));
    }
    return b.toString();
  }

  /**
   * Ends the child: closes its stdin (a line-protocol program exits at end of input), waits the
   * grace period of {@link Builder#closeGrace} (scaled), then kills it. Idempotent.
   */
  @Override
  public void close() {
    try {
      stdin.close();
    } catch (IOException e) {
      // The child has gone already: nothing to tell it.
    }
    if (!waitForExit(closeGrace)) {
      process.destroyForcibly();
      waitForExit(DEFAULT_CLOSE_GRACE);
    }
  }

  @CanIgnoreReturnValue
  private boolean waitForExit(Duration d) {
    try {
      return process.waitFor(scaled(d).toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void pump(InputStream in, String what, Consumer<String> sink) {
    Thread t =
        new Thread(
            () -> {
              IOException error = null;
              try (BufferedReader r = new BufferedReader(new InputStreamReader(in, UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  sink.accept(line);
                }
              } catch (IOException e) {
                error = e;
              }
              if (what.equals("stdout")) {
                stdout.add(new Line(null, error));
              }
            },
            "cprocess-" + name + "-" + process.pid() + "-" + what);
    t.setDaemon(true);
    t.start();
  }

  /** Collects the command, environment and name of a {@link CProcess}. Not thread-safe. */
  public static final class Builder {
    private final Path executable;
    private final List<String> args = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<String> unset = new ArrayList<>();
    private @Nullable String name;
    private @Nullable Path directory;
    private Duration closeGrace = DEFAULT_CLOSE_GRACE;

    private Builder(Path executable) {
      this.executable = requireNonNull(executable, "executable");
    }

    /** Appends command-line arguments. */
    @CanIgnoreReturnValue
    public Builder args(String... more) {
      args.addAll(List.of(more));
      return this;
    }

    /** Sets an environment variable for the child (on top of this JVM's environment). */
    @CanIgnoreReturnValue
    public Builder env(String key, String value) {
      env.put(requireNonNull(key, "key"), requireNonNull(value, "value"));
      unset.remove(key);
      return this;
    }

    /** Removes a variable this JVM's environment would pass on. */
    @CanIgnoreReturnValue
    public Builder unsetEnv(String key) {
      env.remove(key);
      unset.add(requireNonNull(key, "key"));
      return this;
    }

    /** The working directory (default: this JVM's). */
    @CanIgnoreReturnValue
    public Builder directory(Path dir) {
      this.directory = requireNonNull(dir, "dir");
      return this;
    }

    /** The name used in thread names and messages (default: the executable's file name). */
    @CanIgnoreReturnValue
    public Builder name(String n) {
      this.name = requireNonNull(n, "name");
      return this;
    }

    /**
     * How long {@link CProcess#close()} waits (scaled) for the child to exit at end of input before
     * it kills it (default 2 s; zero kills at once).
     */
    @CanIgnoreReturnValue
    public Builder closeGrace(Duration grace) {
      checkArgument(!grace.isNegative(), "negative grace period");
      this.closeGrace = grace;
      return this;
    }

    /** Starts the child; the caller owns it and must close it. */
    public CProcess start() {
      List<String> command = new ArrayList<>();
      command.add(executable.toString());
      command.addAll(args);
      ProcessBuilder pb = new ProcessBuilder(command);
      if (directory != null) {
        pb.directory(directory.toFile());
      }
      pb.environment().keySet().removeAll(unset);
      pb.environment().putAll(env);
      String n = name != null ? name : executable.getFileName().toString();
      try {
        return new CProcess(n, command, pb.start(), closeGrace);
      } catch (IOException e) {
        throw new AssertionError("cannot start " + command, e);
      }
    }
  }
}
