package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.FinalizeRequest;
import io.pmix.common.internal.message.GetNbReply;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.common.internal.message.LookupNbReply;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.PublishNbRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.message.Request;
import io.pmix.common.internal.message.Requests;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.message.UnpublishNbRequest;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectRequestDecoder;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.ArrayFrame;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameReader;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.net.Epoll;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Runs a client's usual exchanges once, at server start, through the server's own codecs and on
 * nothing any connection shares: a connect request through the handshake and frame decoders of a
 * pipeline and the admission's credential and codec checks; then the requests of a typical
 * client (REQ, commit, fence, get, publish, lookup, unpublish, finalize), each framed as a client
 * frames it, taken apart by the frame decoder and decoded as the dispatcher decodes them; and the
 * connect reply and the replies of those requests encoded as {@code Replies} encodes them and
 * written through the pipeline's outbound path.
 *
 * <p>Why: a fresh JVM runs that code for the first time when the first client connects, and then
 * initializes and links every class and call site on the way, in the interpreter (measured at
 * {@code -n 8}: the first client's handshake and REQ reply took ~25 ms of server time, the next
 * ones ~2 ms; a first publish ~1 ms in its decoding alone). Done while the host still starts its
 * processes, that first time no longer falls inside a client's call (docs/architecture.md,
 * "Start-up of pmixrun"). What the handlers do with a request is not rehearsed: it changes the
 * server's state.
 */
public final class ClientRehearsal {
  private static final Logger LOG = LazyLogger.of(ClientRehearsal.class);
  /** The namespace the rehearsal's requests name; no server registers it. */
  static final String NSPACE = "pmix-java.rehearsal";
  /** The tag of a libpmix client's first request after the handshake (its REQ). */
  private static final int FIRST_TAG = 101;

  private ClientRehearsal() {}

  /**
   * Rehearses once. Never throws: a failure only loses the head start (logged at DEBUG).
   *
   * @return whether every step ran (a test's check that the rehearsal still follows the codecs)
   */
  public static boolean run(ServerOptions options) {
    return run(options, options.nettyTransport() || !Epoll.available());
  }

