package io.pmix.testkit.cluster;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
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
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectReply;
import io.pmix.common.internal.wire.ConnectReplyDecoder;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestEncoder;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.ReplyLayout;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What {@code PMIx_server_dmodex_request} does for a C host, done from outside the server: the
 * committed REMOTE-scope data of a process this node's server hosts, as the concatenation of KVAL
 * units that {@link io.pmix.server.HostModule#directModex} returns (commands.md 7.2).
 *
 * <p>{@code PMIxServer} has no dmodex-request call yet, so this opens one tool connection to the
 * node's own server ({@code pmix.tool.nspace}-style identity, connect flag 4) and asks with
 * GETNB: the target, no key, {@code pmix.scope = REMOTE} and {@code pmix.timeout}. For a local
 * target the server then answers with all of the target's REMOTE data once the target has
 * committed, parking the request until then (up to the timeout), which is what the C call does.
 * The reply's proc blob (PROC, then KVAL units) is re-packed as bare KVAL units. Replace this
 * class with the server call once there is one; nothing else in the cluster depends on how it
 * gets the data.
 *
 * <p>Threading: confined to one event loop (the node's interconnect loop); {@link #fetch} may be
 * called from any thread and completes on that loop. The connection is opened at the first fetch
 * and again after it is lost; {@link #close} closes it and fails what is pending.
 */
final class ServerDmodex implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ServerDmodex.class.getName());
  private static final int MAX_PAYLOAD = 256 << 20;

  private final EventLoop loop;
  private final Supplier<String> serverUri;
  private final Proc identity;
  private final int[] ids;

  // Loop only.
  private @Nullable Channel channel;
  private boolean ready;
  private boolean closed;
  private int nextTag = 100;
  private final List<Frame> unsent = new ArrayList<>();
  private final Map<Integer, Pending> pending = new HashMap<>();

  private record Pending(Proc target, CompletableFuture<byte[]> result) {}

  /**
   * @param loop the loop this runs on (borrowed)
   * @param serverUri the node server's URI, read at each (re)connect
   * @param identity the tool identity to connect with; its namespace must be unused by the host
   */
  ServerDmodex(EventLoop loop, Supplier<String> serverUri, Proc identity) {
    this.loop = requireNonNull(loop, "loop");
    this.serverUri = requireNonNull(serverUri, "serverUri");
    this.identity = requireNonNull(identity, "identity");
    this.ids = ClusterNode.effectiveIds();
  }

  /**
   * The REMOTE-scope data {@code target} committed, as KVAL units.
   *
   * @param timeoutSeconds how long the server may wait for the target's commit (positive)
   * @return the data; fails with the server's status ({@code ERR_TIMEOUT} if the target did not
   *     commit in time) or {@code ERR_UNREACH} when the server cannot be reached
   */
  CompletableFuture<byte[]> fetch(Proc target, int timeoutSeconds) {
    requireNonNull(target, "target");
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    try {
      loop.execute(() -> fetchOnLoop(target, timeoutSeconds, result));
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new PmixException(Status.ERR_UNREACH, "node is closed", e));
    }
    return result;
  }

  private void fetchOnLoop(Proc target, int timeoutSeconds, CompletableFuture<byte[]> result) {
    if (closed) {
      result.completeExceptionally(new PmixException(Status.ERR_UNREACH, "node is closed"));
      return;
    }
    // Tags from 101 up, as a C connector allocates them; 0 to 2 are reserved.
    nextTag = nextTag == Integer.MAX_VALUE ? 101 : nextTag + 1;
    int tag = nextTag;
    pending.put(tag, new Pending(target, result));
    ByteBuf body = Unpooled.buffer();
    PmixWriter w = new PmixWriter(body, WireFormat.DEFAULT);
    w.packByteEnum(DataType.COMMAND, Command.GETNB.code());
    w.packString(target.nspace());
    w.packRank(target.rank());
    List<Info> directives =
        List.of(
            Info.of(Keys.DATA_SCOPE, Scope.REMOTE.toValue()),
            Info.of(Keys.TIMEOUT, Value.of(timeoutSeconds)));
    w.packSize(directives.size());
    w.packInfos(directives);
    // No key: the whole REMOTE scope of the target is wanted, as dmodex_request returns it.
    Frame frame = new Frame(0, tag, body);
    if (ready && channel != null) {
      channel.writeAndFlush(frame).addListener(ServerDmodex::logWriteFailure);
      return;
    }
    unsent.add(frame);
    if (channel == null) {
      connect();
    }
  }

  private static void logWriteFailure(io.netty.util.concurrent.Future<? super Void> f) {
    if (!f.isSuccess()) {
      LOG.log(Level.WARNING, "dmodex request not sent", f.cause());
    }
  }

  private void connect() {
    String uri = serverUri.get();
    int at = uri.indexOf("tcp4://");
    int colon = uri.lastIndexOf(':');
    if (at < 0 || colon < at) {
      failAll(new PmixException(Status.ERR_UNREACH, "unusable server URI " + uri));
      return;
    }
    InetSocketAddress address =
        new InetSocketAddress(
            uri.substring(at + "tcp4://".length(), colon),
            Integer.parseInt(uri.substring(colon + 1)));
    ConnectRequest request =
        ConnectRequest.builder()
            .security(NativeCredential.MODULE, new NativeCredential(ids[0], ids[1]).toBytes())
            .kind(ConnectorKind.TOOL_GIVEN_ID)
            .ids(ids[0], ids[1])
            .procId(identity.nspace(), identity.rank())
            .build();
    ChannelFuture f =
        new Bootstrap()
            .group(loop)
            .channel(NioSocketChannel.class)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(
                            new ConnectReplyDecoder(ReplyLayout.TOOL),
                            new FrameDecoder(MAX_PAYLOAD),
                            ConnectRequestEncoder.INSTANCE,
                            FrameEncoder.INSTANCE,
                            new Handler(request));
                  }
                })
            .connect(address);
    Channel ch = f.channel();
    channel = ch;
    f.addListener(
        (ChannelFuture c) -> {
          if (!c.isSuccess()) {
            lost(ch, new PmixException(Status.ERR_UNREACH, "cannot reach " + uri, c.cause()));
          }
        });
  }

  /** The connection {@code ch} is gone (or never came): fail what waits, reconnect later. */
  private void lost(Channel ch, PmixException why) {
    if (channel != ch) {
      return;
    }
    channel = null;
    ready = false;
    failAll(why);
  }

  private void failAll(PmixException why) {
    for (Frame f : unsent) {
      f.release();
    }
    unsent.clear();
    List<Pending> waiting = new ArrayList<>(pending.values());
    pending.clear();
    for (Pending p : waiting) {
      p.result().completeExceptionally(why);
    }
  }

  private final class Handler extends ChannelInboundHandlerAdapter {
    private final ConnectRequest request;

    Handler(ConnectRequest request) {
      this.request = request;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.writeAndFlush(request).addListener(ServerDmodex::logWriteFailure);
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof ConnectReply reply) {
          onConnectReply(ctx.channel(), reply);
        } else if (msg instanceof Frame frame) {
          onReply(frame);
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      lost(
          ctx.channel(),
          new PmixException(Status.ERR_UNREACH, "connection to the node's server lost"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.log(Level.WARNING, "dmodex connection failed; closing it", cause);
      var unused = ctx.close();
    }
  }

  private void onConnectReply(Channel ch, ConnectReply reply) {
    if (ch != channel) {
      return;
    }
    if (!reply.isSuccess()) {
      var unused = ch.close(); // channelInactive fails what waits
      return;
    }
    ready = true;
    for (Frame f : unsent) {
      ch.write(f).addListener(ServerDmodex::logWriteFailure);
    }
    unsent.clear();
    ch.flush();
  }

  /** GETNB reply: STATUS, then BYTE_OBJECT blobs, each a PROC and that proc's KVAL units. */
  private void onReply(Frame frame) {
    Pending p = pending.remove(frame.tag());
    if (p == null) {
      return;
    }
    try {
      PmixReader r = new PmixReader(frame.payload(), WireFormat.DEFAULT);
      Status status = r.unpackStatus();
      if (!status.isSuccess()) {
        p.result().completeExceptionally(new PmixException(status, "dmodex of " + p.target()));
        return;
      }
      ByteBuf out = Unpooled.buffer();
      try {
        PmixWriter w = new PmixWriter(out, WireFormat.DEFAULT);
        while (r.hasRemaining()) {
          byte[] blob = r.unpackOne(DataType.BYTE_OBJECT).asBytes();
          PmixReader br = new PmixReader(Unpooled.wrappedBuffer(blob), WireFormat.DEFAULT);
          // A blob for another proc (the job data of the target's namespace) is not wanted.
          if (!br.unpackProc().equals(p.target())) {
            continue;
          }
          while (br.hasRemaining()) {
            w.pack(br.unpackOne(DataType.KVAL));
          }
        }
        p.result().complete(ByteBufUtil.getBytes(out));
      } finally {
        out.release();
      }
    } catch (RuntimeException e) {
      p.result()
          .completeExceptionally(
              new PmixException(Status.ERR_UNPACK_FAILURE, "unusable GETNB reply", e));
    }
  }

  /** Closes the connection and fails what is pending; waits for the loop briefly. */
  @Override
  public void close() {
    try {
      boolean unused =
          loop.submit(
                  () -> {
                    closed = true;
                    Channel ch = channel;
                    channel = null;
                    ready = false;
                    failAll(new PmixException(Status.ERR_UNREACH, "node is closed"));
                    if (ch != null) {
                      var unusedClose = ch.close();
                    }
                  })
              .awaitUninterruptibly(5_000);
    } catch (RejectedExecutionException e) {
      // the loop is gone already
    }
  }
}
