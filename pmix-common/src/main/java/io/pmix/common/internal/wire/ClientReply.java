package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;
import io.netty.buffer.ByteBuf;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.Status;
import java.util.Optional;

/**
 * The reply to a simple client, and to a singleton from servers of OpenPMIx 5.0.9 and later: the
 * status (i32) and the client's index at the server (u32), both big-endian, 8 bytes in all
 * (docs/transport.md §7.1). The client writes the index as the pindex of its later frames.
 *
 * <p>A reader always waits for all 8 bytes: a 4.2.2 server never sends a non-zero status to a
 * client (it closes instead). Immutable.
 *
 * @param status field #1; {@code SUCCESS} on acceptance
 * @param index field #2, the connection's slot at the server (first client 0)
 */
@Immutable
public record ClientReply(Status status, int index) implements ConnectReply {
  /** The length of a client reply on the wire. */
  public static final int LENGTH = 8;

  /** Checks the status is present. */
  public ClientReply {
    requireNonNull(status, "status");
  }

  /** An accepted client at {@code index}. */
  public static ClientReply accepted(int index) {
    return new ClientReply(Status.SUCCESS, index);
  }

  @Override
  public boolean isSuccess() {
    return status.isSuccess();
  }

  @Override
  public void encode(WireBuffer out) {
    out.writeInt(status.code());
    out.writeInt(index);
  }

  /**
   * The reply, if {@code in} holds its 8 bytes (which are then consumed); empty, consuming nothing,
   * if fewer have arrived.
   */
  public static Optional<ClientReply> tryDecode(WireBuffer in) {
    if (in.readableBytes() < LENGTH) {
      return Optional.empty();
    }
    Status status = Status.of(in.readInt());
    return Optional.of(new ClientReply(status, in.readInt()));
  }

  @Override
  public String toString() {
    return "ClientReply{" + status + ", index=" + Integer.toUnsignedString(index) + '}';
  }
}
