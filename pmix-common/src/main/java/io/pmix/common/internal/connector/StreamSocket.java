package io.pmix.common.internal.connector;

import java.io.IOException;

/**
 * A non-blocking TCP socket of a {@link Poller}: connected, read and written on the loop's thread
 * only, its registrant told of its readiness for the operations of {@link #interest}.
 */
abstract class StreamSocket {
  /**
   * Starts connecting to {@code host} (an address, or a name to resolve) and {@code port}, with
   * Nagle's algorithm off (requests are small and answered one by one; C sets it too).
   *
   * @return whether the connection is made already; if not, {@link Poller#OP_CONNECT} will tell
   */
  abstract boolean connect(String host, int port) throws IOException;

  /**
   * The outcome of a connect in progress, once {@link Poller#OP_CONNECT} was told.
   *
   * @return whether it is connected (false: not yet)
   * @throws IOException if the connect failed
   */
  abstract boolean finishConnect() throws IOException;

  /**
   * Reads into {@code b[off, off + len)}.
   *
   * @return how many bytes, 0 when none is there, -1 at the end of the stream
   */
  abstract int read(byte[] b, int off, int len) throws IOException;

  /**
   * Writes from {@code b[off, off + len)}.
   *
   * @return how many bytes the socket took (0 when it takes none now)
   */
  abstract int write(byte[] b, int off, int len) throws IOException;

  /** Sets the operations ({@link Poller#OP_READ} and the others) the registrant is told of. */
  abstract void interest(int ops);

  /** The operations set by {@link #interest}. */
  abstract int interest();

  /** Whether it has not been closed. */
  abstract boolean isOpen();

  /** Closes the socket and forgets its registrant; a second call does nothing. */
  abstract void close() throws IOException;
}
