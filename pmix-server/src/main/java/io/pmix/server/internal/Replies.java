package io.pmix.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.wire.Frame;
import io.pmix.server.internal.gds.SharedStores;
import io.pmix.server.internal.gds.StoreWrites;
import io.pmix.server.internal.lifecycle.Peer;
import java.lang.System.Logger.Level;
import java.util.function.Supplier;

/**
 * The server's sender: every reply and push to a peer leaves through here, as a record of the
 * message layer ({@code io.pmix.common.internal.message}), so the server writes what the
 * connectors' decoders read. A peer whose socket is gone gets nothing, and a finalized peer gets
 * only its FINALIZE answer: the finalized flag short-circuits every other send path
 * (docs/lifecycle.md §6.2.4). What a shared-memory store reader is sent passes the stores'
 * gate, after the store writes submitted before it ({@link StoreWrites}). Progress thread only.
 */
public final class Replies {
  private static final System.Logger LOG = System.getLogger(Replies.class.getName());

  private Replies() {}

  /** A status-only reply; 4.2.2 never sends OPERATION_SUCCEEDED to a client: it becomes SUCCESS. */
  public static void status(Peer peer, int tag, Status status) {
    StatusReply reply = new StatusReply(clientStatus(status));
    write(peer, tag, () -> reply, false);
  }

  /** The FINALIZE answer: the one message a finalized peer still receives. */
  public static void finalizeReply(Peer peer, int tag, Status status) {
    StatusReply reply = new StatusReply(clientStatus(status));
    write(peer, tag, () -> reply, true);
  }

  /**
   * Sends the message {@code message} makes, in the peer's format, unless the peer can no longer
   * receive. The message is made here, so a host's answer that no record accepts (a null among
   * its values) is answered {@code ERR_PACK_FAILURE} like one that cannot be encoded.
   */
  public static void send(Peer peer, int tag, Supplier<? extends Message> message) {
    write(peer, tag, message, false);
  }

  /** OPERATION_SUCCEEDED as SUCCESS, the way every answer to a client carries it. */
  public static Status clientStatus(Status status) {
    return status.equals(Status.OPERATION_SUCCEEDED) ? Status.SUCCESS : status;
  }

  private static void write(
      Peer peer, int tag, Supplier<? extends Message> message, boolean finalizeReply) {
    if (peer.closed() || !peer.channel().isActive() || (peer.finalized() && !finalizeReply)) {
      return;
    }
    ByteBufAllocator alloc = peer.channel().alloc();
    ByteBuf buf = alloc.buffer();
    try {
      message.get().encode(new PmixWriter(buf, peer.format()));
    } catch (RuntimeException e) {
      buf.release();
      LOG.log(Level.WARNING, "could not encode a reply to " + peer, e);
      ByteBuf err = alloc.buffer();
      new StatusReply(Status.ERR_PACK_FAILURE).encode(new PmixWriter(err, peer.format()));
      ChannelFuture unused = peer.channel().writeAndFlush(new Frame(0, tag, err));
      return;
    }
    // The server writes pindex 0 in every header (docs/commands.md §1.1).
    Frame frame = new Frame(0, tag, buf);
    StoreWrites gate = peer.channel().attr(SharedStores.GATE).get();
    if (gate == null) {
      ChannelFuture unused = peer.channel().writeAndFlush(frame);
    } else {
      // A store reader acts on a reply at once (reads its job data, a fence's data): the store
      // writes submitted before it must have landed. Encoded now, as the state is now.
      gate.afterWrites(
          () -> {
            ChannelFuture unused = peer.channel().writeAndFlush(frame);
          });
    }
  }
}
