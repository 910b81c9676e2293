package io.pmix.common.internal.connector;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The bodies of the requests a client or tool sends and the decoding of the replies it gets, unit
 * by unit as commands.md sections 3, 4 and 9 lay them out for OpenPMIx 4.2.2. Every request opens
 * with its COMMAND unit; an array the C code packs with one call is one unit, and a list of keys
 * packed one call per key is one unit per key.
 *
 * <p>Stateless apart from the wire format; thread-safe; buffers returned are owned by the caller.
 */
public final class Messages {
  /** Inner reads of a reply may need many items; the codec bounds allocation by input size. */
  private static final int MANY = Integer.MAX_VALUE;

  private final WireFormat format;
  private final ByteBufAllocator alloc;

  /** Messages in {@code format}, allocated from {@code alloc}. */
  public Messages(WireFormat format, ByteBufAllocator alloc) {
    this.format = format;
    this.alloc = alloc;
  }

  public WireFormat format() {
    return format;
  }

  private PmixWriter start(Command cmd) {
    PmixWriter w = new PmixWriter(alloc.buffer(), format);
    w.packByteEnum(DataType.COMMAND, cmd.code());
    return w;
  }

  /** Packs a size and, when non-empty, the infos as one unit. */
  private static void infos(PmixWriter w, List<Info> infos) {
    w.packSize(infos.size());
    if (!infos.isEmpty()) {
      w.packInfos(infos);
    }
  }

  public ByteBuf req() {
    return start(Command.REQ).buffer();
  }

  public ByteBuf finalizeRequest() {
    return start(Command.FINALIZE).buffer();
  }

  /**
   * COMMIT: a LOCAL section with every key put LOCAL or GLOBAL since the last commit, then a
   * REMOTE section with every key put REMOTE or GLOBAL; an empty section is left out.
   */
  public ByteBuf commit(Map<String, Value> local, Map<String, Value> remote) {
    PmixWriter w = start(Command.COMMIT);
    section(w, Scope.LOCAL, local);
    section(w, Scope.REMOTE, remote);
    return w.buffer();
  }

  private void section(PmixWriter w, Scope scope, Map<String, Value> kvs) {
    if (kvs.isEmpty()) {
      return;
    }
    ByteBuf inner = alloc.heapBuffer();
    try {
      PmixWriter iw = new PmixWriter(inner, format);
      for (Map.Entry<String, Value> e : kvs.entrySet()) {
        iw.pack(new Value.KVal(e.getKey(), e.getValue()));
      }
      byte[] bytes = new byte[inner.readableBytes()];
      inner.readBytes(bytes);
      w.packByteEnum(DataType.SCOPE, scope.code());
      w.pack(new Value.Buffer(format.bufferType().code(), bytes));
    } finally {
      inner.release();
    }
  }

  public ByteBuf fence(List<Proc> procs, List<Info> directives) {
    PmixWriter w = start(Command.FENCENB);
    w.packSize(procs.size());
    w.pack(DataType.PROC, procs);
    infos(w, directives);
    return w.buffer();
  }

  public ByteBuf get(Proc proc, List<Info> directives, String key) {
    PmixWriter w = start(Command.GETNB);
    w.packString(proc.nspace());
    w.packRank(proc.rank());
    infos(w, directives);
    w.packString(key);
    return w.buffer();
  }

  public ByteBuf publish(int uid, List<Info> info) {
    PmixWriter w = start(Command.PUBLISHNB);
    w.packUInt32(uid);
    infos(w, info);
    return w.buffer();
  }

  /** LOOKUPNB and UNPUBLISHNB share a layout: uid, key count, one unit per key, directives. */
  public ByteBuf keys(Command cmd, int uid, Collection<String> keys, List<Info> directives) {
    PmixWriter w = start(cmd);
    w.packUInt32(uid);
    w.packSize(keys.size());
    for (String k : keys) {
      w.packString(k);
    }
    infos(w, directives);
    return w.buffer();
  }

  public ByteBuf notify(Status code, DataRange range, List<Info> info) {
    PmixWriter w = start(Command.NOTIFY);
    w.packStatus(code);
    w.packByteEnum(DataType.DATA_RANGE, range.code());
    infos(w, info);
    return w.buffer();
  }

  public ByteBuf registerEvents(List<Status> codes, List<Info> directives) {
    PmixWriter w = start(Command.REGEVENTS);
    w.packSize(codes.size());
    if (!codes.isEmpty()) {
      List<Value> v = new ArrayList<>();
      for (Status s : codes) {
        v.add(Value.status(s));
      }
      w.pack(DataType.STATUS, v);
    }
    infos(w, directives);
    return w.buffer();
  }

