package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.HostModule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * QUERY answered by the server core: namespaces byte for byte as a 4.2.2 server's host answered
 * {@code pps} (docs/transport.md §11.10, observed), namespace info, job size, process tables with
 * pids and states, attribute support for {@code pattrs}, and the split between what the server
 * answers and what goes to the host's {@code query}.
 */
class QueryResponderTest {
  private static final int UID = Rendezvous.effectiveIds()[0];
  private static final int GID = Rendezvous.effectiveIds()[1];

  private EmbeddedCore fx;
  private EmbeddedChannel loopOwner;
  private ServerCore core;
  private final List<List<Value.Query>> hostQueries = new ArrayList<>();

  private void start(HostModule host) {
    fx = new EmbeddedCore(host, EmbeddedCore.options().toolSupport(true).build(), false, UID, GID);
    loopOwner = fx.loopOwner;
    core = fx.core;
  }

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  private EmbeddedChannel channel() {
    return fx.channel();
  }

  private static void drain(EmbeddedChannel ch) {
    EmbeddedCore.drain(ch);
  }

  /** A connected client of {@code nspace:rank}. */
  private EmbeddedChannel client(String nspace, int rank) {
    EmbeddedChannel ch = fx.connectClient(nspace, rank);
    loopOwner.runPendingTasks();
    drain(ch);
    return ch;
  }

  private void registerJob(String nspace, int n) {
    fx.registerLocal(nspace, n);
  }