  /** Rehearses once through Netty's decoders ({@code netty}) or the server's own. */
  static boolean run(ServerOptions options, boolean netty) {
    Wire ch = netty ? new NettyWire(options) : new OwnWire(options);
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
      WireBuffer request = WireBuffer.allocate(256);
      ConnectRequestCodec.encode(req, request);
      ch.feed(request.toByteArray());
      ConnectRequest got = (ConnectRequest) ch.take();
      var unusedCredential = Admission.credential(got, options);
      WireFormat format = Admission.format(got);
      WireBuffer accepted = WireBuffer.allocate(ClientReply.LENGTH);
      ClientReply.accepted(0).encode(accepted);
      ch.send(accepted);

      Proc me = Proc.of(NSPACE, 0);
      String key = NSPACE + ".key";
      Value value = Value.of("value");
      List<Request> requests =
          List.of(
              ReqRequest.INSTANCE,
              new CommitRequest(
                  List.of(
                      new CommitRequest.Section(
                          Scope.GLOBAL.code(), List.of(new Value.KVal(key, value))))),
              new FenceNbRequest(
                  List.of(Proc.wildcard(NSPACE)),
                  List.of(Info.of(Keys.COLLECT_DATA, Value.of(true)))),
              new GetNbRequest(Proc.of(NSPACE, 1), List.of(), key),
              new PublishNbRequest(0, List.of(Info.of(key, value))),
              new LookupNbRequest(0, List.of(key), List.of()),
              new UnpublishNbRequest(0, List.of(key), List.of()),
              new FinalizeRequest());
      int tag = FIRST_TAG;
      for (Request r : requests) {
        Request decoded = roundTrip(ch, format, tag++, r);
        if (decoded.command() != r.command()) {
          throw new IllegalStateException(r.command() + " decoded as " + decoded.command());
        }
      }
      // The REQ reply's body: a one-process job's data in the arrays a ds21 client is sent and
      // in the whole blob a hash client is sent (its own namespace's bytes differ; the packing
      // code is the same).
      JobData job = JobData.build(jobInfo(), 1, List.of(0), "localhost", "4.2.2");
      encode(format, new ReqReply(NSPACE, job.arraysBody(format)), ch);
      encode(format, new ReqReply(NSPACE, job.replyBody(format)), ch);
      encode(format, new StatusReply(Status.SUCCESS), ch);
      encode(format, new GetNbReply(Status.SUCCESS, List.of(new byte[16])), ch);
      encode(
          format,
          new LookupNbReply(Status.SUCCESS, List.of(new Value.PData(me, key, value))),
          ch);
      return true;
    } catch (Admission.Refused | RuntimeException e) {
      LOG.log(Level.DEBUG, "the client rehearsal failed", e);
      return false;
    } finally {
      ch.close();
    }
  }

  /** Where the rehearsal's bytes go: a transport's decoders and outbound path. */
  private interface Wire {
    /** Bytes as a client sends them. */
    void feed(byte[] bytes);

    /** What the decoders made of them (a connect request, a frame). */
    Object take();

    /** A reply written as the transport writes one, then dropped. */
    void send(WireBuffer reply);

    void close();
  }

  /** Netty's pipeline: the decoders of an embedded channel and its outbound path. */
  private static final class NettyWire implements Wire {
    private final EmbeddedChannel ch;

    NettyWire(ServerOptions options) {
      // One handler through the builder: the handler-array constructors add them through a
      // ChannelInitializer, whose @Sharable would be parsed (see Acceptor).
      ch = EmbeddedChannel.builder().handlers(new ConnectRequestDecoder()).build();
      ch.pipeline().addLast(new FrameReader(options.maxMessageSize(), FrameBudget.UNLIMITED));
    }

    @Override
    public void feed(byte[] bytes) {
      ByteBuf in = ch.alloc().buffer(bytes.length);
      in.writeBytes(bytes);
      ch.writeInbound(in);
    }

    @Override
    public Object take() {
      return requireNonNull(ch.readInbound(), "nothing decoded");
    }

    /**
     * {@code reply} through the channel's outbound path, as the handshake's reply and a reply
     * the socket does not take at once are written ({@code writeAndFlush}), then dropped.
     */
    @Override
    public void send(WireBuffer reply) {
      ByteBuf out = ch.alloc().directBuffer(reply.writerIndex());
      out.writeBytes(reply.nioBuffer(0, reply.writerIndex()));
      boolean unused = ch.writeOutbound(out);
      for (Object sent = ch.readOutbound(); sent != null; sent = ch.readOutbound()) {
        ReferenceCountUtil.release(sent);
      }
    }

    @Override
    public void close() {
      boolean unused = ch.finishAndReleaseAll();
    }
  }

  /** The server's own transport's reader ({@link InboundStream}); a reply is copied out. */
  private static final class OwnWire implements Wire, InboundStream.Sink {
    private final InboundStream in;
    private final ArrayDeque<Object> out = new ArrayDeque<>();

    OwnWire(ServerOptions options) {
      in =
          new InboundStream(
              ConnectRequestCodec.DEFAULT_MAX_PAYLOAD,
              options.maxMessageSize(),
              FrameBudget.UNLIMITED,
              this);
    }

    @Override
    public void feed(byte[] bytes) {
      in.feed(bytes, 0, bytes.length);
    }

    @Override
    public Object take() {
      return requireNonNull(out.poll(), "nothing decoded");
    }

    @Override
    public void send(WireBuffer reply) {
      byte[] b = new byte[reply.writerIndex()];
      reply.getBytes(0, b, 0, b.length);
    }

    @Override
    public void close() {
      in.stop();
    }

    @Override
    public void connectRequest(ConnectRequest request) {
      out.add(request);
    }

    @Override
    public void frame(int tag, byte[] payload) {
      out.add(new ArrayFrame(0, tag, payload));
    }

    @Override
    public void failed(PmixException cause) {
      throw new IllegalStateException("the rehearsal's bytes failed to decode", cause);
    }
  }

  /**
   * Connects to the server's own listener and closes at once: the server then accepts a real
   * connection, builds its pipeline, counts it among the handshakes awaited, asks for its
   * socket's owner, reads its end and drops it, all for the first time before a client comes
   * (at {@code -n 1}: the client's {@code PMIx_Init} 16.0 -> 12.2 ms, medians of 8 alternating
   * jobs; the codecs alone could not give that: it is the socket path's first run). Nothing is
   * logged; a connection without a request is an everyday event for a server (a port scan, a
   * client killed while connecting). The connect completes in the kernel's backlog. Call it
   * before anyone else can connect: the knock is then the oldest connection awaiting a handshake,
   * so a full cap of them ({@code PendingHandshakes}) drops it first, never a real one.
   */
  public static void knock(InetSocketAddress listener) {
    try (SocketChannel knock = SocketChannel.open(listener)) {
      // Closed at once, without a byte.
    } catch (IOException e) {
      LOG.log(Level.DEBUG, "the rehearsal connection failed", e);
    }
  }

  /** A launcher's job data of one process on one node, in the shapes launchers register. */
  private static List<Info> jobInfo() {
    return List.of(
        Info.of(Keys.JOB_SIZE, Value.uint32(1)),
        Info.of(Keys.UNIV_SIZE, Value.uint32(1)),
        Info.of(Keys.NODE_MAP.name(), "localhost"),
        Info.of(Keys.PROC_MAP.name(), "0"),
        Info.of(Keys.APP_INFO_ARRAY, DataArray.ofInfos(List.of(
            Info.of(Keys.APPNUM, Value.uint32(0)),
            Info.of(Keys.APP_SIZE, Value.uint32(1))))),
        Info.of(Keys.NODE_INFO_ARRAY, DataArray.ofInfos(List.of(
            Info.of(Keys.HOSTNAME.name(), "localhost"),
            Info.of(Keys.NODEID, Value.uint32(0))))));
  }

  /** {@code r} as a client frames it, and back as {@code ServerCore.dispatch} decodes it. */
  private static Request roundTrip(Wire ch, WireFormat format, int tag, Request r) {
    WireBuffer w = WireBuffer.allocate(128);
    w.writeZero(FrameDecoder.HEADER_LENGTH);
    r.encode(new PmixWriter(w, format));
    int length = w.writerIndex() - FrameDecoder.HEADER_LENGTH;
    w.setInt(4, tag); // pindex 0, tag, nbytes, padding 0
    w.setInt(8, length);
    ch.feed(w.toByteArray());
    ArrayFrame frame = (ArrayFrame) ch.take();
    PmixReader reader = new PmixReader(WireBuffer.wrap(frame.payload()), format);
    Command cmd = Command.fromCode(reader.unpackByteEnum(DataType.COMMAND)).orElseThrow();
    return Requests.decodeFields(cmd, reader, true);
  }

  /** A reply encoded as {@code Replies.frame} encodes it, sent, then dropped. */
  private static void encode(WireFormat format, Message reply, Wire ch) {
    WireBuffer w = WireBuffer.allocate(256);
    w.writeZero(FrameDecoder.HEADER_LENGTH);
    reply.encode(new PmixWriter(w, format));
    ch.send(w);
  }

}