  public ByteBuf deregisterEvents(List<Status> codes) {
    PmixWriter w = start(Command.DEREGEVENTS);
    for (Status s : codes) {
      w.packStatus(s);
    }
    return w.buffer();
  }

  public ByteBuf query(List<Value.Query> queries) {
    PmixWriter w = start(Command.QUERY);
    w.packSize(queries.size());
    if (!queries.isEmpty()) {
      w.pack(DataType.QUERY, queries);
    }
    return w.buffer();
  }

  public ByteBuf log(List<Info> data, List<Info> directives) {
    PmixWriter w = start(Command.LOG);
    w.pack(Value.signed(DataType.TIME, 0));
    w.packSize(data.size());
    if (!data.isEmpty()) {
      w.packInfos(data);
    }
    infos(w, directives);
    return w.buffer();
  }

  public ByteBuf abort(Status status, @Nullable String msg, List<Proc> procs) {
    PmixWriter w = start(Command.ABORT);
    w.packStatus(status);
    w.packString(msg);
    w.packSize(procs.size());
    if (!procs.isEmpty()) {
      w.pack(DataType.PROC, procs);
    }
    return w.buffer();
  }

  /** Packs a size and, when non-empty, the procs as one unit. */
  private static void procs(PmixWriter w, List<Proc> procs) {
    w.packSize(procs.size());
    if (!procs.isEmpty()) {
      w.pack(DataType.PROC, procs);
    }
  }

  /**
   * SPAWNNB: SIZE ninfo, [INFO[ninfo] job info], SIZE napps, [APP[napps]] (commands.md section 4,
   * capture in 9.10). The caller fills in what C fills in (working directory, argv[0]).
   */
  public ByteBuf spawn(List<Info> jobInfo, List<Value.App> apps) {
    PmixWriter w = start(Command.SPAWNNB);
    infos(w, jobInfo);
    w.packSize(apps.size());
    if (!apps.isEmpty()) {
      w.pack(DataType.APP, apps);
    }
    return w.buffer();
  }

  /**
   * CONNECTNB or DISCONNECTNB (the same layout, that of a fence): SIZE nprocs, PROC[nprocs],
   * SIZE ninfo, [INFO[ninfo]] (commands.md section 4; {@code pmix_client_connect.c} at v4.2.2).
   */
  public ByteBuf connect(Command cmd, List<Proc> procs, List<Info> directives) {
    if (cmd != Command.CONNECTNB && cmd != Command.DISCONNECTNB) {
      throw new IllegalArgumentException("not a connect command: " + cmd);
    }
    PmixWriter w = start(cmd);
    w.packSize(procs.size());
    w.pack(DataType.PROC, procs);
    infos(w, directives);
    return w.buffer();
  }

  /** JOB_CONTROL: SIZE ntargets, [PROC[ntargets]], SIZE ndirs, [INFO[ndirs]] (capture 9.2). */
  public ByteBuf jobControl(List<Proc> targets, List<Info> directives) {
    PmixWriter w = start(Command.JOB_CONTROL);
    procs(w, targets);
    infos(w, directives);
    return w.buffer();
  }

  /**
   * IOF_PULL: SIZE nprocs, PROC[nprocs] sources, SIZE ndirs, [INFO[ndirs]], IOF_CHANNEL channels,
   * SIZE localId (the requester's handler id, which the server quotes in every push on tag 2).
   */
  public ByteBuf iofPull(List<Proc> sources, List<Info> directives, int channels, long localId) {
    PmixWriter w = start(Command.IOF_PULL);
    procs(w, sources);
    infos(w, directives);
    w.pack(Value.unsigned(DataType.IOF_CHANNEL, channels));
    w.packSize(localId);
    return w.buffer();
  }

  /** IOF_DEREG: SIZE ndirs, [INFO[ndirs]], SIZE serverId (from the IOF_PULL reply). */
  public ByteBuf iofDeregister(List<Info> directives, long serverId) {
    PmixWriter w = start(Command.IOF_DEREG);
    infos(w, directives);
    w.packSize(serverId);
    return w.buffer();
  }

  /**
   * IOF_PUSH (stdin for the targets): SIZE ntargets, [PROC[ntargets]], SIZE ndirs, [INFO[ndirs]],
   * then the data as a BYTE_OBJECT unit, absent for end of input.
   */
  public ByteBuf iofPush(List<Proc> targets, List<Info> directives, byte @Nullable [] data) {
    PmixWriter w = start(Command.IOF_PUSH);
    procs(w, targets);
    infos(w, directives);
    if (data != null) {
      w.pack(Value.of(data));
    }
    return w.buffer();
  }

