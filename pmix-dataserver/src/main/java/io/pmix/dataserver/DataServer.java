package io.pmix.dataserver;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.pmix.common.Status;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.dataserver.internal.DsProtocol;
import io.pmix.dataserver.internal.DsServerCore;
import io.pmix.dataserver.internal.DsServerHandler;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A {@link DataStore} as a standalone network service, shared by any number of PMIx servers, as
 * PRRTE's single data server serves a whole DVM. PMIx servers reach it with {@link
 * DataServerClient}; the protocol is {@link io.pmix.dataserver.internal.DsProtocol} (the common
 * framing and codec: a command byte, a request id, packed fields).
 *
 * <p>Run it with {@code bin/pmix-dataserver --port P --timeout S --max-size BYTES} ({@link #main})
 * or embed it with {@link #builder()}. It trusts the identities the connected PMIx servers send, so
 * it listens on the loopback interface unless told otherwise ({@code --bind}); expose it only to
 * the PMIx servers it serves.
 *
 * <p>Threading and ownership: the server owns one event loop thread, which runs every connection,
 * the store and its timer (the store's serializing context). A misbehaving client (malformed or
 * oversized frames, vanishing with lookups waiting) gets an error status or loses its connection;
 * the others are served on. Lifecycle as in grpc-java: {@link #shutdown()} stops accepting, fails
 * what is waiting, closes connections and releases the thread; {@link #close()} also waits.
 */
public final class DataServer implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.named("io.pmix.dataserver");

  private final EventLoopGroup group;
  private final Channel listener;
  private final ChannelGroup connections;
  private final DsServerCore core;
  private final System.Logger log;
  private final CountDownLatch terminated = new CountDownLatch(1);
  private volatile boolean shutdown;

  private DataServer(
      EventLoopGroup group, Channel listener, ChannelGroup connections, DsServerCore core,
      System.Logger log) {
    this.group = group;
    this.listener = listener;
    this.connections = connections;
    this.core = core;
    this.log = log;
  }

  /** A builder: loopback, an ephemeral port, the default store options. */
  public static Builder builder() {
    return new Builder();
  }

  /** The address the server listens on (with the port actually bound). */
  public InetSocketAddress localAddress() {
    return (InetSocketAddress) listener.localAddress();
  }

  /** The port the server listens on. */
  public int port() {
    return localAddress().getPort();
  }

  /**
   * Runs {@code action} with the store on the server's thread, for tests and operators; the stage
   * completes with its result.
   */
  public <T> CompletionStage<T> inspect(Function<DataStore, T> action) {
    requireNonNull(action, "action");
    CompletableFuture<T> f = new CompletableFuture<>();
    core.loop()
        .execute(
            () -> {
              try {
                f.complete(action.apply(core.store()));
              } catch (RuntimeException e) {
                f.completeExceptionally(e);
              }
            });
    return f;
  }

  /**
   * Starts an orderly shutdown: stops accepting, completes the waiting lookups with {@code
   * PMIX_ERR_NOT_AVAILABLE}, closes every connection and releases the thread. Returns at once;
   * idempotent.
   */
  public void shutdown() {
    if (shutdown) {
      return;
    }
    shutdown = true;
    ChannelFuture closing = listener.close();
    closing.addListener(
        x ->
            core.loop()
                .execute(
                    () -> {
                      core.stop();
                      core.store().cancelAll(Status.ERR_NOT_AVAILABLE);
                      connections
                          .close()
                          .addListener(
                              y -> {
                                Future<?> stop = group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
                                stop.addListener(z -> terminated.countDown());
                              });
                    }));
  }

  /** Whether {@link #shutdown()} was called. */
  public boolean isShutdown() {
    return shutdown;
  }

  /** Whether the server has shut down completely. */
  public boolean isTerminated() {
    return terminated.getCount() == 0;
  }

  /**
   * Waits until the server has terminated, or the timeout passes.
   *
   * @return whether it terminated
   */
  @CanIgnoreReturnValue
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    return terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Shuts down and waits until the thread has stopped; not to be called from the server's own
   * thread (an {@link #inspect} action).
   */
  @Override
  public void close() {
    shutdown();
    boolean interrupted = false;
    while (true) {
      try {
        if (awaitTermination(Duration.ofMinutes(1))) {
          break;
        }
        log.log(Level.WARNING, "data server: still waiting for its thread to stop");
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "DataServer{" + listener.localAddress() + (shutdown ? ", shut down" : "") + "}";
  }

  /** Builds and starts a {@link DataServer}. Not thread-safe. */
  public static final class Builder {
    private InetAddress bindAddress = InetAddress.getLoopbackAddress();
    private int port;
    private DataStoreOptions storeOptions = DataStoreOptions.defaults();
    private int maxFrameBytes = DsProtocol.DEFAULT_MAX_FRAME_BYTES;

    private Builder() {}

    /** The address to listen on; the loopback address by default. */
    @CanIgnoreReturnValue
    public Builder bindAddress(InetAddress address) {
      this.bindAddress = requireNonNull(address, "address");
      return this;
    }

    /** The port; 0 (the default) picks a free one, read back with {@link DataServer#port()}. */
    @CanIgnoreReturnValue
    public Builder port(int p) {
      checkArgument(p >= 0 && p <= 0xFFFF, "port out of range: %s", p);
      this.port = p;
      return this;
    }

    /** The store's options (idle timeout, per-uid cap, ...). */
    @CanIgnoreReturnValue
    public Builder storeOptions(DataStoreOptions options) {
      this.storeOptions = requireNonNull(options, "options");
      return this;
    }

    /** The largest message payload accepted; a larger one closes its connection. */
    @CanIgnoreReturnValue
    public Builder maxFrameBytes(int bytes) {
      checkArgument(bytes > 0, "maxFrameBytes must be positive: %s", bytes);
      this.maxFrameBytes = bytes;
      return this;
    }

    /**
     * Binds and starts the server.
     *
     * @throws IOException if the address cannot be bound
     */
    public DataServer start() throws IOException {
      EventLoopGroup group =
          new MultiThreadIoEventLoopGroup(
              1, new DefaultThreadFactory("pmix-dataserver", true), NioIoHandler.newFactory());
      try {
        EventLoop loop = group.next();
        System.Logger log = storeOptions.logger();
        DsServerCore core = new DsServerCore(new DataStore(storeOptions), loop);
        ChannelGroup connections = new DefaultChannelGroup("pmix-dataserver", loop);
        int maxFrame = maxFrameBytes;
        ServerBootstrap b =
            new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(
                    new ChannelInitializer<SocketChannel>() {
                      @Override
                      protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        ch.pipeline()
                            .addLast("frames", new FrameDecoder(maxFrame))
                            .addLast("encoder", FrameEncoder.INSTANCE)
                            .addLast("requests", new DsServerHandler(core, log));
                      }
                    });
        ChannelFuture bound = b.bind(new InetSocketAddress(bindAddress, port)).awaitUninterruptibly();
        if (!bound.isSuccess()) {
          throw new IOException(
              "cannot listen on " + bindAddress.getHostAddress() + ":" + port, bound.cause());
        }
        log.log(
            Level.INFO,
            "data server listening on {0} ({1})",
            bound.channel().localAddress(),
            storeOptions);
        return new DataServer(group, bound.channel(), connections, core, log);
      } catch (IOException | RuntimeException e) {
        Future<?> unused = group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        throw e;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The command line

  private static final String USAGE =
      "usage: pmix-dataserver [--port P] [--timeout SECONDS] [--max-size BYTES] [--bind ADDRESS]\n"
          + "  --port P           TCP port to listen on (default 0: any free port, printed)\n"
          + "  --timeout S        "
          + DataStoreOptions.TIMEOUT_PARAMETER
          + ": idle seconds before INDEF/unread FIRST_READ data goes (default 300, 0 = never)\n"
          + "  --max-size BYTES   "
          + DataStoreOptions.MAX_SIZE_PARAMETER
          + ": most bytes held per uid (default 16777216, 0 = no cap)\n"
          + "  --bind ADDRESS     address to listen on (default loopback); the server trusts every\n"
          + "                     PMIx server that can reach it\n"
          + "Parameters are also read from PMIX_MCA_"
          + DataStoreOptions.TIMEOUT_PARAMETER
          + " and PMIX_MCA_"
          + DataStoreOptions.MAX_SIZE_PARAMETER
          + "; options win.\n";

  /**
   * The standalone server: parses the options, prints {@code pmix-dataserver listening on
   * HOST:PORT} on standard output once it listens, and runs until the process is stopped. Exit
   * status 2 for a usage error, 1 if it cannot listen.
   */
  public static void main(String[] args) throws InterruptedException {
    int rc = run(args, System.getenv(), System.out, System.err);
    if (rc != 0) {
      System.exit(rc);
    }
  }

  /** {@link #main} without exiting, with its streams and environment given: for tests. */
  static int run(
      String[] args, java.util.Map<String, String> env, PrintStream out, PrintStream err)
      throws InterruptedException {
    Launch l = launch(args, env, out, err);
    if (l.server() == null) {
      return l.exitCode();
    }
    while (!l.server().awaitTermination(Duration.ofDays(1))) {
      // Runs until the process is stopped.
    }
    return 0;
  }

  /** What the command line came to: a running server, or the exit status of why not. */
  record Launch(@org.jspecify.annotations.Nullable DataServer server, int exitCode) {}

  /**
   * Parses {@code args} and starts a server, or reports why not on {@code err}. Package-private
   * for tests.
   */
  static Launch launch(
      String[] args, java.util.Map<String, String> env, PrintStream out, PrintStream err) {
    Builder b = builder();
    DataStoreOptions.Builder store;
    try {
      store = DataStoreOptions.builder().environment(env);
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("-h") || a.equals("--help")) {
          out.print(USAGE);
          return new Launch(null, 0);
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(a + " needs a value");
        }
        String v = args[++i];
        switch (a) {
          case "--port" -> b.port(Integer.parseInt(v));
          case "--timeout" ->
              store.idleTimeout(
                  Duration.ofSeconds(DataStoreOptions.Builder.parseNonNegative("--timeout", v)));
          case "--max-size" ->
              store.maxBytesPerUid(DataStoreOptions.Builder.parseNonNegative("--max-size", v));
          case "--bind" -> b.bindAddress(InetAddress.getByName(v));
          default -> throw new IllegalArgumentException("unknown option " + a);
        }
      }
    } catch (IllegalArgumentException | IOException e) {
      err.println("pmix-dataserver: " + e.getMessage());
      err.print(USAGE);
      return new Launch(null, 2);
    }
    b.storeOptions(store.build());
    try {
      DataServer server = b.start();
      InetSocketAddress a = server.localAddress();
      out.println(
          "pmix-dataserver listening on " + a.getAddress().getHostAddress() + ":" + a.getPort());
      out.flush();
      return new Launch(server, 0);
    } catch (IOException e) {
      err.println("pmix-dataserver: " + e.getMessage());
      LOG.log(Level.DEBUG, "bind failure", e);
      return new Launch(null, 1);
    }
  }
}
