package io.pmix.common.internal;

/**
 * One netlink {@code sock_diag} exchange through pmix-java's own native library ({@link
 * PmixNativeLibrary}): pmix-server's socket-owner lookup builds the request and parses the answer;
 * this only carries the bytes to the kernel and back (a new {@code NETLINK_SOCK_DIAG} socket per
 * call, closed before returning). Stateless and thread-safe.
 */
public final class SockDiagCall {
  private SockDiagCall() {}

  /** Whether {@link #exchange} can be called: the native library is loaded. */
  public static boolean available() {
    return PmixNativeLibrary.load();
  }

  /**
   * Sends {@code request} (at most 256 bytes) and receives one answer into {@code reply}, waiting
   * {@code waitMicros} at most for it; with 0, not at all: the answer to a request for one socket
   * is queued while the kernel handles the send, so it is there, or the call returns {@code
   * -EAGAIN} (11).
   *
   * @return the answer's length, or minus the {@code errno} of the call that failed
   * @throws UnsatisfiedLinkError if {@link #available} is false
   */
  public static int exchange(byte[] request, byte[] reply, long waitMicros) {
    return exchange0(request, reply, waitMicros);
  }

  private static native int exchange0(byte[] request, byte[] reply, long waitMicros);
}
