package io.pmix.server.internal;

import io.pmix.common.internal.wire.NettyDefaults;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.net.Epoll;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * What carries the server's bytes: its progress thread, its listener and the connections it
 * accepts. Two kinds: the server's own on epoll ({@link OwnServerTransport}, where pmix-java's
 * native library loads) and Netty's ({@link NettyServerTransport}: elsewhere, or when {@link
 * ServerOptions#nettyTransport} asks for it). {@code PMIxServer} starts and stops the server
 * through this class only; the core sees {@link ProgressExecutor} and {@link ServerConnection}.
 */
public abstract class ServerTransport {
  /** For the two kinds. */
  ServerTransport() {}

  /** The transport {@code options} call for, its progress thread started. */
  public static ServerTransport open(ServerOptions options) throws IOException {
    // Either way the job data and the store writes still use Netty's buffers.
    NettyDefaults.apply();
    if (!options.nettyTransport() && options.preferEpoll() && Epoll.available()) {
      return new OwnServerTransport();
    }
    return new NettyServerTransport(options.preferEpoll());
  }

  /** The progress thread. */
  public abstract ProgressExecutor executor();

  /**
   * Opens the listener on 127.0.0.1 (a port the kernel chooses) for {@code core}'s clients and
   * waits for it; called off the progress thread.
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials
   */
  public abstract InetSocketAddress listen(
      ServerCore core,
      ServerOptions options,
      @Nullable Executor ownerLookupExecutor,
      PendingHandshakes pending)
      throws IOException, InterruptedException;

  /** Closes the listener. Progress thread. */
  public abstract void closeListener();

  /**
   * Closes every connection still open, peers or not (after the core closed its peers'); the
   * futures of their closes. Progress thread.
   */
  public abstract List<CompletableFuture<Void>> closeConnections();

  /**
   * Ends the progress thread once its tasks have run; {@code whenStopped} runs after. Any thread.
   */
  public abstract void stop(Runnable whenStopped);

  /** Ends the progress thread at once (a start that failed). */
  public abstract void stopNow();

  /** The kind, for the log ("own epoll", "netty epoll", "netty nio"). */
  public abstract String kind();
}
