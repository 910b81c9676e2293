package io.pmix.client.internal;

import io.pmix.common.internal.connector.LibraryThreads;
import io.pmix.common.internal.connector.Role;

/**
 * The names of the threads the client library starts (one progress thread and one callback
 * thread per cycle, made by pmix-common's {@link LibraryThreads}), and the check that refuses a
 * blocking call on them.
 */
public final class ClientThreads {
  /** Name prefix of every thread the client starts; tests look for leftovers by it. */
  public static final String NAME_PREFIX = Role.CLIENT.threadPrefix();

  /** Name of the progress thread. */
  public static final String PROGRESS = Role.CLIENT.progressThread();

  /** Name of the callback thread. */
  public static final String CALLBACK = Role.CLIENT.callbackThread();

  private ClientThreads() {}

  /** Whether the calling thread is one of the client library's own. */
  public static boolean onLibraryThread() {
    return LibraryThreads.onLibraryThread(Role.CLIENT);
  }

  /**
   * Fails fast if the caller is a client library thread, where waiting would deadlock.
   *
   * @throws IllegalStateException on the progress or callback thread
   */
  public static void checkMayBlock(String operation) {
    LibraryThreads.checkMayBlock(Role.CLIENT, operation);
  }
}
