package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;
import io.netty.buffer.ByteBuf;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.Status;
import java.util.Optional;

/**
 * The reply to tools, launchers and (from servers before 5.0.9, and 6.0.x) singletons
 * (docs/transport.md §7.2). All fields are big-endian; nspaces are fix256:
 *
 * <ol>
 *   <li>status, i32: the host's verdict; if it is not success nothing follows ({@link StatusOnly})
 *       and the server closes;
 *   <li>assigned nspace and rank, only for connectors that need an identity (flags 3 and 6);
 *   <li>the server's nspace and rank;
 *   <li>validation status, i32: the credential check ({@code ERR_INVALID_CRED}, -12, when it
 *       failed, after which the server closes; -14 asks for a psec handshake that no distributed
 *       build has, so a Java connector treats it as failure too).
 * </ol>
 *
 * <p>A successful reply is 268 bytes, or 528 with an assigned identity ({@link Full}).
 */
public sealed interface ToolReply extends ConnectReply
    permits ToolReply.Full, ToolReply.StatusOnly {

  /**
   * The reply, if {@code in} holds all of it (which is then consumed); empty, consuming nothing, if
   * more bytes are needed. Whether an assigned identity follows the status depends on what the
   * connector asked for, so the caller says.
   *
   * @param assignedIdExpected whether the connector's kind {@link ConnectorKind#needsId()}
   * @throws io.pmix.common.PmixException with {@code ERR_BAD_PARAM} if an nspace field is not UTF-8
   */
  static Optional<ToolReply> tryDecode(WireBuffer in, boolean assignedIdExpected) {
    if (in.readableBytes() < Integer.BYTES) {
      return Optional.empty();
    }
    int start = in.readerIndex();
    Status status = Status.of(in.getInt(start));
    if (!status.isSuccess()) {
      in.skipBytes(Integer.BYTES);
      return Optional.of(new StatusOnly(status));
    }
    int needed =
        (assignedIdExpected ? ReplyLayout.TOOL_WITH_ASSIGNED_ID : ReplyLayout.TOOL).length();
    if (in.readableBytes() < needed) {
      return Optional.empty();
    }
    in.skipBytes(Integer.BYTES);
    Optional<PeerId> assigned = Optional.empty();
    if (assignedIdExpected) {
      String nspace = WireIo.readFix256(in, "assigned nspace");
      assigned = Optional.of(new PeerId(nspace, in.readInt()));
    }
    String serverNspace = WireIo.readFix256(in, "server nspace");
    PeerId server = new PeerId(serverNspace, in.readInt());
    return Optional.of(new Full(assigned, server, Status.of(in.readInt())));
  }

  /**
   * A reply whose status is success: the identities and the credential check follow.
   *
   * @param assignedId the identity the server assigned, present exactly when the connector asked
   *     for one
   * @param server the server's nspace and rank, where the connector sends its requests
   * @param validationStatus the credential check; the connection is usable only if it is success
   */
  @Immutable
  record Full(Optional<PeerId> assignedId, PeerId server, Status validationStatus)
      implements ToolReply {
    /** Checks the fields are present. */
    public Full {
      requireNonNull(assignedId, "assignedId");
      requireNonNull(server, "server");
      requireNonNull(validationStatus, "validationStatus");
    }

    /** Always {@code SUCCESS}: a non-success status makes a {@link StatusOnly}. */
    @Override
    public Status status() {
      return Status.SUCCESS;
    }

    @Override
    public boolean isSuccess() {
      return validationStatus.isSuccess();
    }

    @Override
    public void encode(WireBuffer out) {
      out.writeInt(Status.SUCCESS.code());
      if (assignedId.isPresent()) {
        WireIo.writeFix256(out, assignedId.get().nspace());
        out.writeInt(assignedId.get().rank());
      }
      WireIo.writeFix256(out, server.nspace());
      out.writeInt(server.rank());
      out.writeInt(validationStatus.code());
    }
  }

  /**
   * A reply that is only a non-success status: the host refused the connector. A 4.2.2 tool hangs
   * on it, so a server rather closes; OpenPMIx 5.0.9 and later tools report it.
   *
   * @param status the refusal, never success
   */
  @Immutable
  record StatusOnly(Status status) implements ToolReply {
    /** Checks the status is a refusal. */
    public StatusOnly {
      requireNonNull(status, "status");
      if (status.isSuccess()) {
        throw new IllegalArgumentException(
            "a successful tool reply carries the identities: use Full");
      }
    }

    @Override
    public boolean isSuccess() {
      return false;
    }

    @Override
    public void encode(WireBuffer out) {
      out.writeInt(status.code());
    }
  }
}
