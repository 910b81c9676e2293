package io.pmix.server.internal;

import io.pmix.common.Status;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.wire.FrameDecoder;
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
  private static final System.Logger LOG = LazyLogger.of(Replies.class);

  private Replies() {}

  /** A status-only reply; 4.2.2 never sends OPERATION_SUCCEEDED to a client: it becomes SUCCESS. */
  public static void status(Peer peer, int tag, Status status) {
    write(peer, tag, new Made(new StatusReply(clientStatus(status))), false);
  }

  /** The FINALIZE answer: the one message a finalized peer still receives. */
  public static void finalizeReply(Peer peer, int tag, Status status) {
    write(peer, tag, new Made(new StatusReply(clientStatus(status))), true);
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

  /**
   * The whole frame of {@code message}: its 16-byte header (pindex 0, as the server writes in every
   * header, docs/commands.md §1.1; the tag; the payload's length; 0) and payload, encoded into an
   * array from index 0 (its length is the buffer's writer index). Writing through a ByteBuf costs
   * ~10 calls per byte (index, reference-count and bounds checks), which a fresh server runs
   * interpreted for its first hundreds of messages (docs/architecture.md, "Start-up of pmixrun");
   * one frame also leaves as one write, as {@code FrameEncoder}'s header-plus-payload does.
   */
  private static WireBuffer frame(Peer peer, int tag, Message message) {
    WireBuffer w = WireBuffer.allocate(256);
    w.writeZero(FrameDecoder.HEADER_LENGTH);
    message.encode(new PmixWriter(w, peer.format()));
    int length = w.writerIndex();
    w.setInt(4, tag);
    w.setInt(8, length - FrameDecoder.HEADER_LENGTH);
    return w;
  }

  private static void write(
      Peer peer, int tag, Supplier<? extends Message> message, boolean finalizeReply) {
    if (peer.closed() || !peer.connection().isOpen() || (peer.finalized() && !finalizeReply)) {
      return;
    }
    WireBuffer frame;
    try {
      frame = frame(peer, tag, message.get());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "could not encode a reply to " + peer, e);
      WireBuffer failed = frame(peer, tag, new StatusReply(Status.ERR_PACK_FAILURE));
      peer.connection().send(failed, failed.writerIndex());
      return;
    }
    StoreWrites gate = peer.connection().storeGate();
    if (gate == null) {
      peer.connection().send(frame, frame.writerIndex());
    } else {
      // A store reader acts on a reply at once (reads its job data, a fence's data): the store
      // writes submitted before it must have landed. Encoded now, as the state is now.
      gate.afterWrites(new Flush(peer, frame));
    }
  }

  // Classes, not lambdas, on the reply path: a lambda's first call costs a fresh server
  // 0.1-0.2 ms (docs/architecture.md, "First requests").

  /** A message already made. */
  private static final class Made implements Supplier<Message> {
    private final Message message;

    Made(Message message) {
      this.message = message;
    }

    @Override
    public Message get() {
      return message;
    }
  }

  /** Sends an encoded frame once the store writes before it have landed. */
  private static final class Flush implements Runnable {
    private final Peer peer;
    private final WireBuffer frame;

    Flush(Peer peer, WireBuffer frame) {
      this.peer = peer;
      this.frame = frame;
    }

    @Override
    public void run() {
      peer.connection().send(frame, frame.writerIndex());
    }
  }
}
