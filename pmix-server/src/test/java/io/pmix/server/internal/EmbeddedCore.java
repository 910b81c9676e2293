package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectRequestDecoder;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.common.internal.wire.FrameReader;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The fixture of the server core's unit tests: a {@link ServerCore} on the event loop of an
 * {@link EmbeddedChannel} (so the test drives time and tasks), host calls run inline, and peers
 * as embedded channels with the server's real pipeline. {@link #close} releases every channel.
 */
final class EmbeddedCore implements AutoCloseable {
  /** The ids the fixture's clients and registrations use. */
  final int uid;

  final int gid;
  final EmbeddedChannel loopOwner;
  final ServerCore core;
  private final List<EmbeddedChannel> channels = new ArrayList<>();

  /**
   * A core for {@code host} with {@code options}; with {@code frozenTime} the loop's clock only
   * moves when the test advances it.
   */
  EmbeddedCore(HostModule host, ServerOptions options, boolean frozenTime, int uid, int gid) {
    this(host, options, frozenTime, uid, gid, Runnable::run);
  }

  /** As above, with the host's upcalls handed to {@code hostExecutor}. */
  EmbeddedCore(
      HostModule host,
      ServerOptions options,
      boolean frozenTime,
      int uid,
      int gid,
      Executor hostExecutor) {
    this.uid = uid;
    this.gid = gid;
    // The shared-memory stores' writer thread hands its completions to the loop from its own
    // thread, and an EmbeddedChannel's loop is not thread-safe: a task it queued could be lost
    // (ServerConnectTest once missed a reply so). The stores are tested on real loops.
    assertTrue(options.sharedMemoryStores().isEmpty(), "the fixture serves hash only");
    loopOwner = new EmbeddedChannel();
    if (frozenTime) {
      loopOwner.freezeTime();
    }
    core = new ServerCore(new ProgressExecutor(loopOwner.eventLoop()), host, hostExecutor, options);
  }

  /** The options the tests share: node "vm", credentials taken as claimed, hash only. */
  static ServerOptions.Builder options() {
    return ServerOptions.builder().hostname("vm").trustClaimedCredentials(true).gds("hash");
  }

  /** Registers {@code nspace} with {@code n} procs, all of them local clients of this node. */
  void registerLocal(String nspace, int n) {
    assertEquals(
        Status.SUCCESS,
        core.registerNspace(nspace, n, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(n)))));
    for (int r = 0; r < n; r++) {
      assertEquals(Status.SUCCESS, core.registerClient(Proc.of(nspace, r), uid, gid, null));
    }
  }

  /** A new peer channel with the server's pipeline, not yet connected. */
  EmbeddedChannel channel() {
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new ConnectRequestDecoder(),
            new FrameReader(1 << 16, FrameBudget.UNLIMITED),
            new PeerHandler(core, Duration.ofSeconds(5), null));
    channels.add(ch);
    return ch;
  }

  /**
   * Sends a 4.2.2 client's connect request for {@code nspace:rank} on a new channel and returns
   * the channel with the handshake reply still queued (null in the queue: refused).
   */
  EmbeddedChannel connectClient(String nspace, int rank) {
    return connectClient(nspace, rank, "4.2.2rc2");
  }

  /** As {@link #connectClient(String, int)}, for a client of {@code version}. */
  EmbeddedChannel connectClient(String nspace, int rank, String version) {
    EmbeddedChannel ch = channel();
    ConnectRequest req =
        ConnectRequest.builder()
            .security("native", new NativeCredential(uid, gid).toBytes())
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(nspace, rank)
            .version(version)
            .padPresent(true)
            .build();
    assertFalse(ch.writeInbound(ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req)));
    return ch;
  }

  /** Releases whatever {@code ch} has queued outbound. */
  static void drain(EmbeddedChannel ch) {
    for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
      b.release();
    }
  }

  /** A frame to the server: the 16-byte header (pindex 0, {@code tag}, length, 0) and the body. */
  static ByteBuf frame(int tag, Consumer<PmixWriter> body) {
    ByteBuf payload = Unpooled.buffer();
    body.accept(new PmixWriter(payload));
    ByteBuf f = Unpooled.buffer();
    f.writeInt(0).writeInt(tag).writeInt(payload.readableBytes()).writeInt(0);
    f.writeBytes(payload);
    payload.release();
    return f;
  }

  /** A frame carrying command {@code cmd}, then what {@code rest} packs. */
  static ByteBuf command(int tag, int cmd, Consumer<PmixWriter> rest) {
    return frame(
        tag,
        w -> {
          w.packByteEnum(DataType.COMMAND, cmd);
          rest.accept(w);
        });
  }

  /** Reads one outbound frame: asserts its pindex (0), tag and length, returns its payload. */
  static byte[] readFrame(EmbeddedChannel ch, int tag) {
    ByteBuf out = ch.readOutbound();
    assertTrue(out != null, "no reply on tag " + tag);
    try {
      assertEquals(0, out.readInt(), "pindex");
      assertEquals(tag, out.readInt(), "tag");
      int n = out.readInt();
      out.skipBytes(4);
      assertEquals(n, out.readableBytes());
      return ByteBufUtil.getBytes(out);
    } finally {
      out.release();
    }
  }

  @Override
  public void close() {
    for (EmbeddedChannel ch : channels) {
      ch.finishAndReleaseAll();
    }
    loopOwner.finishAndReleaseAll();
  }
}
