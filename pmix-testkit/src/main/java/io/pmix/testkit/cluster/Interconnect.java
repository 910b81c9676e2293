package io.pmix.testkit.cluster;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.MessageToByteEncoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The cluster's "network" as seen by one node's host: messages to and from the other nodes' hosts
 * over TCP. Each node listens on 127.0.0.1 (a kernel-chosen port; another address for a nested
 * pmixrun whose nodes are other machines, {@link RemoteModex}) and opens one
 * connection to each node it sends to, so every message travels on its sender's connection; a
 * reply is just another message addressed to the requester.
 *
 * <p>Wire format: a 4-byte big-endian length, then a body of PMIx pack units (the common codec,
 * 4.2.2 default format): a BYTE message type, then
 *
 * <ul>
 *   <li>{@code 1} fence contribution: STRING collective id, INT32 sender node, BYTE_OBJECT the
 *       sender's fence blob (docs/commands.md §7.1, possibly empty);
 *   <li>{@code 2} direct-modex request: INT64 request id, INT32 requester node, PROC target,
 *       INT32 timeout in seconds;
 *   <li>{@code 3} direct-modex reply: INT64 request id, STATUS, BYTE_OBJECT the target's KVAL
 *       units (docs/commands.md §7.2; empty on error).
 *   <li>{@code 4} lost processes: INT32 sender node, INT32 the launcher status they ended the
 *       job with, INT32 count, then that many INT32 ranks of the job (a nested pmixrun's
 *       processes that died on the sender, {@link RemoteModex#announceLost}).
 * </ul>
 *
 * <p>Threading: one event loop (thread) per node owns every connection; the receiver is called on
 * it, and {@link #loop()} serves the host as its serializing context. {@link #send} may be called
 * from any thread. Owns its event loop group, released by {@link #close}.
 */
final class Interconnect implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(Interconnect.class);
  private static final int MAX_FRAME = 256 << 20;

  /** What travels between the hosts. */
  sealed interface Message permits FenceData, DmodexRequest, DmodexReply, Lost {}

  /** A node's contribution to collective {@code collective}. */
  @SuppressWarnings("ArrayRecordComponent") // internal and short-lived: the bytes are never mutated
  record FenceData(String collective, int from, byte[] data) implements Message {}

  /** Node {@code from} asks for the remote data of {@code proc}, which lives on the receiver. */
  record DmodexRequest(long id, int from, Proc proc, int timeoutSeconds) implements Message {}

  /** Node {@code from} lost {@code ranks}, which end the job with launcher status {@code status}. */
  record Lost(int from, int status, List<Integer> ranks) implements Message {
    Lost {
      ranks = List.copyOf(ranks);
    }
  }

  /** The answer to request {@code id}. */
  @SuppressWarnings("ArrayRecordComponent") // internal and short-lived: the bytes are never mutated
  record DmodexReply(long id, Status status, byte[] data) implements Message {}

  private final int self;
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final Channel listener;
  private final IntFunction<InetSocketAddress> addresses;
  /** Connections this node opened, by destination node; loop only. */
  private final Map<Integer, ChannelFuture> outbound = new HashMap<>();
  /** Every connection, inbound or outbound, so close() can close them; loop only. */
  private final List<Channel> channels = new ArrayList<>();
  /** Loop only. */
  private boolean closed;

  private Interconnect(
      int self,
      EventLoopGroup group,
      Consumer<Message> receiver,
      IntFunction<InetSocketAddress> addresses,
      InetAddress bind)
      throws InterruptedException {
    this.self = self;
    this.group = group;
    this.loop = group.next();
    this.addresses = addresses;
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    track(ch);
                    ch.pipeline()
                        .addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4))
                        .addLast(new Inbound(receiver));
                  }
                });
    this.listener =
        b.bind(new InetSocketAddress(bind, 0)).sync().channel();
  }

  /**
   * Starts node {@code self}'s endpoint.
   *
   * @param name a thread name prefix
   * @param receiver called on the loop with every message that arrives
   * @param addresses the endpoint of each node, by index (looked up at the first send to a node)
   * @throws PmixException with {@code ERR_INIT} if the endpoint cannot be bound
   */
  static Interconnect start(
      int self, String name, Consumer<Message> receiver, IntFunction<InetSocketAddress> addresses) {
    return start(self, name, receiver, addresses, InetAddress.getLoopbackAddress());
  }

  /**
   * Starts node {@code self}'s endpoint listening on {@code bind} (a kernel-chosen port): the
   * loopback address for nodes on one machine, the wildcard address when other machines must
   * reach it.
   */
  static Interconnect start(
      int self,
      String name,
      Consumer<Message> receiver,
      IntFunction<InetSocketAddress> addresses,
      InetAddress bind) {
    requireNonNull(receiver, "receiver");
    requireNonNull(bind, "bind");
    requireNonNull(addresses, "addresses");
    // One thread: the group's only loop serves the listener, every connection and the host.
    EventLoopGroup g =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory(name, true), NioIoHandler.newFactory());
    try {
      return new Interconnect(self, g, receiver, addresses, bind);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      Future<?> unused = g.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw new PmixException(Status.ERR_INIT, "interrupted while binding the interconnect", e);
    } catch (RuntimeException e) {
      Future<?> unused = g.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw new PmixException(Status.ERR_INIT, "cannot bind the interconnect: " + e, e);
    }
  }

  /** This node's endpoint. */
  InetSocketAddress address() {
    return (InetSocketAddress) listener.localAddress();
  }

  /** The loop that owns the connections and runs the receiver; also the host's context. */
  EventLoop loop() {
    return loop;
  }

  private void track(Channel ch) {
    // initChannel runs on the loop.
    if (closed) {
      var unused = ch.close();
      return;
    }
    channels.add(ch);
    ch.closeFuture().addListener(f -> channels.remove(ch));
  }

  /**
   * Sends {@code m} to node {@code node}, connecting first if needed.
   *
   * @return completes once the message is written, or fails with {@code ERR_UNREACH}
   */
  CompletableFuture<Void> send(int node, Message m) {
    requireNonNull(m, "m");
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      loop.execute(() -> sendOnLoop(node, m, done));
    } catch (RejectedExecutionException e) {
      done.completeExceptionally(unreachable(node, e));
    }
    return done;
  }

  private void sendOnLoop(int node, Message m, CompletableFuture<Void> done) {
    if (closed) {
      done.completeExceptionally(unreachable(node, null));
      return;
    }
    ChannelFuture connection = outbound.computeIfAbsent(node, this::connect);
    connection.addListener(
        (ChannelFuture c) -> {
          if (!c.isSuccess()) {
            outbound.remove(node, connection);
            done.completeExceptionally(unreachable(node, c.cause()));
            return;
          }
          c.channel()
              .writeAndFlush(m)
              .addListener(
                  (ChannelFuture w) -> {
                    if (w.isSuccess()) {
                      done.complete(null);
                    } else {
                      done.completeExceptionally(unreachable(node, w.cause()));
                    }
                  });
        });
  }

  private ChannelFuture connect(int node) {
    InetSocketAddress to = requireNonNull(addresses.apply(node), "no address for node " + node);
    ChannelFuture f =
        new Bootstrap()
            .group(loop)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    track(ch);
                    ch.pipeline()
                        .addLast(new LengthFieldPrepender(4))
                        .addLast(new Encoder())
                        .addLast(new Inbound(m -> LOG.log(Level.WARNING, "unexpected {0}", m)));
                  }
                })
            .connect(to);
    // A connection that goes away is forgotten, so the next send reconnects.
    f.channel().closeFuture().addListener(x -> outbound.remove(node, f));
    return f;
  }

  /**
   * Connects to node {@code node} now and runs {@code gone} (on the loop) when that connection
   * cannot be made or closes while this node is open: the peer's process ended or cannot be
   * reached. Later sends to the node use the same connection.
   */
  void watch(int node, Runnable gone) {
    requireNonNull(gone, "gone");
    try {
      loop.execute(
          () -> {
            if (closed) {
              return;
            }
            ChannelFuture c = outbound.computeIfAbsent(node, this::connect);
            c.channel().closeFuture().addListener(x -> {
              if (!closed) {
                gone.run();
              }
            });
          });
    } catch (RejectedExecutionException e) {
      // Closed: nothing to watch any more.
    }
  }

  private PmixException unreachable(int node, Throwable cause) {
    return new PmixException(
        Status.ERR_UNREACH, "node " + self + " cannot reach node " + node, cause);
  }

  /** Closes every connection and the listener, and stops the loop; waits up to a few seconds. */
  @Override
  public void close() {
    if (loop.inEventLoop()) {
      throw new IllegalStateException("close() on the interconnect's own loop would deadlock");
    }
    try {
      boolean unused =
          loop.submit(
                  () -> {
                    closed = true;
                    var unusedClose = listener.close();
                    for (Channel ch : List.copyOf(channels)) {
                      var unusedToo = ch.close();
                    }
                    outbound.clear();
                  })
              .await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RejectedExecutionException e) {
      // already stopped
    }
    Future<?> stop = group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    boolean unusedStopped = stop.awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  // ---- codec ----

  private static final int FENCE = 1;
  private static final int DMODEX_REQUEST = 2;
  private static final int DMODEX_REPLY = 3;
  private static final int LOST = 4;

  /** Writes a message's body (the length prepender frames it). */
  private static final class Encoder extends MessageToByteEncoder<Message> {
    Encoder() {
      super(Message.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Message m, ByteBuf out) {
      PmixWriter w = new PmixWriter(out, WireFormat.DEFAULT);
      if (m instanceof FenceData f) {
        w.packByteEnum(DataType.BYTE, FENCE);
        w.packString(f.collective());
        w.packInt32(f.from());
        w.pack(Value.of(f.data()));
      } else if (m instanceof DmodexRequest r) {
        w.packByteEnum(DataType.BYTE, DMODEX_REQUEST);
        w.pack(Value.of(r.id()));
        w.packInt32(r.from());
        w.packProc(r.proc());
        w.packInt32(r.timeoutSeconds());
      } else if (m instanceof DmodexReply r) {
        w.packByteEnum(DataType.BYTE, DMODEX_REPLY);
        w.pack(Value.of(r.id()));
        w.packStatus(r.status());
        w.pack(Value.of(r.data()));
      } else if (m instanceof Lost l) {
        w.packByteEnum(DataType.BYTE, LOST);
        w.packInt32(l.from());
        w.packInt32(l.status());
        w.packInt32(l.ranks().size());
        for (int r : l.ranks()) {
          w.packInt32(r);
        }
      }
    }
  }

  /** Reads one framed body into a message and hands it on. */
  private static final class Inbound extends SimpleChannelInboundHandler<ByteBuf> {
    private final Consumer<Message> receiver;

    Inbound(Consumer<Message> receiver) {
      this.receiver = receiver;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf body) {
      receiver.accept(decode(body));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // A corrupt stream cannot be resynchronised: drop the connection.
      LOG.log(Level.WARNING, "interconnect connection failed; closing it", cause);
      var unused = ctx.close();
    }
  }

  static Message decode(ByteBuf body) {
    PmixReader r = new PmixReader(body, WireFormat.DEFAULT);
    int type = r.unpackByteEnum(DataType.BYTE);
    return switch (type) {
      case FENCE -> new FenceData(
          r.unpackString(), r.unpackInt32(), r.unpackOne(DataType.BYTE_OBJECT).asBytes());
      case DMODEX_REQUEST -> new DmodexRequest(
          r.unpackOne(DataType.INT64).asLong(), r.unpackInt32(), r.unpackProc(), r.unpackInt32());
      case DMODEX_REPLY -> new DmodexReply(
          r.unpackOne(DataType.INT64).asLong(),
          r.unpackStatus(),
          r.unpackOne(DataType.BYTE_OBJECT).asBytes());
      case LOST -> {
        int from = r.unpackInt32();
        int status = r.unpackInt32();
        int n = r.unpackInt32();
        if (n < 0 || n > body.readableBytes()) {
          throw new PmixException(Status.ERR_BAD_PARAM, "lost processes: bad count " + n);
        }
        List<Integer> ranks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          ranks.add(r.unpackInt32());
        }
        yield new Lost(from, status, ranks);
      }
      default -> throw new PmixException(
          Status.ERR_BAD_PARAM, "unknown interconnect message " + type);
    };
  }
}
