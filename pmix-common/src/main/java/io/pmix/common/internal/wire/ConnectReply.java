package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.pmix.common.Status;
import io.pmix.common.codec.WireBuffer;
import java.util.Optional;

/**
 * The server's answer to a connect request: raw big-endian fields with no header, in one of the
 * layouts of {@link ReplyLayout} (docs/transport.md §7). A server writes it with {@link #encode};
 * a Java connector reads it with {@link #tryDecode} or a {@link ConnectReplyDecoder}.
 *
 * <p>A server rejects a connector by closing the socket before the first reply byte, never by a
 * non-zero status: 4.2.2 clients ignore the status and 4.2.2 tools hang on it. A connector must
 * nevertheless treat a non-zero status, or EOF before the reply is complete, as failure.
 */
public sealed interface ConnectReply permits ClientReply, ToolReply {
  /** Field #1: the server's verdict. */
  Status status();

  /** Whether the connection was accepted: every status field of the reply is success. */
  boolean isSuccess();

  /** Appends the reply's fields to {@code out}. */
  void encode(WireBuffer out);

  /** Appends the reply's fields to a Netty buffer (the server's). */
  default void encode(ByteBuf out) {
    encode(WireBuffer.of(out));
  }

  /**
   * Decodes a reply in {@code layout} if {@code in} holds all of it, consuming exactly its bytes;
   * otherwise returns empty and consumes nothing, so the caller can try again when more bytes have
   * arrived.
   *
   * @throws io.pmix.common.PmixException with {@code ERR_BAD_PARAM} if an nspace field is not UTF-8
   */
  static Optional<ConnectReply> tryDecode(ByteBuf in, ReplyLayout layout) {
    return tryDecode(WireBuffer.of(in), layout);
  }

  /** {@link #tryDecode(ByteBuf, ReplyLayout)} of an array-backed buffer (the connector's). */
  static Optional<ConnectReply> tryDecode(WireBuffer in, ReplyLayout layout) {
    requireNonNull(layout, "layout");
    if (layout == ReplyLayout.CLIENT) {
      Optional<ClientReply> c = ClientReply.tryDecode(in);
      return c.isPresent() ? Optional.of(c.get()) : Optional.empty();
    }
    Optional<ToolReply> t = ToolReply.tryDecode(in, layout == ReplyLayout.TOOL_WITH_ASSIGNED_ID);
    return t.isPresent() ? Optional.of(t.get()) : Optional.empty();
  }
}
