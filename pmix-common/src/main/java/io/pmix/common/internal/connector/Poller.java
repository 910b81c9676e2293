package io.pmix.common.internal.connector;

import io.pmix.common.internal.LazyLogger;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * What a {@link ProgressLoop} waits on: the readiness of its sockets, and a wake-up from other
 * threads. Confined to the loop's thread, but for {@link #wakeup}.
 *
 * <p>Two implementations, one behaviour ({@code ProgressLoopTest} runs on both): {@link
 * NativePoller}, poll(2) and plain descriptors through pmix-java's own native library, and {@link
 * NioPoller}, a {@link java.nio.channels.Selector}, where that library does not load. The native
 * one is chosen when it can be: a fresh JVM's first {@code Selector} and {@code SocketChannel}
 * load and initialize ~100 classes of the JDK's and its socket options' native library, 20-30 ms
 * of every first {@code PMIx.init} on the test machine (docs/architecture.md, start-up of the
 * client).
 */
abstract class Poller {
  private static final System.Logger LOG = LazyLogger.of(Poller.class);

  /** Interest and readiness: the socket can be read (or has failed, or reached its end). */
  static final int OP_READ = 1;

  /** Interest and readiness: the socket can take bytes. */
  static final int OP_WRITE = 4;

  /** Interest and readiness: a connect in progress has an outcome. */
  static final int OP_CONNECT = 8;

  /**
   * The system property that chooses the poller: {@code nio} for NIO's always (a way around the
   * native one, should a site's sandbox refuse its calls), {@code auto} (the default) for the
   * native one where pmix-java's library loads.
   */
  static final String PROPERTY = "io.pmix.connector.poller";

  /**
   * The poller for a new loop, as {@link #PROPERTY} says: by default native when pmix-java's
   * library is loaded, else NIO.
   *
   * @throws IllegalArgumentException if the property has another value
   */
  static Poller open() throws IOException {
    String choice = System.getProperty(PROPERTY, "auto");
    if (choice.equals("nio")) {
      return NioPoller.open();
    }
    if (!choice.equals("auto")) {
      throw new IllegalArgumentException(
          "-D" + PROPERTY + "=" + choice + ": the poller is auto (the default) or nio");
    }
    Poller p = NativePoller.tryOpen();
    return p != null ? p : NioPoller.open();
  }

  /** A new unconnected socket whose readiness {@code registrant} is told of. */
  abstract StreamSocket socket(ProgressLoop.Registrant registrant) throws IOException;

  /**
   * Waits until a socket is ready for some of its interest operations, {@link #wakeup} is called,
   * or {@code timeoutMillis} passed (negative: no limit; 0: does not wait), then tells each ready
   * socket's registrant.
   */
  abstract void poll(long timeoutMillis) throws IOException;

  /** Ends the current or next {@link #poll} early. Any thread; nothing once closed. */
  abstract void wakeup();

  /** The registrants of the sockets still open. */
  abstract List<ProgressLoop.Registrant> registrants();

  /** Releases the poller itself; its sockets are closed by their owners before. */
  abstract void close();

  /** Tells a ready socket's registrant; a failure is logged and the loop goes on. */
  static void tell(ProgressLoop.Registrant r, int readyOps) {
    try {
      r.ready(readyOps);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a task on the PMIx progress thread threw", e);
    }
  }
}
