package io.pmix.common.internal.wire;

/**
 * The routing tags of the message header (docs/transport.md §5.2).
 *
 * <p>Tags below {@link #DYNAMIC_BASE} are reserved for unsolicited traffic; a request carries a
 * dynamic tag from a {@link TagAllocator} and its reply echoes it. Tags are unsigned 32-bit values
 * held in an {@code int}: compare them with {@link Integer#compareUnsigned}.
 */
public final class Tags {
  /** Server to connector: event notifications, at any moment, even before the first reply. */
  public static final int NOTIFY = 0;

  /** Connector to server: an empty one-way heartbeat. */
  public static final int HEARTBEAT = 1;

  /** Forwarded standard I/O. */
  public static final int IOF = 2;

  /**
   * The dynamic counter's start and wrap value (PMIX_PTL_TAG_DYNAMIC). The counter is incremented
   * before use, so the first request uses 101; 100 itself is handed out only after a wrap.
   */
  public static final int DYNAMIC_BASE = 100;

  /**
   * The tag in a connect request's header. The C server never reads it, but every C connector
   * writes it, together with the same value as pindex.
   */
  public static final int CONNECT_REQUEST = 0xFFFFFFFF;

  private Tags() {}

  /**
   * Whether {@code tag} lies in the reserved range 0 to 99. Later OpenPMIx versions add reserved
   * tags 3 and 4; a connector should ignore reserved tags it does not know.
   */
  public static boolean isReserved(int tag) {
    return Integer.compareUnsigned(tag, DYNAMIC_BASE) < 0;
  }
}
