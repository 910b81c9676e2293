package io.pmix.dataserver.internal;

import static java.util.Objects.requireNonNull;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Frame;
import io.pmix.dataserver.DataStore;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.LookupResult;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One PMIx server's connection to a data server: decodes its requests ({@link DsProtocol}), runs
 * them on the store and writes the replies. One instance per connection, on the core's event loop.
 *
 * <p>Bad input never reaches the store as an exception: fields that do not decode are answered
 * with the decoder's status, and a frame that cannot even be attributed to a request closes this
 * connection alone. When the connection goes, the lookups still waiting on it are cancelled.
 */
public final class DsServerHandler extends SimpleChannelInboundHandler<Frame> {
  private final DsServerCore core;
  private final System.Logger log;
  private final Map<Integer, DataStore.PendingLookup> waiting = new HashMap<>();
  private boolean greeted;
  private String peerName = "?";

  /** A handler serving {@code core}'s store. */
  public DsServerHandler(DsServerCore core, System.Logger log) {
    super(Frame.class);
    this.core = requireNonNull(core, "core");
    this.log = requireNonNull(log, "log");
  }

  /** How many lookups from this connection are waiting. */
  public int waitingLookups() {
    return waiting.size();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
    PmixReader r = new PmixReader(frame.payload());
    DsProtocol.Header h;
    try {
      h = DsProtocol.header(r);
    } catch (PmixException e) {
      // Not even attributable to a request: nobody can be answered, so the connection goes.
      log.log(Level.WARNING, "data server: closing {0}: unreadable message: {1}", who(ctx), e.getMessage());
      close(ctx);
      return;
    }
    if (!greeted && h.command() != DsProtocol.HELLO) {
      log.log(Level.WARNING, "data server: closing {0}: {1} before HELLO", who(ctx), DsProtocol.commandName(h.command()));
      replyThenClose(ctx, h, Status.ERR_INIT, w -> {});
      return;
    }
    try {
      dispatch(ctx, h, r);
    } catch (PmixException e) {
      log.log(Level.DEBUG, "data server: bad {0} from {1}: {2}", DsProtocol.commandName(h.command()), who(ctx), e.getMessage());
      reply(ctx, h, e.status(), w -> {});
    } finally {
      core.reschedule();
    }
  }

  private void dispatch(ChannelHandlerContext ctx, DsProtocol.Header h, PmixReader r) {
    DataStore store = core.store();
    switch (h.command()) {
      case DsProtocol.HELLO -> hello(ctx, h, r);
      case DsProtocol.PUBLISH -> {
        Identity id = DsProtocol.readIdentity(r);
        List<Info> info = DsProtocol.readInfos(r);
        reply(ctx, h, store.publish(id, info), w -> {});
      }
      case DsProtocol.LOOKUP -> lookup(ctx, h, r);
      case DsProtocol.UNPUBLISH -> {
        Identity id = DsProtocol.readIdentity(r);
        List<String> keys = DsProtocol.readKeys(r);
        List<Info> info = DsProtocol.readInfos(r);
        reply(ctx, h, store.unpublish(id, keys, info), w -> {});
      }
      case DsProtocol.CANCEL -> {
        int target = r.unpackUInt32();
        Status reason = r.unpackStatus();
        DataStore.PendingLookup p = waiting.remove(target);
        boolean wasWaiting = p != null && p.cancel(reason);
        reply(ctx, h, wasWaiting ? Status.SUCCESS : Status.ERR_NOT_FOUND, w -> {});
      }
      case DsProtocol.PROC_ENDED -> {
        Proc proc = r.unpackProc();
        store.procEnded(proc);
        reply(ctx, h, Status.SUCCESS, w -> {});
      }
      case DsProtocol.APP_ENDED -> {
        String nspace = DsProtocol.requireString(r, "nspace");
        int app = r.unpackUInt32();
        if (app == Identity.UNKNOWN) {
          throw new PmixException(Status.ERR_BAD_PARAM, "APP_ENDED without an application");
        }
        store.appEnded(nspace, app);
        reply(ctx, h, Status.SUCCESS, w -> {});
      }
      case DsProtocol.NSPACE_ENDED -> {
        store.namespaceEnded(DsProtocol.requireString(r, "nspace"));
        reply(ctx, h, Status.SUCCESS, w -> {});
      }
      case DsProtocol.SESSION_ENDED -> {
        store.sessionEnded(r.unpackUInt32());
        reply(ctx, h, Status.SUCCESS, w -> {});
      }
      default -> reply(ctx, h, Status.ERR_NOT_SUPPORTED, w -> {});
    }
  }

