package io.pmix.common.testing;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.ConnectNbReply;
import io.pmix.common.internal.message.GetNbReply;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.common.internal.message.IofDelivery;
import io.pmix.common.internal.message.IofPullReply;
import io.pmix.common.internal.message.IofPullRequest;
import io.pmix.common.internal.message.LookupNbReply;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.NotifyPush;
import io.pmix.common.internal.message.PublishNbRequest;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.common.internal.message.QueryRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.Request;
import io.pmix.common.internal.message.Requests;
import io.pmix.common.internal.message.SpawnNbReply;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.message.UnpublishNbRequest;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestDecoder;
import io.pmix.common.internal.wire.Frame;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.Tags;
import io.pmix.common.internal.wire.ToolReply;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted PMIx server in this JVM for client and tool tests, built from pmix-common's wire
 * classes and message records: it accepts client handshakes (a slot index each) and tool
 * handshakes (assigning {@code fake-tool-N}:0 when asked), answers every command with canned
 * replies in the layouts of docs/commands.md (a get of a namespace's wildcard rank answers job
 * data of size 3), keeps what clients commit and publish so gets and lookups find it, pushes an event (tag 0) after an event registration and forwarded output
 * (tag 2) after an IOF pull. It records the connect requests, every frame's pindex, tag and
 * command, and every request decoded, so tests can check them.
 *
 * <p>Not a PMIx server: a fence or connect completes at once for whoever asks, nothing is checked
 * against a registration. For the real thing use pmix-server's PMIxServer or libpmix's.
 */
public final class ScriptedServer implements AutoCloseable {
  /** The server's namespace (its rank is given at construction). */
  public static final String NSPACE = "fakesrv";

  /** The job the server describes to tools (queries, gets, output). */
  public static final String JOB = "fakejob";

  /** The clients' namespace, of {@link #JOB_SIZE} ranks; see {@link #clientEnvironment}. */
  public static final String CLIENT_NSPACE = "scriptjob";

  /** How many ranks {@link #CLIENT_NSPACE} has. */
  public static final int JOB_SIZE = 2;

  /** The event pushed after every event registration, as a cached event. */
  public static final Status PUSHED_EVENT = Status.of(-5000);

  /** The stdout bit of {@code pmix_iof_channel_t}. */
  private static final int STDOUT = 0x02;

  /** A frame as received: its pindex, tag and command. */
  public record Received(int pindex, int tag, int command) {}

  /** The connect requests, in order. */
  public final List<ConnectRequest> connects = new CopyOnWriteArrayList<>();

  /** Every frame received, in order. */
  public final List<Received> frames = new CopyOnWriteArrayList<>();

  /** Every request decoded, in order. */
  public final List<Request> requests = new CopyOnWriteArrayList<>();

  /** When set, every connect request is refused by closing, as a C server refuses. */
  public volatile boolean refuse;

  /**
   * How a GETNB of a rank is answered: with what that rank committed (the hash server's way), or
   * as a libpmix 4.2.2 server answers a client of a shared-memory store whose data it found in
   * that store: success with nothing, or success with one empty blob (docs/gds.md).
   */
  public enum RankGets {
    /** What the rank committed, or NOT_FOUND. */
    COMMITTED,
    /** Success and no blob. */
    EMPTY_SUCCESS,
    /** Success and one blob of no bytes. */
    EMPTY_BLOB
  }

  /** How GETNBs of a rank are answered; {@link RankGets#COMMITTED} unless a test says. */
  public volatile RankGets rankGets = RankGets.COMMITTED;

  /**
   * How a FINALIZE is answered: with this status (success unless a test says), or, when empty, by
   * closing the connection without an answer, as a server that goes away at that moment.
   */
  public volatile Optional<Status> finalizeAnswer = Optional.of(Status.SUCCESS);

