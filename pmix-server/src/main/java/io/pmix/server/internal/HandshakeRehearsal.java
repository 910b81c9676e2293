package io.pmix.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataType;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.message.Requests;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectRequestDecoder;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.ServerOptions;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Optional;

/**
 * Runs a client's first exchange once, at server start, through the server's own codecs and
 * on nothing any connection shares: a connect request through the handshake and frame decoders
 * of a pipeline, the admission's credential and codec checks, a REQ frame through the frame
 * encoder and decoder and the dispatcher's decoding, and the connect and REQ replies encoded.
 *
 * <p>Why: a fresh JVM runs that code for the first time when the first client connects, and
 * then initializes and links each class and call site on the way (measured at {@code -n 8}: the
 * first client's handshake and REQ reply took ~25 ms of server time, the next ones ~2 ms).
 * Done while the host still starts its processes, that first time no longer falls inside a
 * client's {@code PMIx_Init} (docs/architecture.md, "Start-up of pmixrun").
 */
public final class HandshakeRehearsal {
  private static final Logger LOG = System.getLogger(HandshakeRehearsal.class.getName());
  /** The namespace the rehearsal's request names; no server registers it (it never gets that far). */
  static final String NSPACE = "pmix-java.rehearsal";
  /** The tag a libpmix client's REQ carries (its first after the handshake). */
  private static final int FIRST_TAG = 101;

  private HandshakeRehearsal() {}

  /**
   * Rehearses once. Never throws: a failure only loses the head start (logged at DEBUG).
   *
   * @return whether every step ran (a test's check that the rehearsal still follows the codecs)
   */
  public static boolean run(ServerOptions options) {
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new ConnectRequestDecoder(),
            new FrameDecoder(options.maxMessageSize(), FrameBudget.UNLIMITED),
            FrameEncoder.INSTANCE);
    try {
      ConnectRequest req =
          ConnectRequest.builder()
              .security(NativeCredential.MODULE, new NativeCredential(0, 0).toBytes())
              .kind(ConnectorKind.SIMPLE_CLIENT)
              .procId(NSPACE, 0)
              .bfropsModule("v41")
              .bufferType(ConnectRequest.BUFFER_NON_DESC)
              .gdsModule("ds21")
              .build();
      ch.writeInbound(ConnectRequestCodec.encode(ch.alloc(), req));
      ConnectRequest got = ch.readInbound();
      var unusedCredential = Admission.credential(got, options);
      WireFormat format = Admission.format(got);
      ByteBuf accepted = ch.alloc().buffer(ClientReply.LENGTH);
      ClientReply.accepted(0).encode(accepted);
      accepted.release();

      WireBuffer w = WireBuffer.allocate(64);
      ReqRequest.INSTANCE.encode(new PmixWriter(w, format));
      ByteBuf payload = ch.alloc().buffer(w.writerIndex());
      payload.writeBytes(w.nioBuffer(0, w.writerIndex()));
      ch.writeOutbound(new Frame(0, FIRST_TAG, payload));
      for (Object wire = ch.readOutbound(); wire != null; wire = ch.readOutbound()) {
        ch.writeInbound(wire);
      }
      Frame frame = ch.readInbound();
      try {
        byte[] bytes = new byte[frame.payload().readableBytes()];
        frame.payload().readBytes(bytes);
        PmixReader r = new PmixReader(WireBuffer.wrap(bytes), format);
        Optional<Command> cmd = Command.fromCode(r.unpackByteEnum(DataType.COMMAND));
        if (!(Requests.decodeFields(cmd.orElseThrow(), r, true) instanceof ReqRequest)) {
          throw new IllegalStateException("the rehearsed REQ decoded as another request");
        }
      } finally {
        frame.release();
      }
      WireBuffer reply = WireBuffer.allocate(256);
      reply.writeZero(FrameDecoder.HEADER_LENGTH);
      new ReqReply(NSPACE, new byte[0]).encode(new PmixWriter(reply, format));
      ByteBuf out = ch.alloc().directBuffer(reply.writerIndex());
      out.writeBytes(reply.nioBuffer(0, reply.writerIndex()));
      out.release();
      return true;
    } catch (Admission.Refused | RuntimeException e) {
      LOG.log(Level.DEBUG, "the handshake rehearsal failed", e);
      return false;
    } finally {
      ch.finishAndReleaseAll();
    }
  }
}
