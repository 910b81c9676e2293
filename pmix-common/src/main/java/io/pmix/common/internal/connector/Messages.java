package io.pmix.common.internal.connector;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataRange;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
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
 * <p>Stateless apart from the wire format; thread-safe; the buffers returned
 * are the caller's.
 */
public final class Messages {
  private final WireFormat format;

  /** Messages in {@code format}, written to array-backed buffers (no Netty: see WireBuffer). */
  public Messages(WireFormat format) {
    this.format = format;
  }

  /** The wire format written and read. */
  public WireFormat format() {
    return format;
  }

  /** {@code m} encoded into a fresh buffer, which the caller owns. */
  public WireBuffer write(Message m) {
    WireBuffer b = WireBuffer.allocate();
    m.encode(new PmixWriter(b, format));
    return b;
  }

  /** REQ. */
  public WireBuffer req() {
    return write(ReqRequest.INSTANCE);
  }

  /** FINALIZE. */
  public WireBuffer finalizeRequest() {
    return write(FinalizeRequest.INSTANCE);
  }

  /** COMMIT of what was put LOCAL (or GLOBAL) and REMOTE (or GLOBAL); see {@link CommitRequest#of}. */
  public WireBuffer commit(Map<String, Value> local, Map<String, Value> remote) {
    return write(CommitRequest.of(local, remote));
  }

  /** FENCENB. */
  public WireBuffer fence(List<Proc> procs, List<Info> directives) {
    return write(new FenceNbRequest(procs, directives));
  }

  /** GETNB. */
  public WireBuffer get(Proc proc, List<Info> directives, String key) {
    return write(new GetNbRequest(proc, directives, key));
  }

  /** PUBLISHNB. */
  public WireBuffer publish(int uid, List<Info> info) {
    return write(new PublishNbRequest(uid, info));
  }

  /** LOOKUPNB or UNPUBLISHNB, which share a layout. */
  public WireBuffer keys(Command cmd, int uid, Collection<String> keys, List<Info> directives) {
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
  public WireBuffer notify(Status code, DataRange range, List<Info> info) {
    return write(new NotifyRequest(code, range, info));
  }

  /** REGEVENTS. */
  public WireBuffer registerEvents(List<Status> codes, List<Info> directives) {
    return write(new RegEventsRequest(codes, directives));
  }

  /** DEREGEVENTS. */
  public WireBuffer deregisterEvents(List<Status> codes) {
    return write(new DeregEventsRequest(codes));
  }

  /** QUERY. */
  public WireBuffer query(List<Value.Query> queries) {
    return write(new QueryRequest(queries));
  }

  /** LOG, timestamp 0 as a 4.2.2 client sends it. */
  public WireBuffer log(List<Info> data, List<Info> directives) {
    return write(new LogRequest(data, directives));
  }

  /** ABORT. */
  public WireBuffer abort(Status status, @Nullable String msg, List<Proc> procs) {
    return write(new AbortRequest(status, msg, procs));
  }

  /** SPAWNNB; the caller fills in what C fills in (working directory, argv[0]). */
  public WireBuffer spawn(List<Info> jobInfo, List<Value.App> apps) {
    return write(new SpawnNbRequest(jobInfo, apps));
  }

  /** CONNECTNB or DISCONNECTNB, which share the layout of a fence. */
  public WireBuffer connect(Command cmd, List<Proc> procs, List<Info> directives) {
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
  public WireBuffer jobControl(List<Proc> targets, List<Info> directives) {
    return write(new JobControlRequest(targets, directives));
  }

  /** IOF_PULL. */
  public WireBuffer iofPull(List<Proc> sources, List<Info> directives, int channels, long localId) {
    return write(new IofPullRequest(sources, directives, channels, localId));
  }

  /** IOF_DEREG. */
  public WireBuffer iofDeregister(List<Info> directives, long serverId) {
    return write(new IofDeregRequest(directives, serverId));
  }

  /** IOF_PUSH; null data is the end of input. */
  public WireBuffer iofPush(List<Proc> targets, List<Info> directives, byte @Nullable [] data) {
    return write(new IofPushRequest(targets, directives, data));
  }

  /**
   * The optional info blob at the end of a connect request (field #10 of docs/transport.md §6.2):
   * SIZE n, then INFO[n] as one unit, in this format.
   */
  public byte[] connectInfoBlob(List<Info> infos) {
    WireBuffer b = WireBuffer.allocate();
    PmixWriter w = new PmixWriter(b, format);
    w.packSize(infos.size());
    if (!infos.isEmpty()) {
      w.packInfos(infos);
    }
    return b.toByteArray();
  }

  // ---------------------------------------------------------------------------------------------
  // Replies

  /** A reader of a payload in this format. */
  public PmixReader reader(WireBuffer payload) {
    return new PmixReader(payload, format);
  }

  /** A reader of packed bytes in this format. */
  public PmixReader reader(byte[] packed) {
    return new PmixReader(WireBuffer.wrap(packed), format);
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
      store.ingestJobData(nspace, new PmixReader(WireBuffer.wrap(j.jobData()), format));
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