  private void hello(ChannelHandlerContext ctx, DsProtocol.Header h, PmixReader r) {
    String magic = DsProtocol.requireString(r, "magic");
    int version = r.unpackUInt32();
    String name = DsProtocol.requireString(r, "name");
    if (!magic.equals(DsProtocol.MAGIC) || version != DsProtocol.VERSION) {
      log.log(
          Level.WARNING,
          "data server: closing {0}: it speaks {1} version {2}, not {3} version {4}",
          who(ctx),
          magic,
          Integer.toUnsignedString(version),
          DsProtocol.MAGIC,
          Integer.toString(DsProtocol.VERSION));
      replyThenClose(ctx, h, Status.ERR_NOT_SUPPORTED, w -> w.packUInt32(DsProtocol.VERSION));
      return;
    }
    greeted = true;
    peerName = name;
    log.log(Level.DEBUG, "data server: {0} connected", who(ctx));
    reply(ctx, h, Status.SUCCESS, w -> w.packUInt32(DsProtocol.VERSION));
  }

  private void lookup(ChannelHandlerContext ctx, DsProtocol.Header h, PmixReader r) {
    Identity id = DsProtocol.readIdentity(r);
    List<String> keys = DsProtocol.readKeys(r);
    List<Info> info = DsProtocol.readInfos(r);
    int reqId = h.requestId();
    if (waiting.containsKey(reqId)) {
      throw new PmixException(
          Status.ERR_BAD_PARAM,
          "request id " + Integer.toUnsignedString(reqId) + " is already a waiting lookup");
    }
    Consumer<LookupResult> done =
        result -> {
          waiting.remove(reqId);
          reply(ctx, h, result.status(), w -> DsProtocol.writeLookupData(w, result));
        };
    DataStore.PendingLookup p = core.store().lookup(id, keys, info, done);
    if (!p.isDone()) {
      waiting.put(reqId, p);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (!waiting.isEmpty()) {
      log.log(
          Level.DEBUG,
          "data server: {0} left with {1} lookups waiting; cancelling them",
          who(ctx),
          waiting.size());
      for (DataStore.PendingLookup p : new ArrayList<>(waiting.values())) {
        p.cancel(Status.ERR_LOST_CONNECTION);
      }
      waiting.clear();
      core.reschedule();
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // Oversized frames (FrameDecoder) and I/O errors: this connection is unusable, the others
    // are not affected.
    log.log(Level.WARNING, "data server: closing {0}: {1}", who(ctx), cause.toString());
    close(ctx);
  }

  // ---------------------------------------------------------------------------------------------

  private void reply(
      ChannelHandlerContext ctx, DsProtocol.Header h, Status status, Consumer<PmixWriter> fields) {
    if (!ctx.channel().isActive()) {
      return;
    }
    Frame f =
        DsProtocol.build(
            DsProtocol.reply(ctx.alloc(), h.command(), h.requestId(), status), fields);
    ChannelFuture unused = ctx.writeAndFlush(f);
  }

  private void replyThenClose(
      ChannelHandlerContext ctx, DsProtocol.Header h, Status status, Consumer<PmixWriter> fields) {
    if (!ctx.channel().isActive()) {
      return;
    }
    Frame f =
        DsProtocol.build(
            DsProtocol.reply(ctx.alloc(), h.command(), h.requestId(), status), fields);
    ChannelFuture unused = ctx.writeAndFlush(f).addListener(ChannelFutureListener.CLOSE);
  }

  private static void close(ChannelHandlerContext ctx) {
    ChannelFuture unused = ctx.close();
  }

  private String who(ChannelHandlerContext ctx) {
    return peerName + "@" + ctx.channel().remoteAddress();
  }
}
