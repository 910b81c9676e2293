package io.pmix.testkit;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A job started by {@link JobBuilder#start()}: its processes run under the {@link
 * TestingPmixServer}; {@link #await} gives its {@link JobResult}.
 *
 * <p>The job is watched on a thread of its own from the start: a {@code PMIx_Abort} kills the
 * processes at once, whether or not anybody awaits. Closing the job (or the server) kills what
 * still runs. Thread-safe.
 */
public final class RunningJob implements AutoCloseable {
  /** The longest a killed job may take to end and be deregistered, before scaling. */
  private static final Duration WIND_DOWN = Duration.ofSeconds(30);

  private final Launch launch;

  RunningJob(Launch launch) {
    this.launch = requireNonNull(launch, "launch");
  }

  /** The job's namespace. */
  public String nspace() {
    return launch.nspace();
  }

  /** The number of processes. */
  public int nprocs() {
    return launch.nprocs();
  }

  /** The operating-system process ids, by rank. */
  public List<Long> pids() {
    return launch.pids();
  }

  /** Whether any process of the job still runs. */
  public boolean isAlive() {
    return launch.anyAlive();
  }

  /** Whether the job has ended and been deregistered. */
  public boolean isDone() {
    return launch.done().isDone();
  }

  /** The result, if the job has ended. */
  public Optional<JobResult> result() {
    return launch.done().isDone() && !launch.done().isCompletedExceptionally()
        ? Optional.of(launch.done().join())
        : Optional.empty();
  }

  /**
   * Waits for the job to end, at most {@code timeout} ({@linkplain Timing#scaled scaled}); when
   * that passes the job is killed and its result says {@link JobResult#timedOut()}.
   *
   * @throws IllegalStateException if the job did not even end after being killed, or its watcher
   *     failed
   */
  @CanIgnoreReturnValue
  public JobResult await(Duration timeout) {
    Duration wait = Timing.scaled(timeout);
    try {
      return launch.done().get(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      launch.timeOut();
      return windDown();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      launch.stop("interrupted", 130);
      throw new IllegalStateException("interrupted while awaiting job " + nspace(), e);
    } catch (ExecutionException | CancellationException e) {
      throw new IllegalStateException("job " + nspace() + " could not be watched", e);
    }
  }

  /** Kills every process of the job (the result's stop reason says so) and waits for the end. */
  @CanIgnoreReturnValue
  public JobResult kill() {
    launch.stop("killed by the test", 128 + 15);
    return windDown();
  }

  private JobResult windDown() {
    Duration d = Timing.scaled(WIND_DOWN);
    try {
      return launch.done().get(d.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "job " + nspace() + " did not end within " + d + " of being killed; live ranks "
              + launch.liveRanks(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while awaiting job " + nspace(), e);
    } catch (ExecutionException | CancellationException e) {
      throw new IllegalStateException("job " + nspace() + " could not be watched", e);
    }
  }

  /** Kills what still runs and waits for the job to end. Idempotent. */
  @Override
  public void close() {
    if (!launch.done().isDone()) {
      kill();
    }
  }

  @Override
  public String toString() {
    return "RunningJob{" + nspace() + ", n=" + nprocs() + (isDone() ? ", done" : ", running") + "}";
  }
}
