package io.pmix.client.internal;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.ThreadFactory;

/**
 * The threads the client library starts: one progress thread (the Netty event loop that owns the
 * connection and all mutable state) and one callback thread (where futures complete and event
 * handlers run, so application code never runs on the progress thread). Both are daemon threads:
 * an application that forgets to finalize can still exit.
 *
 * <p>A blocking call made on either thread would wait for work only that same thread can do, so
 * {@link #checkMayBlock} turns it into an immediate {@link IllegalStateException}.
 */
public final class ClientThreads {
  /** Name prefix of every thread the client starts; tests look for leftovers by it. */
  public static final String NAME_PREFIX = "pmix-client-";

  /** Name of the progress thread. */
  public static final String PROGRESS = NAME_PREFIX + "progress";

  /** Name of the callback thread. */
  public static final String CALLBACK = NAME_PREFIX + "callback";

  private ClientThreads() {}

  /** A thread of the client library. */
  static final class LibraryThread extends FastThreadLocalThread {
    LibraryThread(Runnable r, String name) {
      super(r, name);
      setDaemon(true);
    }
  }

  /** A factory of library threads with this exact name. */
  static ThreadFactory named(String name) {
    return r -> new LibraryThread(r, name);
  }

  /** Whether the calling thread is one of the library's own. */
  public static boolean onLibraryThread() {
    return Thread.currentThread() instanceof LibraryThread;
  }

  /**
   * Fails fast if the caller is a library thread, where waiting would deadlock.
   *
   * @throws IllegalStateException on the progress or callback thread
   */
  public static void checkMayBlock(String operation) {
    if (onLibraryThread()) {
      throw new IllegalStateException(
          "blocking PMIx."
              + operation
              + " called on the library's thread "
              + Thread.currentThread().getName()
              + " (from an event handler or a future's callback); use the non-blocking form");
    }
  }
}
