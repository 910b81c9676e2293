package io.pmix.server.internal;

import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.net.ServerLoop;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import org.jspecify.annotations.Nullable;

/** The server's own transport: a {@link ServerLoop} and a {@link NativeTransport} on it. */
final class OwnServerTransport extends ServerTransport {
  private final ServerLoop loop;
  private final ProgressExecutor executor;
  private @Nullable NativeTransport transport;

  OwnServerTransport() throws IOException {
    loop =
        new ServerLoop(
            new ThreadFactory() {
              @Override
              public Thread newThread(Runnable r) {
                Thread t = new Thread(r, "pmix-progress");
                t.setDaemon(true);
                return t;
              }
            });
    executor = new ProgressExecutor(loop);
  }

  @Override
  public ProgressExecutor executor() {
    return executor;
  }

  @Override
  public InetSocketAddress listen(
      ServerCore core,
      ServerOptions options,
      @Nullable Executor ownerLookupExecutor,
      PendingHandshakes pending)
      throws IOException, InterruptedException {
    NativeTransport t =
        new NativeTransport(
            loop,
            core,
            options.handshakeTimeout(),
            ownerLookupExecutor,
            pending,
            options.maxMessageSize(),
            // Shared by every connection of this server: the bounds are global.
            FrameBudget.of(options.frameBudget()));
    transport = t;
    try {
      return loop.submit(() -> t.listen(4096)).get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException(e.getCause());
    }
  }

  @Override
  public void closeListener() {
    NativeTransport t = transport;
    if (t != null) {
      t.closeListener();
    }
  }

  @Override
  public List<CompletableFuture<Void>> closeConnections() {
    NativeTransport t = transport;
    return t == null ? List.of() : t.closeAll();
  }

  @Override
  public void stop(Runnable whenStopped) {
    loop.whenTerminated(whenStopped);
    loop.shutdown();
  }

  @Override
  public void stopNow() {
    loop.execute(this::closeListener);
    loop.shutdown();
  }

  @Override
  public String kind() {
    return "own epoll";
  }
}