  /** A connected tool (the server assigns its identity). */
  @CanIgnoreReturnValue
  private EmbeddedChannel tool() {
    EmbeddedChannel ch = channel();
    ConnectRequest r =
        ConnectRequest.builder()
            .security("native", new NativeCredential(UID, GID).toBytes())
            .kind(ConnectorKind.TOOL_NEEDS_ID)
            .ids(UID, GID)
            .version("4.2.2rc2")
            .padPresent(true)
            .build();
    assertFalse(ch.writeInbound(ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, r)));
    loopOwner.runPendingTasks();
    drain(ch);
    assertTrue(ch.isActive());
    return ch;
  }

  /** Sends a QUERY on tag 103 and returns the reply payload. */
  private byte[] query(EmbeddedChannel ch, Value.Query... qs) {
    ByteBuf payload = Unpooled.buffer();
    PmixWriter w = new PmixWriter(payload);
    w.packByteEnum(DataType.COMMAND, 15);
    w.packSize(qs.length);
    w.pack(DataType.QUERY, List.of(qs));
    ByteBuf f = Unpooled.buffer();
    f.writeInt(0).writeInt(103).writeInt(payload.readableBytes()).writeInt(0).writeBytes(payload);
    payload.release();
    ch.writeInbound(f);
    loopOwner.runPendingTasks();
    ByteBuf out = ch.readOutbound();
    assertTrue(out != null, "no reply");
    try {
      out.skipBytes(4);
      assertEquals(103, out.readInt());
      out.skipBytes(8);
      return ByteBufUtil.getBytes(out);
    } finally {
      out.release();
    }
  }

  private record Reply(Status status, List<Info> info) {
    Info get(String key) {
      return info.stream().filter(i -> i.key().equals(key)).findFirst().orElseThrow();
    }
  }

  private static Reply decode(byte[] payload) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(payload));
    Status s = r.unpackStatus();
    if (!s.isSuccess()) {
      assertFalse(r.hasRemaining());
      return new Reply(s, List.of());
    }
    long n = r.unpackSize();
    List<Info> info = n > 0 ? r.unpackInfos((int) n) : List.of();
    assertFalse(r.hasRemaining());
    return new Reply(s, info);
  }

  private static Value.Query q(String key, Info... qualifiers) {
    return new Value.Query(List.of(key), List.of(qualifiers));
  }

  @Test
  void namespacesAsPpsSawThemFromA422Server() {
    start(new HostModule() {});
    registerJob("cjob", 2);
    // docs/transport.md §11.10 / the observed reply of the C host: 26 bytes.
    byte[] expected =
        ByteBufUtil.decodeHexDump("0200" + "0201" + "02" + "18706d69782e7172792e6e7300" + "00" + "03" + "0a636a6f6200");
    assertArrayEquals(expected, query(tool(), q("pmix.qry.ns")));
  }

  @Test
  void toolNamespacesAreNotJobs() {
    start(new HostModule() {});
    registerJob("a", 1);
    registerJob("b", 1);
    EmbeddedChannel t = tool();
    tool();
    assertEquals(Value.of("a,b"), decode(query(t, q("pmix.qry.ns"))).get("pmix.qry.ns").value());
  }

  @Test
  void jobSizeAndNamespaceInfo() {
    start(new HostModule() {});
    registerJob("job", 3);
    EmbeddedChannel t = tool();
    Reply r =
        decode(
            query(
                t,
                q("pmix.job.size", Info.of(Keys.NSPACE, Value.of("job"))),
                q("pmix.qry.nsinfo")));
    assertEquals(Value.uint32(3), r.get("pmix.job.size").value());
    DataArray jobs = (DataArray) r.get("pmix.qry.nsinfo").value();
    assertEquals(1, jobs.items().size());
    Info job = (Info) jobs.items().get(0);
    assertEquals("pmix.job.arr", job.key());
    List<Value> fields = ((DataArray) job.value()).items();
    assertEquals(Info.of(Keys.NSPACE, Value.of("job")), fields.get(0));
    assertEquals(Info.of(Keys.JOB_SIZE, Value.uint32(3)), fields.get(1));
    long procs = fields.stream().filter(v -> ((Info) v).key().equals("pmix.pdata")).count();
    assertEquals(3, procs);
  }

  @Test
  void procTableShowsPidsHostsAndStates() {
    start(new HostModule() {});
    registerJob("job", 3);
    EmbeddedChannel c0 = client("job", 0);
    int me = (int) ProcessHandle.current().pid();
    assertEquals(Status.SUCCESS, core.setProcInfo(Proc.of("job", 0), 4242, "/bin/app"));
    assertEquals(Status.SUCCESS, core.setProcInfo(Proc.of("job", 1), me, "/bin/app"));
    assertEquals(Status.ERR_NOT_FOUND, core.setProcInfo(Proc.of("job", 9), 1, null));
    Reply r = decode(query(tool(), q("pmix.qry.ptable", Info.of(Keys.NSPACE, Value.of("job")))));
    List<Value> rows = ((DataArray) r.get("pmix.qry.ptable").value()).items();
    assertEquals(3, rows.size());
    Value.ProcInfo p0 = (Value.ProcInfo) rows.get(0);
    assertEquals(Proc.of("job", 0), p0.proc());
    assertEquals("vm", p0.hostname());
    assertEquals("/bin/app", p0.executableName());
    assertEquals(4242, p0.pid());
    assertEquals(QueryResponder.STATE_CONNECTED, p0.state());
    Value.ProcInfo p1 = (Value.ProcInfo) rows.get(1);
    assertEquals(me, p1.pid());
    assertEquals(QueryResponder.STATE_RUNNING, p1.state()); // alive, not connected
    Value.ProcInfo p2 = (Value.ProcInfo) rows.get(2);
    assertEquals(0, p2.pid());
    assertEquals(QueryResponder.STATE_UNDEF, p2.state());
    assertTrue(c0.isActive());
  }

  @Test
  void procTableOfTheRequestersOwnJobWithoutQualifier() {
    start(new HostModule() {});
    registerJob("job", 2);
    Reply r = decode(query(client("job", 1), q("pmix.qry.lptable")));
    assertEquals(2, ((DataArray) r.get("pmix.qry.lptable").value()).items().size());
  }

  @Test
  void unknownKeysGoToTheHostAndAnswersAreMerged() {
    start(
        new HostModule() {
          @Override
          public CompletionStage<List<Info>> query(Proc requester, List<Value.Query> queries) {
            hostQueries.add(queries);
            return CompletableFuture.completedFuture(List.of(Info.of("my.key", Value.of("host"))));
          }
        });
    registerJob("job", 1);
    Reply r =
        decode(
            query(
                tool(),
                new Value.Query(List.of("pmix.qry.ns", "my.key"), List.of()),
                q("pmix.job.size", Info.of(Keys.NSPACE, Value.of("elsewhere")))));
    assertEquals(Status.SUCCESS, r.status());
    assertEquals(Value.of("job"), r.get("pmix.qry.ns").value());
    assertEquals(Value.of("host"), r.get("my.key").value());
    // The host saw only what the server could not answer.
    assertEquals(
        List.of(
            new Value.Query(List.of("my.key"), List.of()),
            q("pmix.job.size", Info.of(Keys.NSPACE, Value.of("elsewhere")))),
        hostQueries.get(0));
  }

  @Test
  void aHostFailureIsTheStatusOnlyWhenTheServerAnsweredNothing() {
    Function<Status, HostModule> failing =
        s ->
            new HostModule() {
              @Override
              public CompletionStage<List<Info>> query(Proc r, List<Value.Query> q) {
                return CompletableFuture.failedFuture(new PmixException(s, "no"));
              }
            };
    start(failing.apply(Status.ERR_NOT_FOUND));
    registerJob("job", 1);
    EmbeddedChannel t = tool();
    assertEquals(Status.ERR_NOT_FOUND, decode(query(t, q("other.key"))).status());
    Reply partial = decode(query(t, new Value.Query(List.of("pmix.qry.ns", "other.key"), List.of())));
    assertEquals(Status.SUCCESS, partial.status());
    assertEquals(1, partial.info().size());
  }

  @Test
  void attributeSupportForPattrs() {
    start(
        new HostModule() {
          @Override
          public CompletionStage<Void> publish(Proc proc, List<Info> info) {
            return CompletableFuture.completedFuture(null);
          }
        });
    EmbeddedChannel t = tool();
    // pattrs --host-fns
    Reply fns = decode(query(t, q("pmix.qry.attrs", Info.of("pmix.host.fns", true))));
    String list = fns.get("pmix.host.fns").value().asString();
    assertTrue(list.contains("PMIx_Publish"), list);
    assertFalse(list.contains("PMIx_Spawn"), list);
    // pattrs --host PMIx_Publish
    Reply pub =
        decode(query(t, q("pmix.qry.attrs", Info.of("pmix.host.attrs", Value.of("PMIx_Publish")))));
    assertEquals(1, pub.info().size());
    Info fn = (Info) ((DataArray) pub.get("pmix.qry.attrs").value()).items().get(0);
    assertEquals("PMIx_Publish", fn.key());
    List<Value> attrs = ((DataArray) fn.value()).items();
    Value.RegAttr replace =
        attrs.stream()
            .map(v -> (Value.RegAttr) v)
            .filter(a -> "prte.pub.replace".equals(a.string()))
            .findFirst()
            .orElseThrow();
    // Zigzag on the wire, so C's sv16 decoding yields BOOL (docs/codec.md §7).
    assertEquals(2 * DataType.BOOL.code(), replace.dataType());
    for (Value v : attrs) {
      for (String line : ((Value.RegAttr) v).description()) {
        assertTrue(line.length() <= Attributes.DESCRIPTION_WIDTH, line);
      }
    }
    // The host's own registration replaces the default; "all" gives one info per function.
    assertEquals(
        Status.SUCCESS,
        core.registerAttributes(
            "PMIx_Publish",
            List.of(new Value.RegAttr("X", "x.key", DataType.STRING.code(), List.of("mine")))));
    Reply all = decode(query(t, q("pmix.qry.attrs", Info.of("pmix.host.attrs", Value.of("all")))));
    Map<String, Integer> counts = new java.util.LinkedHashMap<>();
    for (Info i : all.info()) {
      assertEquals("pmix.qry.attrs", i.key());
      List<Value> one = ((DataArray) i.value()).items();
      assertEquals(1, one.size());
      Info f = (Info) one.get(0);
      counts.put(f.key(), ((DataArray) f.value()).items().size());
    }
    assertEquals(1, counts.get("PMIx_Publish"));
    assertTrue(counts.containsKey("PMIx_Query_info"), counts.toString());
  }

  @Test
  void spawnSupportIsEmptyWhenTheHostCannotSpawn() {
    start(new HostModule() {});
    Reply r = decode(query(tool(), q("pmix.qry.spawn")));
    assertEquals(Value.of(""), r.get("pmix.qry.spawn").value());
  }
}
