package io.pmix.tool;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestDecoder;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.Tags;
import io.pmix.common.internal.wire.ToolReply;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted PMIx server for tool tests, built from pmix-common's wire classes: it accepts tool
 * handshakes (assigning {@code fake-tool-N}:0 when asked), answers every command a tool sends with
 * canned replies in the layouts of docs/commands.md, and pushes an event (tag 0) after an event
 * registration and forwarded output (tag 2) after an IOF pull. It records what it received, so
 * tests can check flags, identity blocks and pindex values.
 */
final class FakeToolServer implements AutoCloseable {
  static final String NSPACE = "fakesrv";
  static final String JOB = "fakejob";
  static final Status PUSHED_EVENT = Status.of(-5000);

  /** A frame as received: its pindex, tag and command. */
  record Received(int pindex, int tag, int command) {}

  final List<ConnectRequest> connects = new CopyOnWriteArrayList<>();
  final List<Received> frames = new CopyOnWriteArrayList<>();
  private final List<Channel> peers = new CopyOnWriteArrayList<>();
  private final AtomicInteger assigned = new AtomicInteger();
  private final EventLoopGroup group;
  private final Channel listener;
  private final int rank;

  /** When set, every connect request is refused by closing, as a C server refuses. */
  volatile boolean refuse;

  FakeToolServer() {
    this(0);
  }

