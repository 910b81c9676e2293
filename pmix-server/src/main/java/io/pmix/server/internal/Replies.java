package io.pmix.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Frame;
import io.pmix.server.internal.lifecycle.Peer;
import java.lang.System.Logger.Level;
import java.util.function.Consumer;

/**
 * The server's sender: every reply and notification to a peer leaves through here. A peer whose
 * socket is gone gets nothing, and a finalized peer gets only its FINALIZE answer: the finalized
 * flag short-circuits every other send path (docs/lifecycle.md §6.2.4). Progress thread only.
 */
public final class Replies {
  private static final System.Logger LOG = System.getLogger(Replies.class.getName());

  private Replies() {}

  /** A status-only reply; 4.2.2 never sends OPERATION_SUCCEEDED to a client: it becomes SUCCESS. */
  public static void status(Peer peer, int tag, Status status) {
    Status s = clientStatus(status);
    send(peer, tag, w -> w.packStatus(s));
  }

  /** The FINALIZE answer: the one message a finalized peer still receives. */
  public static void finalizeReply(Peer peer, int tag, Status status) {
    Status s = clientStatus(status);
    send(peer, tag, w -> w.packStatus(s), true);
  }

  /** Sends what {@code body} packs, in the peer's format, unless the peer can no longer receive. */
  public static void send(Peer peer, int tag, Consumer<PmixWriter> body) {
    send(peer, tag, body, false);
  }

  /** OPERATION_SUCCEEDED as SUCCESS, the way every answer to a client carries it. */
  public static Status clientStatus(Status status) {
    return status.equals(Status.OPERATION_SUCCEEDED) ? Status.SUCCESS : status;
  }

  private static void send(Peer peer, int tag, Consumer<PmixWriter> body, boolean finalizeReply) {
    if (peer.closed() || !peer.channel().isActive() || (peer.finalized() && !finalizeReply)) {
      return;
    }
    ByteBufAllocator alloc = peer.channel().alloc();
    ByteBuf buf = alloc.buffer();
    try {
      body.accept(new PmixWriter(buf, peer.format()));
    } catch (RuntimeException e) {
      buf.release();
      LOG.log(Level.WARNING, "could not encode a reply to " + peer, e);
      ByteBuf err = alloc.buffer();
      new PmixWriter(err, peer.format()).packStatus(Status.ERR_PACK_FAILURE);
      ChannelFuture unused = peer.channel().writeAndFlush(new Frame(0, tag, err));
      return;
    }
    // The server writes pindex 0 in every header (docs/commands.md §1.1).
    ChannelFuture unused = peer.channel().writeAndFlush(new Frame(0, tag, buf));
  }
}
