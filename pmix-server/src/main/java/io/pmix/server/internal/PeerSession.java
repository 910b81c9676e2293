package io.pmix.server.internal;

import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.ConnectRequest;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One accepted connection from its accept to its close, whatever transport carries it: takes its
 * place among the connections awaiting their handshake (at the cap, the oldest silent one goes:
 * {@link PendingHandshakes}), enforces the handshake timeout, starts the socket-owner lookup as
 * soon as the connection exists, hands the connect request to the core once both are known, then
 * routes frames and the close to the core. The transport tells it what happened, in order, on the
 * progress thread ({@link PeerHandler} for Netty's); it closes the connection itself where the
 * rules say so.
 */
final class PeerSession {
  private static final System.Logger LOG = LazyLogger.of(PeerSession.class);
  /** How long the socket-owner lookup may take before the owner counts as unknown. */
  static final Duration OWNER_LOOKUP_DEADLINE = Duration.ofSeconds(2);

  private final ServerCore core;
  private final ServerConnection connection;
  private final ScheduledExecutorService loop;
  private final Duration handshakeTimeout;
  private final @Nullable Executor ownerLookupExecutor;
  private final SocketOwner socketOwner;
  private final PendingHandshakes pending;
  /** This connection's place in {@link #pending} (accepted, not yet a peer or closed), or null. */
  private PendingHandshakes.@Nullable Ticket ticket;
  private @Nullable Object peer;
  private boolean handshakeSeen;
  private @Nullable ScheduledFuture<?> timer;
  private CompletableFuture<OptionalInt> ownerUid =
      CompletableFuture.completedFuture(OptionalInt.empty());

  /**
   * A session of {@code connection}, its timers on {@code loop} (the connection's progress
   * thread).
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials and skip the lookup
   */
  PeerSession(
      ServerCore core,
      ServerConnection connection,
      ScheduledExecutorService loop,
      Duration handshakeTimeout,
      @Nullable Executor ownerLookupExecutor,
      SocketOwner socketOwner,
      PendingHandshakes pending) {
    this.core = core;
    this.connection = connection;
    this.loop = loop;
    this.handshakeTimeout = handshakeTimeout;
    this.ownerLookupExecutor = ownerLookupExecutor;
    this.socketOwner = socketOwner;
    this.pending = pending;
  }

  /**
   * The connection is open, between {@code remote} and {@code local}. Whether it goes on: false
   * when the cap of connections awaiting their decision closed it at once.
   */
  boolean opened(@Nullable SocketAddress remote, @Nullable SocketAddress local) {
    ticket = pending.enter(connection);
    if (ticket == null) {
      // Beyond the cap, every counted connection awaiting its decision: closed at once, before
      // any lookup.
      LOG.log(Level.INFO, "{0} connections await their connect decision; closing {1}",
          pending.limit(), connection);
      connection.close();
      return false;
    }
    timer =
        loop.schedule(new HandshakeDeadline(), handshakeTimeout.toNanos(), TimeUnit.NANOSECONDS);
    if (ownerLookupExecutor != null
        && remote instanceof InetSocketAddress r
        && local instanceof InetSocketAddress l) {
      ownerUid = lookUpOwner(r, l);
    }
    return true;
  }

  /**
   * Closes the connection if no connect request came in time. A class, not a lambda: every
   * connection schedules one, and a fresh server links each call site once (docs/architecture.md,
   * "Start-up of pmixrun").
   */
  private final class HandshakeDeadline implements Runnable {
    @Override
    public void run() {
      if (!handshakeSeen) {
        LOG.log(Level.INFO, "no connect request within {0}; closing {1}",
            handshakeTimeout, connection);
        connection.close();
      }
    }
  }

  /** The connect request arrived (the transport decodes only one). */
  void connectRequest(ConnectRequest req) {
    handshakeSeen = true;
    if (ticket != null) {
      pending.requestSeen(ticket);
    }
    cancelTimer();
    if (ownerUid.isDone()) {
      decide(req, ownerUid.getNow(OptionalInt.empty()));
    } else {
      CompletableFuture<OptionalInt> unused = ownerUid.whenComplete(new OwnerKnown(req));
    }
  }

  /** A frame after the connect request. */
  void frame(int tag, byte[] payload) {
    if (peer == null) {
      // A frame before the handshake was answered: C connectors never do this.
      connection.close();
      return;
    }
    core.frame(peer, tag, payload);
  }

  private void decide(ConnectRequest req, OptionalInt uid) {
    if (!connection.isOpen()) {
      return;
    }
    // A tool's identity comes from the host, so the decision may arrive later (on this loop).
    core.accept(connection, req, uid, new Decision());
  }

  /**
   * The socket's owner looked up after the handshake came: the decision goes back to the loop.
   * A class, not a lambda, like {@link Decision}.
   */
  private final class OwnerKnown implements BiConsumer<OptionalInt, Throwable>, Runnable {
    private final ConnectRequest req;
    private OptionalInt uid = OptionalInt.empty();

    OwnerKnown(ConnectRequest req) {
      this.req = req;
    }

    @Override
    public void accept(@Nullable OptionalInt found, @Nullable Throwable e) {
      uid = found == null ? OptionalInt.empty() : found;
      try {
        loop.execute(this);
      } catch (RejectedExecutionException ex) {
        // Server stopping: the connection is closed with everything else.
      }
    }

    @Override
    public void run() {
      decide(req, uid);
    }
  }

  /**
   * What the admission decided: the peer, or a closed connection. A class, not a lambda: a
   * lambda's first call costs a fresh server 0.1-0.2 ms (docs/architecture.md, "First requests").
   */
  private final class Decision implements Consumer<Optional<Object>> {
    @Override
    public void accept(Optional<Object> accepted) {
      if (accepted.isPresent()) {
        peer = accepted.get();
        leavePending();
      } else {
        connection.close();
      }
    }
  }

  /** The socket closed, by either side. */
  void closed() {
    cancelTimer();
    leavePending();
    // A lookup not done yet is not made any more (its task sees the future done).
    boolean unused = ownerUid.cancel(false);
    if (peer != null) {
      core.closed(peer);
    }
  }

  /**
   * The connection cannot go on ({@code cause}: a malformed or oversized message leaves the
   * stream unframeable, a failed read or write): closed.
   */
  void failed(Throwable cause) {
    LOG.log(Level.INFO, "closing " + connection + ": " + cause.getMessage());
    connection.close();
  }

  /**
   * Looks the socket's owner up: at once where the kernel answers without a wait ({@link
   * SocketOwner#ownerUidAtOnce}, no blocking call: no hop to the lookup thread and back, each
   * connection's handshake answered sooner), else off the progress thread (blocking system calls
   * or file reads). The latter is bounded: past {@link #OWNER_LOOKUP_DEADLINE} the owner counts
   * as unknown (a client is then refused unless claims are trusted); and it is skipped if the
   * connection closed, or the deadline passed, before its turn came (issue #19: a queue of
   * hostile connections delayed legitimate ones by a minute).
   */
  private CompletableFuture<OptionalInt> lookUpOwner(
      InetSocketAddress remote, InetSocketAddress local) {
    CompletableFuture<OptionalInt> f = new CompletableFuture<>();
    Executor exec = ownerLookupExecutor;
    if (exec == null) {
      f.complete(OptionalInt.empty());
      return f;
    }
    if (socketOwner.ownerUidAtOnce(remote, local, f)) {
      return f;
    }
    try {
      exec.execute(
          () -> {
            if (f.isDone()) {
              return; // closed or past the deadline already: nobody waits for the answer
            }
            try {
              f.complete(socketOwner.ownerUid(remote, local));
            } catch (RuntimeException e) {
              LOG.log(Level.INFO, "socket owner lookup failed: {0}", e.toString());
              f.complete(OptionalInt.empty());
            }
          });
    } catch (RejectedExecutionException e) {
      f.complete(OptionalInt.empty());
      return f;
    }
    ScheduledFuture<?> deadline =
        loop.schedule(
            () -> {
              if (f.complete(OptionalInt.empty())) {
                LOG.log(Level.INFO, "the owner of {0} was not found within {1}",
                    connection, OWNER_LOOKUP_DEADLINE);
              }
            },
            OWNER_LOOKUP_DEADLINE.toNanos(),
            TimeUnit.NANOSECONDS);
    CompletableFuture<OptionalInt> unused = f.whenComplete((u, e) -> deadline.cancel(false));
    return f;
  }

  private void leavePending() {
    if (ticket != null) {
      pending.leave(ticket);
      ticket = null;
    }
  }

  private void cancelTimer() {
    if (timer != null) {
      boolean unused = timer.cancel(false);
      timer = null;
    }
  }
}
