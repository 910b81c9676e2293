package io.pmix.server.internal;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.pmix.common.internal.wire.PlainInboundHandler;
import io.netty.util.ReferenceCountUtil;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.ArrayFrame;
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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The last inbound handler of an accepted connection: takes its place among the connections
 * awaiting their handshake (at the cap, the oldest silent one goes: {@link PendingHandshakes}),
 * enforces the handshake timeout, starts the socket-owner lookup as soon as the connection
 * exists, hands the connect request to the core once both are known, then routes frames and the
 * close to the core. Any decoder failure closes
 * the connection (a malformed or oversized message leaves the stream unframeable). One instance
 * per channel; runs on the progress thread.
 */
public final class PeerHandler extends PlainInboundHandler {
  private static final System.Logger LOG = LazyLogger.of(PeerHandler.class);
  /** How long the socket-owner lookup may take before the owner counts as unknown. */
  static final Duration OWNER_LOOKUP_DEADLINE = Duration.ofSeconds(2);

  private final ServerCore core;
  private final Duration handshakeTimeout;
  private final @Nullable Executor ownerLookupExecutor;
  private final SocketOwner socketOwner;
  private final PendingHandshakes pending;
  /** This connection's place in {@link #pending} (accepted, not yet a peer or closed), or null. */
  private PendingHandshakes.@Nullable Ticket ticket;
  private @Nullable Object peer;
  private boolean handshakeSeen;
  private @Nullable ScheduledFuture<?> timer;
  private CompletableFuture<OptionalInt> ownerUid = CompletableFuture.completedFuture(OptionalInt.empty());

  /**
   * A handler for one connection.
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials and skip the lookup
   */
  public PeerHandler(ServerCore core, Duration handshakeTimeout, @Nullable Executor ownerLookupExecutor) {
    this(core, handshakeTimeout, ownerLookupExecutor, new PendingHandshakes(Integer.MAX_VALUE));
  }

  /**
   * A handler for one connection, counted in {@code pending} until its handshake completes.
   *
   * @param ownerLookupExecutor where the kernel socket tables are read, or null to trust claimed
   *     credentials and skip the lookup
   */
  public PeerHandler(
      ServerCore core, Duration handshakeTimeout, @Nullable Executor ownerLookupExecutor,
      PendingHandshakes pending) {
    this(core, handshakeTimeout, ownerLookupExecutor, new SocketOwner(), pending);
  }

  PeerHandler(
      ServerCore core, Duration handshakeTimeout, @Nullable Executor ownerLookupExecutor,
      SocketOwner socketOwner, PendingHandshakes pending) {
    this.core = core;
    this.handshakeTimeout = handshakeTimeout;
    this.ownerLookupExecutor = ownerLookupExecutor;
    this.socketOwner = socketOwner;
    this.pending = pending;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    ticket = pending.enter(ctx.channel());
    if (ticket == null) {
      // Beyond the cap, every counted connection awaiting its decision: closed at once, before
      // any lookup.
      LOG.log(Level.INFO, "{0} connections await their connect decision; closing {1}",
          pending.limit(), ctx.channel());
      ChannelFuture unused = ctx.close();
      return;
    }
    timer =
        ctx.executor()
            .schedule(new HandshakeDeadline(ctx), handshakeTimeout.toNanos(), TimeUnit.NANOSECONDS);
    SocketAddress remote = ctx.channel().remoteAddress();
    SocketAddress local = ctx.channel().localAddress();
    if (ownerLookupExecutor != null
        && remote instanceof InetSocketAddress r
        && local instanceof InetSocketAddress l) {
      ownerUid = lookUpOwner(ctx, r, l);
    }
    ctx.fireChannelActive();
  }

  /**
   * Closes the connection if no connect request came in time. A class, not a lambda: every
   * connection schedules one, and a fresh server links each call site once (docs/architecture.md,
   * "Start-up of pmixrun").
   */
  private final class HandshakeDeadline implements Runnable {
    private final ChannelHandlerContext ctx;

    HandshakeDeadline(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public void run() {
      if (!handshakeSeen) {
        LOG.log(Level.INFO, "no connect request within {0}; closing {1}",
            handshakeTimeout, ctx.channel());
        ChannelFuture unused = ctx.close();
      }
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof ConnectRequest req) {
      handshakeSeen = true;
      if (ticket != null) {
        pending.requestSeen(ticket);
      }
      cancelTimer();
      if (ownerUid.isDone()) {
        decide(ctx, req, ownerUid.getNow(OptionalInt.empty()));
      } else {
        CompletableFuture<OptionalInt> unused = ownerUid.whenComplete(new OwnerKnown(ctx, req));
      }
      return;
    }
    if (msg instanceof ArrayFrame frame) {
      if (peer == null) {
        // A frame before the handshake was answered: C connectors never do this.
        ChannelFuture unused = ctx.close();
        return;
      }
      core.frame(peer, frame.tag(), frame.payload());
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  private void decide(ChannelHandlerContext ctx, ConnectRequest req, OptionalInt uid) {
    if (!ctx.channel().isActive()) {
      return;
    }
    // A tool's identity comes from the host, so the decision may arrive later (on this loop).
    core.accept(ctx.channel(), req, uid, new Decision(ctx));
  }

  /**
   * The socket's owner looked up after the handshake came: the decision goes back to the loop.
   * A class, not a lambda, like {@link Decision}.
   */
  private final class OwnerKnown implements BiConsumer<OptionalInt, Throwable>, Runnable {
    private final ChannelHandlerContext ctx;
    private final ConnectRequest req;
    private OptionalInt uid = OptionalInt.empty();

    OwnerKnown(ChannelHandlerContext ctx, ConnectRequest req) {
      this.ctx = ctx;
      this.req = req;
    }

    @Override
    public void accept(@Nullable OptionalInt found, @Nullable Throwable e) {
      uid = found == null ? OptionalInt.empty() : found;
      try {
        ctx.executor().execute(this);
      } catch (RejectedExecutionException ex) {
        // Server stopping: the channel is closed with everything else.
      }
    }

    @Override
    public void run() {
      decide(ctx, req, uid);
    }
  }

  /**
   * What the admission decided: the peer, or a closed channel. A class, not a lambda: a lambda's
   * first call costs a fresh server 0.1-0.2 ms (docs/architecture.md, "First requests").
   */
  private final class Decision implements Consumer<Optional<Object>> {
    private final ChannelHandlerContext ctx;

    Decision(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public void accept(Optional<Object> accepted) {
      if (accepted.isPresent()) {
        peer = accepted.get();
        leavePending();
      } else {
        ChannelFuture unused = ctx.close();
      }
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancelTimer();
    leavePending();
    // A lookup not done yet is not made any more (its task sees the future done).
    boolean unused = ownerUid.cancel(false);
    if (peer != null) {
      core.closed(peer);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.log(Level.INFO, "closing " + ctx.channel() + ": " + cause.getMessage());
    ChannelFuture unused = ctx.close();
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
      ChannelHandlerContext ctx, InetSocketAddress remote, InetSocketAddress local) {
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
        ctx.executor()
            .schedule(
                () -> {
                  if (f.complete(OptionalInt.empty())) {
                    LOG.log(Level.INFO, "the owner of {0} was not found within {1}",
                        ctx.channel(), OWNER_LOOKUP_DEADLINE);
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