  private final List<Channel> peers = new CopyOnWriteArrayList<>();
  private final AtomicInteger assigned = new AtomicInteger();
  private final AtomicInteger clientSlots = new AtomicInteger();
  private final Map<Proc, Map<String, Value>> committed = new ConcurrentHashMap<>();
  private final Map<String, Value.PData> published = new ConcurrentHashMap<>();
  private final EventLoopGroup group;
  private final Channel listener;
  private final int rank;

  /** A server of rank 0, listening on a loopback port of its own. */
  public ScriptedServer() {
    this(0);
  }

  /** A server of {@code rank}, listening on a loopback port of its own. */
  public ScriptedServer(int rank) {
    this.rank = rank;
    group =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("scripted-pmix-server", true), NioIoHandler.newFactory());
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

  /** The port listened on. */
  public int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  /** The URI as a rendezvous file and {@code PMIX_SERVER_URI*} give it. */
  public String uri() {
    return NSPACE + "." + rank + ";tcp4://127.0.0.1:" + port();
  }

  /** What a server hands a client of {@link #CLIENT_NSPACE} of this rank: its environment. */
  public Map<String, String> clientEnvironment(int clientRank) {
    Map<String, String> env = new HashMap<>();
    env.put("PMIX_HOSTNAME", "testhost");
    env.put("PMIX_NAMESPACE", CLIENT_NSPACE);
    env.put("PMIX_RANK", Integer.toString(clientRank));
    env.put("PMIX_SERVER_URI41", uri());
    return env;
  }

  /** Writes a rendezvous file with this server's URI, as 4.2.2 does. */
  @CanIgnoreReturnValue
  public Path writeRendezvous(Path dir, String name) throws IOException {
    Files.createDirectories(dir);
    Path p = dir.resolve(name);
    Files.writeString(
        p, uri() + "\n4.2.2\n" + ProcessHandle.current().pid() + "\n0:0\nnow\n\n", UTF_8);
    return p;
  }

  /** Closes every accepted connection (the server "dies" but keeps listening). */
  public void dropConnections() {
    for (Channel c : peers) {
      c.close().syncUninterruptibly();
    }
  }

  /** The commands of every frame received, in order. */
  public List<Integer> commands() {
    return frames.stream().map(Received::command).toList();
  }