  /**
   * The optional info blob at the end of a connect request (field #10 of transport.md section
   * 6.2): SIZE n, then INFO[n] as one unit, in this format.
   */
  public byte[] connectInfoBlob(List<Info> infos) {
    ByteBuf b = alloc.heapBuffer();
    try {
      PmixWriter w = new PmixWriter(b, format);
      infos(w, infos);
      byte[] out = new byte[b.readableBytes()];
      b.readBytes(out);
      return out;
    } finally {
      b.release();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Replies

  public PmixReader reader(ByteBuf payload) {
    return new PmixReader(payload, format);
  }

  /**
   * The status every reply but REQ's opens with; an empty reply counts as a lost connection (C
   * completes outstanding requests with an empty buffer when the server goes away).
   */
  public static Status status(PmixReader r) {
    if (!r.hasRemaining()) {
      throw new PmixException(Status.ERR_LOST_CONNECTION, "empty reply");
    }
    return r.unpackStatus();
  }

  /** Throws the reply's status unless it is success. */
  public static void checkStatus(PmixReader r, String what) {
    Status s = status(r);
    if (!s.isSuccess()) {
      throw new PmixException(s, what);
    }
  }

  /**
   * The rest of a CONNECTNB (or DISCONNECTNB) reply after its status: BYTE_OBJECT units until the
   * end, each holding a STRING namespace and that namespace's job data as KVAL units (the stream
   * of a REQ reply). Every blob goes to {@code store}. C reads them whatever the status was, so
   * this does too; a server that sends none (DISCONNECTNB, or a failure) is fine.
   *
   * @return the namespaces whose job data arrived, in order
   */
  @CanIgnoreReturnValue
  public static List<String> connectBlobs(PmixReader r, DataStore store, WireFormat format) {
    List<String> out = new ArrayList<>();
    while (r.hasRemaining()) {
      byte[] blob = r.unpackOne(DataType.BYTE_OBJECT).asBytes();
      PmixReader br = new PmixReader(Unpooled.wrappedBuffer(blob), format);
      String nspace = br.unpackString();
      if (nspace == null || nspace.isEmpty()) {
        throw new PmixException(Status.ERR_BAD_PARAM, "connect reply blob without a namespace");
      }
      store.ingestJobData(nspace, br);
      out.add(nspace);
    }
    return out;
  }

  /** LOOKUPNB reply after its status: SIZE n, then PDATA[n]. */
  public static List<Value.PData> lookupData(PmixReader r) {
    List<Value.PData> out = new ArrayList<>();
    if (!r.hasRemaining()) {
      return out;
    }
    long n = r.unpackSize();
    if (n > 0) {
      for (Value v : r.unpack(DataType.PDATA, MANY)) {
        out.add((Value.PData) v);
      }
    }
    return out;
  }

  /** QUERY reply after its status: SIZE n, then INFO[n]. */
  public static List<Info> infoArray(PmixReader r) {
    if (!r.hasRemaining()) {
      return List.of();
    }
    long n = r.unpackSize();
    return n == 0 ? List.of() : r.unpackInfos(MANY);
  }

  /**
   * The IOF_PULL reply after its status: SIZE serverId, the server's index of the registration, to
   * be quoted in IOF_DEREG.
   */
  public static long iofServerId(PmixReader r) {
    if (!r.hasRemaining()) {
      throw new PmixException(Status.ERR_UNPACK_FAILURE, "IOF_PULL reply without a reference id");
    }
    return r.unpackSize();
  }

  /**
   * Forwarded output on tag 2: PROC source, IOF_CHANNEL channel, SIZE localId (the requester's id
   * from its IOF_PULL), SIZE ninfo, [INFO[ninfo]], BYTE_OBJECT data (commands.md section 4 and
   * capture 9.2); no COMMAND unit. A push without data (end of a stream) has no byte object.
   */
  public static IofChunk iofChunk(PmixReader r) {
    Proc source = r.unpackProc();
    int channel = (int) ((Value.UInt) r.unpackOne(DataType.IOF_CHANNEL)).value();
    long id = r.unpackSize();
    List<Info> info = List.of();
    if (r.hasRemaining()) {
      long n = r.unpackSize();
      if (n > 0) {
        info = r.unpackInfos(MANY);
      }
    }
    byte[] data = new byte[0];
    if (r.hasRemaining()) {
      data = r.unpackOne(DataType.BYTE_OBJECT).asBytes();
    }
    return new IofChunk(source, channel, id, info, data);
  }
}
