package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;

/**
 * The threads a connector library starts: per cycle one progress thread (the Netty event loop that
 * owns the connection and all mutable state) and one callback thread (where futures complete and
 * event handlers run, so application code never runs on the progress thread). Both are daemon
 * threads: an application that forgets to finalize can still exit.
 *
 * <p>A blocking call made on one of a role's own threads would wait for work only that same thread
 * can do, so {@link #checkMayBlock} turns it into an immediate {@link IllegalStateException}. A
 * thread of another role (a client's callback calling a blocking tool operation) may block.
 */
public final class LibraryThreads {
  private LibraryThreads() {}

  /** A thread of a connector library. */
  static final class LibraryThread extends FastThreadLocalThread {
    final Role role;

    LibraryThread(Runnable r, String name, Role role) {
      super(r, name);
      this.role = role;
      setDaemon(true);
    }
  }

  /** A factory of library threads with this exact name, each handed to {@code started}. */
  static ThreadFactory factory(Role role, String name, Consumer<Thread> started) {
    requireNonNull(role, "role");
    requireNonNull(name, "name");
    return r -> {
      Thread t = new LibraryThread(r, name, role);
      started.accept(t);
      return t;
    };
  }

  /** Whether the calling thread is one of {@code role}'s library threads. */
  public static boolean onLibraryThread(Role role) {
    return Thread.currentThread() instanceof LibraryThread t && t.role.equals(role);
  }

  /**
   * Fails fast if the caller is one of {@code role}'s threads, where waiting would deadlock.
   *
   * @throws IllegalStateException on the role's progress or callback thread
   */
  public static void checkMayBlock(Role role, String operation) {
    if (onLibraryThread(role)) {
      throw new IllegalStateException(
          "blocking "
              + role.api()
              + "."
              + operation
              + " called on the library's thread "
              + Thread.currentThread().getName()
              + " (from an event handler or a future's callback); use the non-blocking form");
    }
  }
}