  @Override
  public void close() {
    listener.close().syncUninterruptibly();
    dropConnections();
    group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class Handler extends ChannelInboundHandlerAdapter {
    private Proc peer = Proc.of("?", 0);

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof ConnectRequest req) {
          onConnect(ctx, req);
        } else if (msg instanceof Frame f) {
          onFrame(ctx, f);
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    private void onConnect(ChannelHandlerContext ctx, ConnectRequest req) {
      connects.add(req);
      if (refuse) {
        var unused = ctx.close();
        return;
      }
      ByteBuf out = ctx.alloc().buffer();
      if (ReplyLayout.forConnector(req.kind(), req.version()) == ReplyLayout.CLIENT) {
        peer = Proc.of(req.nspace().orElseThrow(), req.rank().orElseThrow());
        ClientReply.accepted(clientSlots.getAndIncrement()).encode(out);
      } else {
        Optional<PeerId> id = Optional.empty();
        if (req.kind().needsId()) {
          id = Optional.of(new PeerId("fake-tool-" + assigned.incrementAndGet(), 0));
          peer = Proc.of(id.get().nspace(), 0);
        } else {
          peer = Proc.of(req.nspace().orElseThrow(), req.rank().orElse(0));
        }
        new ToolReply.Full(id, new PeerId(NSPACE, rank), Status.SUCCESS).encode(out);
      }
      var unused = ctx.writeAndFlush(out);
    }

    private void onFrame(ChannelHandlerContext ctx, Frame f) {
      PmixReader r = new PmixReader(f.payload(), WireFormat.DEFAULT);
      int cmd = r.unpackByteEnum(DataType.COMMAND);
      frames.add(new Received(f.pindex(), f.tag(), cmd));
      Optional<Command> known = Command.fromCode(cmd);
      if (known.isEmpty()) {
        reply(ctx, f.tag(), new StatusReply(Status.ERR_NOT_SUPPORTED));
        return;
      }
      Command c = known.get();
      Request req;
      try {
        req = Requests.decodeFields(c, r, true);
      } catch (RuntimeException e) {
        reply(ctx, f.tag(), new StatusReply(Status.ERR_NOT_SUPPORTED));
        return;
      }
      requests.add(req);
      switch (c) {
        case REQ -> reply(ctx, f.tag(), new ReqReply(peer.nspace(), jobData()));
        case QUERY -> reply(ctx, f.tag(), query((QueryRequest) req));
        case REGEVENTS -> {
          reply(ctx, f.tag(), new StatusReply(Status.SUCCESS));
          // A cached event replayed on registration, as a C server does.
          push(
              ctx,
              Tags.NOTIFY,
              new NotifyPush(
                  PUSHED_EVENT,
                  Proc.of(NSPACE, rank),
                  List.of(Info.of("my.key", "hello")),
                  OptionalInt.of(DataRange.SESSION.code())));
        }
        case DEREGEVENTS -> {
          // No reply: the client posts no receive for it.
        }
        case GETNB -> reply(ctx, f.tag(), get((GetNbRequest) req));
        case COMMIT -> {
          Map<String, Value> mine =
              committed.computeIfAbsent(peer, p -> new ConcurrentHashMap<>());
          for (CommitRequest.Section s : ((CommitRequest) req).sections()) {
            for (Value.KVal kv : s.kvals()) {
              if (kv.key() != null) {
                mine.put(kv.key(), kv.value());
              }
            }
          }
          reply(ctx, f.tag(), new StatusReply(Status.SUCCESS));
        }
        case PUBLISHNB -> {
          for (Info i : ((PublishNbRequest) req).info()) {
            if (!i.key().startsWith("pmix.")) {
              published.put(i.key(), new Value.PData(peer, i.key(), i.value()));
            }
          }
          reply(ctx, f.tag(), new StatusReply(Status.SUCCESS));
        }
        case LOOKUPNB -> {
          List<Value.PData> found =
              ((LookupNbRequest) req)
                  .keys().stream().map(published::get).filter(p -> p != null).toList();
          reply(
              ctx,
              f.tag(),
              found.isEmpty()
                  ? new StatusReply(Status.ERR_NOT_FOUND)
                  : new LookupNbReply(Status.SUCCESS, found));
        }
        case UNPUBLISHNB -> {
          List<String> keys = ((UnpublishNbRequest) req).keys();
          if (keys.isEmpty()) {
            published.values().removeIf(p -> p.proc().equals(peer));
          } else {
            published.keySet().removeAll(keys);
          }
          reply(ctx, f.tag(), new StatusReply(Status.SUCCESS));
        }
        case SPAWNNB ->
            reply(
                ctx,
                f.tag(),
                new SpawnNbReply(
                    Status.SUCCESS,
                    "spawned-1",
                    kvals(List.of(new Value.KVal("pmix.job.size", Value.uint32(2))))));
        case CONNECTNB, DISCONNECTNB ->
            reply(ctx, f.tag(), new ConnectNbReply(Status.SUCCESS, List.of()));
        case JOB_CONTROL ->
            reply(
                ctx,
                f.tag(),
                new QueryReply(Status.SUCCESS, List.of(Info.of("fake.jctrl.ack", true))));
        case IOF_PULL -> {
          reply(ctx, f.tag(), new IofPullReply(Status.SUCCESS, 7));
          push(
              ctx,
              Tags.IOF,
              new IofDelivery(
                  Proc.of(JOB, 0),
                  STDOUT,
                  ((IofPullRequest) req).localId(),
                  List.of(),
                  "hello out\n".getBytes(UTF_8)));
        }
        case FINALIZE -> {
          Optional<Status> answer = finalizeAnswer;
          if (answer.isPresent()) {
            reply(ctx, f.tag(), new StatusReply(answer.get()));
          } else {
            var unused = ctx.close();
          }
        }
        case FENCENB, IOF_PUSH, IOF_DEREG, LOG, NOTIFY, ABORT ->
            reply(ctx, f.tag(), new StatusReply(Status.SUCCESS));
        default -> reply(ctx, f.tag(), new StatusReply(Status.ERR_NOT_SUPPORTED));
      }
    }

    /** A client's namespace has its size; any other only the codec version. */
    private byte[] jobData() {
      List<Value.KVal> kvs =
          peer.nspace().equals(CLIENT_NSPACE)
              ? List.of(
                  new Value.KVal("pmix.job.size", Value.uint32(JOB_SIZE)),
                  new Value.KVal("pmix.bfrops.mod", Value.of("4.2.2")))
              : List.of(new Value.KVal("pmix.bfrops.mod", Value.of("4.2.2")));
      return kvals(kvs);
    }

    private Message query(QueryRequest q) {
      Value.Query first = q.queries().get(0);
      String key = first.keys().get(0);
      if (key.equals("pmix.qry.ns")) {
        return new QueryReply(Status.SUCCESS, List.of(Info.of("pmix.qry.ns", JOB + ",other")));
      }
      if (key.equals("pmix.qry.ptable")) {
        String ns = first.qualifiers().get(0).value().asString();
        List<Value> table =
            List.of(
                new Value.ProcInfo(Proc.of(ns, 0), "node0", "/bin/app", 1000, 0, 3),
                new Value.ProcInfo(Proc.of(ns, 1), "node1", "/bin/app", 1001, 0, 3));
        return new QueryReply(
            Status.SUCCESS,
            List.of(Info.of("pmix.qry.ptable", DataArray.of(DataType.PROC_INFO, table))));
      }
      return new StatusReply(Status.ERR_NOT_FOUND);
    }

    /** A namespace's job level (size 3), or what a peer committed. */
    private Message get(GetNbRequest g) {
      if (g.proc().rank() != Proc.RANK_WILDCARD && rankGets != RankGets.COMMITTED) {
        return new GetNbReply(
            Status.SUCCESS,
            rankGets == RankGets.EMPTY_BLOB ? List.of(new byte[0]) : List.of());
      }
      if (g.proc().rank() != Proc.RANK_WILDCARD) {
        Map<String, Value> data = committed.get(g.proc());
        return data != null && (g.key() == null || data.containsKey(g.key()))
            ? new GetNbReply(Status.SUCCESS, List.of(blob(g.proc(), data)))
            : new StatusReply(Status.ERR_NOT_FOUND);
      }
      Map<String, Value> job = new LinkedHashMap<>();
      job.put("pmix.job.size", Value.uint32(3));
      return new GetNbReply(Status.SUCCESS, List.of(blob(Proc.wildcard(g.proc().nspace()), job)));
    }

    private void reply(ChannelHandlerContext ctx, int tag, Message m) {
      push(ctx, tag, m);
    }

    private void push(ChannelHandlerContext ctx, int tag, Message m) {
      ByteBuf b = Unpooled.buffer();
      m.encode(new PmixWriter(b, WireFormat.DEFAULT));
      var unused = ctx.writeAndFlush(new Frame(0, tag, b));
    }
  }

  private static byte[] kvals(List<Value.KVal> kvs) {
    ByteBuf b = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(b, WireFormat.DEFAULT);
      kvs.forEach(w::pack);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private static byte[] blob(Proc p, Map<String, Value> values) {
    ByteBuf b = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(b, WireFormat.DEFAULT);
      w.packProc(p);
      values.forEach((k, v) -> w.pack(new Value.KVal(k, v)));
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }
}
