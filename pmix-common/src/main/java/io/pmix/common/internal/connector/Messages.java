package io.pmix.common.internal.connector;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataRange;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.AbortRequest;
import io.pmix.common.internal.message.CommitRequest;
import io.pmix.common.internal.message.ConnectNbReply;
import io.pmix.common.internal.message.ConnectNbRequest;
import io.pmix.common.internal.message.DeregEventsRequest;
import io.pmix.common.internal.message.DisconnectNbRequest;
import io.pmix.common.internal.message.FenceNbRequest;
import io.pmix.common.internal.message.FinalizeRequest;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.common.internal.message.IofDeregRequest;
import io.pmix.common.internal.message.IofDelivery;
import io.pmix.common.internal.message.IofPullReply;
import io.pmix.common.internal.message.IofPullRequest;
import io.pmix.common.internal.message.IofPushRequest;
import io.pmix.common.internal.message.JobControlRequest;
import io.pmix.common.internal.message.LogRequest;
import io.pmix.common.internal.message.LookupNbReply;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.NotifyRequest;
import io.pmix.common.internal.message.PublishNbRequest;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.common.internal.message.QueryRequest;
import io.pmix.common.internal.message.RegEventsRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.ReqRequest;
import io.pmix.common.internal.message.SpawnNbRequest;
import io.pmix.common.internal.message.StatusReply;
import io.pmix.common.internal.message.UnpublishNbRequest;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A connector's messages in its wire format: {@link #write} frames a message record of {@code
 * internal.message} into a buffer, and the request methods here are the records the connector
 * sends, by their old names (the layouts are the records', docs/commands.md §3, §4 and §9). The
 * static reply helpers read the parts of replies the records describe.
 *
 * <p>Stateless apart from the wire format; thread-safe; buffers returned are owned by the caller.
 */
public final class Messages {
  private final WireFormat format;
  private final ByteBufAllocator alloc;

  /** Messages in {@code format}, allocated from {@code alloc}. */
  public Messages(WireFormat format, ByteBufAllocator alloc) {
    this.format = format;
    this.alloc = alloc;
  }

  /** The wire format written and read. */
  public WireFormat format() {
    return format;
  }

  /** {@code m} encoded into a fresh buffer, which the caller owns. */
  public ByteBuf write(Message m) {
    ByteBuf b = alloc.buffer();
    try {
      m.encode(new PmixWriter(b, format));
    } catch (RuntimeException e) {
      b.release();
      throw e;
    }
    return b;
  }

  /** REQ. */
  public ByteBuf req() {
    return write(ReqRequest.INSTANCE);
  }

  /** FINALIZE. */
  public ByteBuf finalizeRequest() {
    return write(FinalizeRequest.INSTANCE);
  }

  /** COMMIT of what was put LOCAL (or GLOBAL) and REMOTE (or GLOBAL); see {@link CommitRequest#of}. */
  public ByteBuf commit(Map<String, Value> local, Map<String, Value> remote) {
    return write(CommitRequest.of(local, remote));
  }

  /** FENCENB. */
  public ByteBuf fence(List<Proc> procs, List<Info> directives) {
    return write(new FenceNbRequest(procs, directives));
  }

  /** GETNB. */
  public ByteBuf get(Proc proc, List<Info> directives, String key) {
    return write(new GetNbRequest(proc, directives, key));
  }

  /** PUBLISHNB. */
  public ByteBuf publish(int uid, List<Info> info) {
    return write(new PublishNbRequest(uid, info));
  }

  /** LOOKUPNB or UNPUBLISHNB, which share a layout. */
  public ByteBuf keys(Command cmd, int uid, Collection<String> keys, List<Info> directives) {
    List<String> ks = List.copyOf(keys);
    switch (cmd) {
      case LOOKUPNB:
        return write(new LookupNbRequest(uid, ks, directives));
      case UNPUBLISHNB:
        return write(new UnpublishNbRequest(uid, ks, directives));
      default:
        throw new IllegalArgumentException("not a lookup or unpublish command: " + cmd);
    }
  }

  /** NOTIFY. */
  public ByteBuf notify(Status code, DataRange range, List<Info> info) {
    return write(new NotifyRequest(code, range, info));
  }

  /** REGEVENTS. */
  public ByteBuf registerEvents(List<Status> codes, List<Info> directives) {
    return write(new RegEventsRequest(codes, directives));
  }

  /** DEREGEVENTS. */
  public ByteBuf deregisterEvents(List<Status> codes) {
    return write(new DeregEventsRequest(codes));
  }

  /** QUERY. */
  public ByteBuf query(List<Value.Query> queries) {
    return write(new QueryRequest(queries));
  }

  /** LOG, timestamp 0 as a 4.2.2 client sends it. */
  public ByteBuf log(List<Info> data, List<Info> directives) {
    return write(new LogRequest(data, directives));
  }

  /** ABORT. */
  public ByteBuf abort(Status status, @Nullable String msg, List<Proc> procs) {
    return write(new AbortRequest(status, msg, procs));
  }

  /** SPAWNNB; the caller fills in what C fills in (working directory, argv[0]). */
  public ByteBuf spawn(List<Info> jobInfo, List<Value.App> apps) {
    return write(new SpawnNbRequest(jobInfo, apps));
  }

  /** CONNECTNB or DISCONNECTNB, which share the layout of a fence. */
  public ByteBuf connect(Command cmd, List<Proc> procs, List<Info> directives) {
    switch (cmd) {
      case CONNECTNB:
        return write(new ConnectNbRequest(procs, directives));
      case DISCONNECTNB:
        return write(new DisconnectNbRequest(procs, directives));
      default:
        throw new IllegalArgumentException("not a connect command: " + cmd);
    }
  }

  /** JOB_CONTROL. */
  public ByteBuf jobControl(List<Proc> targets, List<Info> directives) {
    return write(new JobControlRequest(targets, directives));
  }

  /** IOF_PULL. */
  public ByteBuf iofPull(List<Proc> sources, List<Info> directives, int channels, long localId) {
    return write(new IofPullRequest(sources, directives, channels, localId));
  }

  /** IOF_DEREG. */
  public ByteBuf iofDeregister(List<Info> directives, long serverId) {
    return write(new IofDeregRequest(directives, serverId));
  }

  /** IOF_PUSH; null data is the end of input. */
  public ByteBuf iofPush(List<Proc> targets, List<Info> directives, byte @Nullable [] data) {
    return write(new IofPushRequest(targets, directives, data));
  }

  /**
   * The optional info blob at the end of a connect request (field #10 of docs/transport.md §6.2):
   * SIZE n, then INFO[n] as one unit, in this format.
   */
  public byte[] connectInfoBlob(List<Info> infos) {
    ByteBuf b = alloc.heapBuffer();
    try {
      PmixWriter w = new PmixWriter(b, format);
      w.packSize(infos.size());
      if (!infos.isEmpty()) {
        w.packInfos(infos);
      }
      byte[] out = new byte[b.readableBytes()];
      b.readBytes(out);
      return out;
    } finally {
      b.release();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Replies

  /** A reader of a payload in this format. */
  public PmixReader reader(ByteBuf payload) {
    return new PmixReader(payload, format);
  }

  /** A reader of packed bytes in this format. */
  public PmixReader reader(byte[] packed) {
    return new PmixReader(Unpooled.wrappedBuffer(packed), format);
  }

  /** The status every reply but REQ's opens with; see {@link StatusReply#readStatus}. */
  public static Status status(PmixReader r) {
    return StatusReply.readStatus(r);
  }

  /** Throws the reply's status unless it is success. */
  public static void checkStatus(PmixReader r, String what) {
    StatusReply.decode(r).check(what);
  }

  /**
   * The rest of a CONNECTNB (or DISCONNECTNB) reply after its status ({@link ConnectNbReply}):
   * every namespace's job data goes to {@code store}.
   *
   * @return the namespaces whose job data arrived, in order
   */
  @CanIgnoreReturnValue
  public static List<String> connectBlobs(PmixReader r, DataStore store, WireFormat format) {
    List<String> out = new ArrayList<>();
    for (ReqReply j : ConnectNbReply.decode(Status.SUCCESS, r).jobs()) {
      String nspace = j.nspace();
      if (nspace == null) {
        throw new PmixException(Status.ERR_BAD_PARAM, "connect reply blob without a namespace");
      }
      store.ingestJobData(nspace, new PmixReader(Unpooled.wrappedBuffer(j.jobData()), format));
      out.add(nspace);
    }
    return out;
  }

  /** LOOKUPNB reply after its status: SIZE n, then PDATA[n] ({@link LookupNbReply}). */
  public static List<Value.PData> lookupData(PmixReader r) {
    return LookupNbReply.decode(Status.SUCCESS, r).data();
  }

  /** QUERY (or JOB_CONTROL) reply after its status: SIZE n, then INFO[n] ({@link QueryReply}). */
  public static List<Info> infoArray(PmixReader r) {
    return QueryReply.decode(Status.SUCCESS, r).info();
  }

  /** The IOF_PULL reply after its status: the server's id ({@link IofPullReply}). */
  public static long iofServerId(PmixReader r) {
    return IofPullReply.decode(Status.SUCCESS, r).serverId();
  }

  /** Forwarded output on tag 2 ({@link IofDelivery}). */
  public static IofDelivery iofChunk(PmixReader r) {
    return IofDelivery.decode(r);
  }
}
