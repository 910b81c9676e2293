package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.IofDelivery;
import io.pmix.common.internal.message.IofDeregRequest;
import io.pmix.common.internal.message.IofPullReply;
import io.pmix.common.internal.message.IofPullRequest;
import io.pmix.common.internal.message.IofPushRequest;
import io.pmix.common.internal.message.StatusReply;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The I/O-forwarding registrations of a cycle (IOF_PULL), where the forwarded output they bring
 * goes (a sink per registration, run on the callback thread, in order), their ending (IOF_DEREG)
 * and standard input sent to processes (IOF_PUSH) (docs/commands.md §4).
 *
 * <p>Confined to the progress thread.
 */
final class IofSinks implements SessionPart {
  private static final System.Logger LOG = LazyLogger.of(IofSinks.class);

  /** An IOF_PULL registration: where its output goes and the server's id for it. */
  private static final class IofSink {
    final Consumer<IofDelivery> sink;
    long serverId = -1;

    IofSink(Consumer<IofDelivery> sink) {
      this.sink = sink;
    }
  }

  private final LibraryThreads threads;
  private final Connection connection;

  @Bookkept("session.iofSinks")
  private final Map<Long, IofSink> sinks = new HashMap<>();

  private long nextIofId = 1;

  IofSinks(LibraryThreads threads, Connection connection) {
    this.threads = requireNonNull(threads, "threads");
    this.connection = requireNonNull(connection, "connection");
  }

  /**
   * Asks the server to forward the output of {@code sources} on {@code channels} (a bit mask) to
   * {@code sink}; completes with the registration's local id.
   */
  CompletableFuture<Long> pull(
      List<Proc> sources, int channels, List<Info> directives, Consumer<IofDelivery> sink) {
    List<Proc> ps = List.copyOf(sources);
    List<Info> ds = List.copyOf(directives);
    requireNonNull(sink, "sink");
    if (ps.isEmpty()) {
      throw new IllegalArgumentException("no processes to forward output from");
    }
    return threads.call(
        f -> {
          long localId = nextIofId++;
          IofSink s = new IofSink(sink);
          // Registered before the request: the server may push output right after its reply.
          sinks.put(localId, s);
          connection.send(
              new IofPullRequest(ps, ds, channels, localId),
              new ReplyHandler() {
                @Override
                public void onReply(PmixReader r) {
                  IofPullReply reply = IofPullReply.decode(r);
                  if (!reply.status().isSuccess()) {
                    sinks.remove(localId);
                    threads.fail(f, new PmixException(reply.status(), "IOF pull"));
                    return;
                  }
                  s.serverId = reply.serverId();
                  threads.complete(f, localId);
                }

                @Override
                public void onFailure(PmixException e) {
                  sinks.remove(localId);
                  threads.fail(f, e);
                }
              });
        });
  }

  /** Ends a registration: no more output reaches its sink, and the server is told. */
  CompletableFuture<Void> deregister(long localId, List<Info> directives) {
    List<Info> ds = List.copyOf(directives);
    return threads.call(
        f -> {
          IofSink s = sinks.remove(localId);
          if (s == null) {
            threads.fail(
                f, new PmixException(Status.ERR_NOT_FOUND, "no IOF registration " + localId));
            return;
          }
          connection.send(
              new IofDeregRequest(ds, s.serverId),
              connection.replyTo(
                  f,
                  r -> {
                    StatusReply.decode(r).check("IOF deregister");
                    return null;
                  }));
        });
  }

  /** Sends {@code data} (null: end of input) to the standard input of {@code targets}. */
  CompletableFuture<Void> push(List<Proc> targets, byte @Nullable [] data, List<Info> directives) {
    List<Proc> ts = List.copyOf(targets);
    List<Info> ds = List.copyOf(directives);
    byte[] copy = data == null ? null : data.clone();
    return connection.request(
        () -> new IofPushRequest(ts, ds, copy),
        r -> {
          StatusReply.decode(r).check("IOF push");
          return null;
        });
  }

  /** Forwarded output the server pushed on tag 2. */
  void onDelivery(IofDelivery c) {
    IofSink s = sinks.get(c.localId());
    if (s == null) {
      LOG.log(Level.DEBUG, "forwarded output for unknown registration {0} dropped", c.localId());
      return;
    }
    threads.deliver("IOF handler", List.of(() -> s.sink.accept(c)));
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("session.iofSinks", (long) sinks.size());
    return m;
  }

  @Override
  public void release() {
    sinks.clear();
  }
}