  FakeToolServer(int rank) {
    this.rank = rank;
    group =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("fake-pmix-server", true), NioIoHandler.newFactory());
    listener =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    peers.add(ch);
                    ch.pipeline()
                        .addLast(
                            new ConnectRequestDecoder(),
                            new FrameDecoder(1 << 20),
                            FrameEncoder.INSTANCE,
                            new Handler());
                  }
                })
            .bind("127.0.0.1", 0)
            .syncUninterruptibly()
            .channel();
  }

  int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  String uri() {
    return NSPACE + "." + rank + ";tcp4://127.0.0.1:" + port();
  }

  /** Writes a rendezvous file with this server's URI, as 4.2.2 does. */
  @CanIgnoreReturnValue
  Path writeRendezvous(Path dir, String name) throws IOException {
    Files.createDirectories(dir);
    Path p = dir.resolve(name);
    Files.writeString(p, uri() + "\n4.2.2\n" + ProcessHandle.current().pid() + "\n0:0\nnow\n\n", UTF_8);
    return p;
  }

  /** Closes every accepted connection (the server "dies" but keeps listening). */
  void dropConnections() {
    for (Channel c : peers) {
      c.close().syncUninterruptibly();
    }
  }

  List<Integer> commands() {
    return frames.stream().map(Received::command).toList();
  }

  @Override
  public void close() {
    listener.close().syncUninterruptibly();
    dropConnections();
    group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class Handler extends ChannelInboundHandlerAdapter {
    private String toolNspace = "?";

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof ConnectRequest req) {
          connects.add(req);
          if (refuse) {
            var unused = ctx.close();
            return;
          }
          Optional<PeerId> id = Optional.empty();
          if (req.kind().needsId()) {
            id = Optional.of(new PeerId("fake-tool-" + assigned.incrementAndGet(), 0));
            toolNspace = id.get().nspace();
          } else {
            toolNspace = req.nspace().orElseThrow();
          }
          ByteBuf out = ctx.alloc().buffer();
          new ToolReply.Full(id, new PeerId(NSPACE, rank), Status.SUCCESS).encode(out);
          var unused = ctx.writeAndFlush(out);
        } else if (msg instanceof Frame f) {
          onFrame(ctx, f);
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    private void onFrame(ChannelHandlerContext ctx, Frame f) {
      PmixReader r = new PmixReader(f.payload(), WireFormat.DEFAULT);
      int cmd = r.unpackByteEnum(DataType.COMMAND);
      frames.add(new Received(f.pindex(), f.tag(), cmd));
      PmixWriter w = new PmixWriter(Unpooled.buffer(), WireFormat.DEFAULT);
      Command c = Command.fromCode(cmd).orElse(Command.REQ);
      if (cmd == Command.REQ.code()) {
        w.packString(toolNspace);
        w.pack(new Value.KVal("pmix.bfrops.mod", Value.of("4.2.2")));
      } else if (cmd == Command.QUERY.code()) {
        long n = r.unpackSize();
        List<Value> qs = r.unpack(DataType.QUERY, (int) n);
        Value.Query q = (Value.Query) qs.get(0);
        String key = q.keys().get(0);
        if (key.equals("pmix.qry.ns")) {
          w.packStatus(Status.SUCCESS);
          w.packSize(1);
          w.packInfos(List.of(Info.of("pmix.qry.ns", JOB + ",other")));
        } else if (key.equals("pmix.qry.ptable")) {
          String ns = q.qualifiers().get(0).value().asString();
          List<Value> table =
              List.of(
                  new Value.ProcInfo(Proc.of(ns, 0), "node0", "/bin/app", 1000, 0, 3),
                  new Value.ProcInfo(Proc.of(ns, 1), "node1", "/bin/app", 1001, 0, 3));
          w.packStatus(Status.SUCCESS);
          w.packSize(1);
          w.packInfos(List.of(Info.of("pmix.qry.ptable", DataArray.of(DataType.PROC_INFO, table))));
        } else {
          w.packStatus(Status.ERR_NOT_FOUND);
        }
      } else if (cmd == Command.REGEVENTS.code()) {
        w.packStatus(Status.SUCCESS);
        reply(ctx, f.tag(), w);
        // A cached event replayed on registration, as a C server does.
        PmixWriter n = new PmixWriter(Unpooled.buffer(), WireFormat.DEFAULT);
        n.packByteEnum(DataType.COMMAND, Command.NOTIFY.code());
        n.packStatus(PUSHED_EVENT);
        n.packProc(Proc.of(NSPACE, rank));
        n.packSize(1);
        n.packInfos(List.of(Info.of("my.key", "hello")));
        n.packByteEnum(DataType.DATA_RANGE, DataRange.SESSION.code());
        var unused = ctx.writeAndFlush(new Frame(0, Tags.NOTIFY, n.buffer()));
        return;
      } else if (cmd == Command.DEREGEVENTS.code()) {
        w.buffer().release();
        return;
      } else if (cmd == Command.GETNB.code()) {
        String ns = r.unpackString();
        w.packStatus(Status.SUCCESS);
        PmixWriter blob = new PmixWriter(Unpooled.buffer(), WireFormat.DEFAULT);
        blob.packProc(Proc.wildcard(ns));
        blob.pack(new Value.KVal("pmix.job.size", Value.uint32(3)));
        byte[] b = new byte[blob.buffer().readableBytes()];
        blob.buffer().readBytes(b);
        blob.buffer().release();
        w.pack(Value.of(b));
      } else if (cmd == Command.SPAWNNB.code()) {
        w.packStatus(Status.SUCCESS);
        w.packString("spawned-1");
        w.pack(new Value.KVal("pmix.job.size", Value.uint32(2)));
      } else if (cmd == Command.JOB_CONTROL.code()) {
        w.packStatus(Status.SUCCESS);
        w.packSize(1);
        w.packInfos(List.of(Info.of("fake.jctrl.ack", true)));
      } else if (cmd == Command.IOF_PULL.code()) {
        r.unpackSize();
        r.unpack(DataType.PROC, 1);
        long ndirs = r.unpackSize();
        if (ndirs > 0) {
          r.unpackInfos((int) ndirs);
        }
        r.unpackOne(DataType.IOF_CHANNEL);
        long localId = r.unpackSize();
        w.packStatus(Status.SUCCESS);
        w.packSize(7);
        reply(ctx, f.tag(), w);
        PmixWriter o = new PmixWriter(Unpooled.buffer(), WireFormat.DEFAULT);
        o.packProc(Proc.of(JOB, 0));
        o.pack(Value.unsigned(DataType.IOF_CHANNEL, IofChannel.STDOUT.bit()));
        o.packSize(localId);
        o.packSize(0);
        o.pack(Value.of("hello out\n".getBytes(UTF_8)));
        var unused = ctx.writeAndFlush(new Frame(0, Tags.IOF, o.buffer()));
        return;
      } else if (c == Command.IOF_PUSH || c == Command.IOF_DEREG || c == Command.LOG
          || c == Command.NOTIFY || c == Command.FINALIZE) {
        w.packStatus(Status.SUCCESS);
      } else {
        w.packStatus(Status.ERR_NOT_SUPPORTED);
      }
      reply(ctx, f.tag(), w);
    }

    private void reply(ChannelHandlerContext ctx, int tag, PmixWriter w) {
      var unused = ctx.writeAndFlush(new Frame(0, tag, w.buffer()));
    }
  }
}
