package io.pmix.server.internal;

import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.gds.GdsKind;
import io.pmix.server.internal.gds.StoreWrites;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A connection the server accepted, as the server's state sees it: what a {@link
 * io.pmix.server.internal.lifecycle.Peer} is reached through, whatever carries the bytes. The
 * handshake, the admission, the replies and the closes all go through this type, so that the
 * transport under it (Netty's today, {@link NettyConnection}) can change without touching them
 * (docs/architecture.md, "A server transport without Netty").
 *
 * <p>Besides the socket it keeps what the admission learned of a client's shared-memory store
 * (the module its handshake announced; the gate its replies pass), set once before it becomes a
 * peer. Progress thread only, except {@link #toString}.
 */
public abstract class ServerConnection {
  private @Nullable String announcedGds;
  private @Nullable StoreWrites storeGate;

  /** For the transports of this package. */
  protected ServerConnection() {}

  /** Whether the socket is still open: the peer has not closed it, nor the server. */
  public abstract boolean isOpen();

  /**
   * Sends the first {@code length} bytes of {@code frame} (written from index 0), after whatever
   * was sent before; nothing when the socket is closed. A write the socket fails closes the
   * connection, which then ends as if the peer had closed it.
   */
  public abstract void send(WireBuffer frame, int length);

  /** Closes the socket; the close is then reported as the peer's would be. Idempotent. */
  public abstract void close();

  /** Completes once the socket is closed (by either side). */
  public abstract CompletableFuture<Void> closed();

  /** The gds module the client's handshake announced; null for other connectors. */
  public final @Nullable String announcedGds() {
    return announcedGds;
  }

  /** Records the gds module the client's handshake announced. */
  public final void announcedGds(String module) {
    announcedGds = module;
  }

  /** Whether the client reads a shared-memory store (announced ds21 or ds12). */
  public final boolean readsStore() {
    String g = announcedGds;
    return g != null && !g.equals(GdsKind.HASH.libpmixName());
  }

  /**
   * The gate of the stores the client reads ({@link StoreWrites#afterWrites}): every reply to it
   * passes it. Null for clients of hash and other connectors.
   */
  public final @Nullable StoreWrites storeGate() {
    return storeGate;
  }

  /** Sets the gate every reply to this client passes. */
  public final void storeGate(StoreWrites gate) {
    storeGate = gate;
  }
}
