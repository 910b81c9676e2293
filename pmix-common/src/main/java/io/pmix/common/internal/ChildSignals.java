package io.pmix.common.internal;

/**
 * Lets a process this JVM starts begin with no signal blocked, as the processes of a C launcher
 * (Open MPI's mpirun, Slurm's srun) do. HotSpot blocks {@code SIGQUIT} in every Java thread (only
 * its own VM thread takes it, for thread dumps), and a started process inherits the blocked
 * signals of the thread that starts it, whatever the JDK's launch mechanism; so a rank pmixrun
 * started could not be ended by {@code SIGQUIT} (a terminal's Ctrl-\), which stayed pending.
 *
 * <p>Use: {@code long had = ChildSignals.unblockAll(); try { builder.start(); } finally {
 * ChildSignals.restore(had); }}. The calling thread has no signal blocked in between: a {@code
 * SIGQUIT} sent to this JVM then may run HotSpot's handler on it, which only tells the VM thread
 * (a thread dump, as always). Without pmix-java's native library nothing changes. Each call acts
 * on the calling thread only.
 */
public final class ChildSignals {
  /** What {@link #unblockAll} answers when it changed nothing (SIGKILL and SIGSTOP never block). */
  private static final long UNCHANGED = -1L;

  private ChildSignals() {}

  /**
   * Unblocks every signal in the calling thread.
   *
   * @return what to hand to {@link #restore} on the same thread
   */
  public static long unblockAll() {
    if (!PmixNativeLibrary.load()) {
      return UNCHANGED;
    }
    try {
      return swapMask0(0L);
    } catch (UnsatisfiedLinkError e) {
      return UNCHANGED; // a library of another build: the mask stays as the JVM set it
    }
  }

  /** Gives the calling thread back the blocked signals {@link #unblockAll} found. */
  public static void restore(long had) {
    if (had != UNCHANGED) {
      long unused = swapMask0(had);
    }
  }

  /** Sets the calling thread's blocked signals (signal s as bit s-1); returns the previous ones. */
  private static native long swapMask0(long mask);
}
