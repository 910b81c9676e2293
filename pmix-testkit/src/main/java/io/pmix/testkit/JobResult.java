package io.pmix.testkit;

import static com.google.common.base.Preconditions.checkElementIndex;
import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import io.pmix.common.Status;
import io.pmix.server.ServerSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * How a job ended: each process's exit code and output, why the launcher stopped it if it did, the
 * launcher's exit status, and the server's state just before and after the job was deregistered.
 * Immutable.
 *
 * <p>Exit codes follow the shell's convention: a process killed by signal {@code s} has {@code
 * 128 + s}. The {@linkplain #status() launcher status} is what {@code pmixrun} exits with: the
 * abort status after a {@code PMIx_Abort} (1 if it is 0 modulo 256), {@value #TIMEOUT_STATUS}
 * after a timeout, {@code 128 + signal} when the launcher was stopped by a signal, else the first
 * non-zero exit code in the order the processes ended, else 0.
 */
public final class JobResult {
  /** The launcher status after a timeout (as {@code timeout(1)}). */
  public static final int TIMEOUT_STATUS = 124;

  /**
   * A {@code PMIx_Abort} call.
   *
   * @param rank the caller
   * @param status the status it passed
   * @param message its message, or null
   * @param targets the ranks it asked to abort (every rank for the whole job)
   */
  public record Abort(int rank, Status status, @Nullable String message, List<Integer> targets) {
    /** Copies the targets. */
    public Abort {
      requireNonNull(status, "status");
      targets = List.copyOf(targets);
    }
  }

  private final String nspace;
  private final ImmutableList<Integer> exitCodes;
  private final ImmutableList<Long> pids;
  private final ImmutableList<String> stdout;
  private final ImmutableList<String> stderr;
  private final ImmutableList<Integer> exitOrder;
  private final @Nullable Abort abort;
  private final boolean timedOut;
  private final @Nullable String stopReason;
  private final int stopStatus;
  private final @Nullable ServerSnapshot before;
  private final @Nullable ServerSnapshot after;
  private final Duration elapsed;
  private final ImmutableSet<Integer> killedOnRequest;

  /** A job's outcome; {@code killedOnRequest}: the ranks a job-control request had killed. */
  JobResult(
      String nspace,
      List<Integer> exitCodes,
      List<Long> pids,
      List<String> stdout,
      List<String> stderr,
      List<Integer> exitOrder,
      @Nullable Abort abort,
      boolean timedOut,
      @Nullable String stopReason,
      int stopStatus,
      @Nullable ServerSnapshot before,
      @Nullable ServerSnapshot after,
      Duration elapsed,
      Set<Integer> killedOnRequest) {
    this.killedOnRequest = ImmutableSet.copyOf(killedOnRequest);
    this.nspace = nspace;
    this.exitCodes = ImmutableList.copyOf(exitCodes);
    this.pids = ImmutableList.copyOf(pids);
    this.stdout = ImmutableList.copyOf(stdout);
    this.stderr = ImmutableList.copyOf(stderr);
    this.exitOrder = ImmutableList.copyOf(exitOrder);
    this.abort = abort;
    this.timedOut = timedOut;
    this.stopReason = stopReason;
    this.stopStatus = stopStatus;
    this.before = before;
    this.after = after;
    this.elapsed = elapsed;
  }

  /** The job's namespace (also its job id). */
  public String nspace() {
    return nspace;
  }

  /** The number of processes. */
  public int nprocs() {
    return exitCodes.size();
  }

  /** The exit code of {@code rank}. */
  public int exitCode(int rank) {
    checkElementIndex(rank, exitCodes.size(), "rank");
    return exitCodes.get(rank);
  }

  /** The exit codes, by rank. */
  public List<Integer> exitCodes() {
    return exitCodes;
  }

  /** The operating-system process ids, by rank. */
  public List<Long> pids() {
    return pids;
  }

  /** The ranks in the order their processes ended. */
  public List<Integer> exitOrder() {
    return exitOrder;
  }

  /**
   * The ranks killed because a job-control request ({@code PMIx_Job_control} with {@code
   * pmix.jctrl.kill}) asked for it: as under PRRTE, their deaths are no failure of the job.
   */
  public Set<Integer> killedOnRequest() {
    return killedOnRequest;
  }

  /** The rank whose non-zero exit came first, if any did (a rank killed on request is none). */
  public OptionalInt firstFailedRank() {
    for (int r : exitOrder) {
      if (exitCodes.get(r) != 0 && !killedOnRequest.contains(r)) {
        return OptionalInt.of(r);
      }
    }
    return OptionalInt.empty();
  }

  /** The launcher's exit status (see the class comment). */
  public int status() {
    if (abort != null) {
      int s = abort.status().code() & 0xff;
      return s == 0 ? 1 : s;
    }
    if (timedOut) {
      return TIMEOUT_STATUS;
    }
    if (stopReason != null) {
      return stopStatus;
    }
    OptionalInt first = firstFailedRank();
    return first.isPresent() ? exitCodes.get(first.getAsInt()) : 0;
  }

  /** Whether the launcher status is 0: every process exited 0 and nobody stopped the job. */
  public boolean succeeded() {
    return status() == 0;
  }

  /** The first {@code PMIx_Abort} of the job, if one was called. */
  public Optional<Abort> abort() {
    return Optional.ofNullable(abort);
  }

  /** Whether the job ran out of time and was killed. */
  public boolean timedOut() {
    return timedOut;
  }

  /** Why the launcher stopped the job from outside (a signal, a test's kill), if it did. */
  public Optional<String> stopReason() {
    return Optional.ofNullable(stopReason);
  }

  /** Everything {@code rank} wrote to stdout (empty when output was not captured). */
  public String stdout(int rank) {
    checkElementIndex(rank, stdout.size(), "rank");
    return stdout.get(rank);
  }

  /** Everything {@code rank} wrote to stderr (empty when output was not captured). */
  public String stderr(int rank) {
    checkElementIndex(rank, stderr.size(), "rank");
    return stderr.get(rank);
  }

  /** The lines {@code rank} wrote to stdout. */
  public List<String> stdoutLines(int rank) {
    String s = stdout(rank);
    if (s.isEmpty()) {
      return List.of();
    }
    String[] parts = s.split("\n", -1);
    int n = s.endsWith("\n") ? parts.length - 1 : parts.length;
    return List.of(parts).subList(0, n);
  }

  /**
   * The server's state after every process ended, before the job was deregistered. A process that
   * ended without connecting was deregistered when it ended, as PRRTE does: it is not counted in
   * its namespace's {@code nlocalprocs} here.
   */
  public Optional<ServerSnapshot> snapshotBeforeDeregister() {
    return Optional.ofNullable(before);
  }

  /** The server's state after the job was deregistered. */
  public Optional<ServerSnapshot> snapshotAfterDeregister() {
    return Optional.ofNullable(after);
  }

  /** From the first process's start to the last one's end. */
  public Duration elapsed() {
    return elapsed;
  }

  /**
   * A description for failure messages: the status, how each rank ended, and the last lines of
   * each rank's output.
   */
  public String describe() {
    StringBuilder b = new StringBuilder();
    b.append("job ").append(nspace).append(": launcher status ").append(status());
    if (abort != null) {
      b.append(", aborted by rank ").append(abort.rank()).append(" with ").append(abort.status());
      if (abort.message() != null) {
        b.append(" \"").append(abort.message()).append('"');
      }
    }
    if (timedOut) {
      b.append(", timed out");
    }
    if (stopReason != null) {
      b.append(", stopped: ").append(stopReason);
    }
    b.append(", ").append(elapsed.toMillis()).append(" ms\n");
    for (int r = 0; r < exitCodes.size(); r++) {
      b.append("--- rank ").append(r).append(" (pid ").append(pids.get(r)).append(") exit ")
          .append(describeExit(exitCodes.get(r))).append('\n');
      appendTail(b, "stdout", stdout.get(r));
      appendTail(b, "stderr", stderr.get(r));
    }
    return b.toString();
  }

  /** {@code "0"}, {@code "3"}, or {@code "137 (signal 9)"}. */
  static String describeExit(int code) {
    return code > 128 && code < 128 + 65 ? code + " (signal " + (code - 128) + ")" : "" + code;
  }

  private static void appendTail(StringBuilder b, String what, String text) {
    if (text.isEmpty()) {
      return;
    }
    List<String> lines = new ArrayList<>(List.of(text.split("\n")));
    int from = Math.max(0, lines.size() - 20);
    if (from > 0) {
      b.append("  [").append(what).append(": ").append(from).append(" earlier lines]\n");
    }
    for (String l : lines.subList(from, lines.size())) {
      b.append("  ").append(what).append("| ").append(l).append('\n');
    }
  }

  @Override
  public String toString() {
    return "JobResult{" + nspace + ", status=" + status() + ", exitCodes=" + exitCodes + "}";
  }
}
