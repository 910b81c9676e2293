package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.server.HostModule;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * CONNECTNB and DISCONNECTNB in the server core, on embedded channels: the local collective, the
 * host upcall only when a participant is not local (with the fence's two appended infos), the
 * connect reply's per-namespace job-data blobs, a host without the upcall, and trackers that do
 * not merge with fences.
 */
class ServerConnectTest {
  private static final int UID = 0x1234;
  private static final int GID = 0x5678;
  private static final int CONNECTNB = 10;
  private static final int DISCONNECTNB = 11;
  private static final int FENCENB = 3;

  /** Records connect/disconnect upcalls; completes them when told to. */
  private static final class RecordingHost implements HostModule {
    final List<String> calls = new ArrayList<>();
    final List<List<Info>> infos = new ArrayList<>();
    final List<CompletableFuture<Void>> pending = new ArrayList<>();

    @Override
    public CompletionStage<Void> connect(List<Proc> procs, List<Info> info) {
      return record("connect " + procs, info);
    }

    @Override
    public CompletionStage<Void> disconnect(List<Proc> procs, List<Info> info) {
      return record("disconnect " + procs, info);
    }

    private CompletionStage<Void> record(String call, List<Info> info) {
      calls.add(call);
      infos.add(info);
      CompletableFuture<Void> f = new CompletableFuture<>();
      pending.add(f);
      return f;
    }
  }

  private EmbeddedCore fx;
  private EmbeddedChannel loopOwner;
  private ServerCore core;

  private void start(HostModule host) {
    fx = new EmbeddedCore(host, EmbeddedCore.options().build(), true, UID, GID);
    loopOwner = fx.loopOwner;
    core = fx.core;
  }

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  /** A namespace of {@code size} procs, all on this node. */
  private void registerLocal(String nspace, int size) {
    fx.registerLocal(nspace, size);
  }

  private EmbeddedChannel client(String nspace, int rank) {
    EmbeddedChannel ch = fx.connectClient(nspace, rank);
    ByteBuf reply = ch.readOutbound();
    reply.release();
    return ch;
  }

  /** docs/commands.md §9.1's "testjob": ranks 0 and 1 here, 2 and 3 on remotenode. */
  private void registerTwoNodeJob() {
    List<Info> infos =
        List.of(
            Info.of(Keys.NODE_MAP, Value.of("pmix[vm,remotenode]")),
            Info.of(Keys.PROC_MAP, Value.of("raw:0,1;2,3")),
            Info.of(Keys.JOB_SIZE, Value.uint32(4)));
    assertEquals(Status.SUCCESS, core.registerNspace("testjob", 2, infos));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("testjob", 0), UID, GID, null));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("testjob", 1), UID, GID, null));
  }

  private static ByteBuf request(int tag, int cmd, List<Proc> procs, List<Info> info) {
    return EmbeddedCore.command(
        tag,
        cmd,
        w -> {
          w.packSize(procs.size());
          w.pack(DataType.PROC, procs);
          w.packSize(info.size());
          if (!info.isEmpty()) {
            w.packInfos(info);
          }
        });
  }

  /** The reply on {@code tag}, once the tasks host completions queued on the loop have run. */
  private PmixReader reply(EmbeddedChannel ch, int tag) {
    loopOwner.runPendingTasks();
    ByteBuf out = ch.readOutbound();
    assertTrue(out != null, "no reply");
    try {
      assertEquals(0, out.readInt());
      assertEquals(tag, out.readInt());
      out.skipBytes(8);
      return new PmixReader(Unpooled.wrappedBuffer(ByteBufUtil.getBytes(out)));
    } finally {
      out.release();
    }
  }

  @Test
  void allLocalConnectCompletesWithoutTheHostAndCarriesTheOtherNamespacesJobData() {
    RecordingHost host = new RecordingHost();
    start(host);
    registerLocal("a", 1);
    registerLocal("b", 2);
    EmbeddedChannel a0 = client("a", 0);
    EmbeddedChannel b0 = client("b", 0);
    EmbeddedChannel b1 = client("b", 1);
    List<Proc> procs = List.of(Proc.wildcard("b"), Proc.wildcard("a"));
    a0.writeInbound(request(101, CONNECTNB, procs, List.of()));
    b0.writeInbound(request(102, CONNECTNB, procs, List.of()));
    assertNull(a0.readOutbound());
    assertEquals(1, core.activeFences());
    b1.writeInbound(request(103, CONNECTNB, List.of(Proc.wildcard("a"), Proc.wildcard("b")),
        List.of()));
    assertEquals(List.of(), host.calls);
    assertEquals(0, core.activeFences());

    // a:0 gets b's job data; b:0 and b:1 get a's.
    PmixReader r = reply(a0, 101);
    assertEquals(Status.SUCCESS, r.unpackStatus());
    assertEquals(2, blobJobSize(r, "b"));
    assertFalse(r.hasRemaining());
    for (int i = 0; i < 2; i++) {
      EmbeddedChannel ch = i == 0 ? b0 : b1;
      r = reply(ch, 102 + i);
      assertEquals(Status.SUCCESS, r.unpackStatus());
      assertEquals(1, blobJobSize(r, "a"));
      assertFalse(r.hasRemaining());
    }

    // Disconnect: a status only.
    a0.writeInbound(request(104, DISCONNECTNB, procs, List.of()));
    b0.writeInbound(request(105, DISCONNECTNB, procs, List.of()));
    b1.writeInbound(request(106, DISCONNECTNB, procs, List.of()));
    List<EmbeddedChannel> leavers = List.of(a0, b0, b1);
    for (int i = 0; i < leavers.size(); i++) {
      EmbeddedChannel ch = leavers.get(i);
      r = reply(ch, 104 + i);
      assertEquals(Status.SUCCESS, r.unpackStatus());
      assertFalse(r.hasRemaining());
    }
  }

  /** Reads one BYTE_OBJECT blob: asserts its namespace, returns its pmix.job.size. */
  private static int blobJobSize(PmixReader r, String nspace) {
    byte[] blob = r.unpackOne(DataType.BYTE_OBJECT).asBytes();
    PmixReader b = new PmixReader(Unpooled.wrappedBuffer(blob));
    assertEquals(nspace, b.unpackString());
    int size = -1;
    while (b.hasRemaining()) {
      Value.KVal kv = (Value.KVal) b.unpackOne(DataType.KVAL);
      if ("pmix.job.size".equals(kv.key())) {
        size = kv.value().asInt();
      }
    }
    return size;
  }

  @Test
  void aConnectWithRemoteParticipantsGoesToTheHostOnceAllLocalOnesArrived() {
    RecordingHost host = new RecordingHost();
    start(host);
    registerTwoNodeJob();
    EmbeddedChannel r0 = client("testjob", 0);
    EmbeddedChannel r1 = client("testjob", 1);
    List<Proc> procs = List.of(Proc.wildcard("testjob"));
    List<Info> info = List.of(Info.of("my.directive", Value.of("x")));
    r0.writeInbound(request(101, CONNECTNB, procs, info));
    assertEquals(List.of(), host.calls);
    r1.writeInbound(request(102, CONNECTNB, procs, List.of()));
    assertEquals(List.of("connect " + List.of(Proc.wildcard("testjob"))), host.calls);
    List<Info> got = host.infos.get(0);
    assertEquals(3, got.size(), got::toString);
    assertEquals("my.directive", got.get(0).key());
    assertEquals(Keys.SORTED_PROC_ARRAY.name(), got.get(1).key());
    assertEquals(Keys.LOCAL_COLLECTIVE_STATUS.name(), got.get(2).key());
    assertEquals(Value.status(Status.SUCCESS), got.get(2).value());
    assertNull(r0.readOutbound());
    // The host's failure is what both callers get.
    host.pending.get(0).completeExceptionally(
        new io.pmix.common.PmixException(Status.ERR_TIMEOUT, "host says"));
    assertEquals(Status.ERR_TIMEOUT, reply(r0, 101).unpackStatus());
    assertEquals(Status.ERR_TIMEOUT, reply(r1, 102).unpackStatus());
    assertEquals(0, core.activeFences());

    // A fence over the same procs is another collective: it does not join a connect.
    r0.writeInbound(request(103, DISCONNECTNB, procs, List.of()));
    r1.writeInbound(request(104, FENCENB, procs, List.of()));
    assertEquals(2, core.activeFences());
    r1.writeInbound(request(105, DISCONNECTNB, procs, List.of()));
    assertEquals(2, host.calls.size());
    assertTrue(host.calls.get(1).startsWith("disconnect "), host.calls::toString);
    host.pending.get(1).complete(null);
    assertEquals(Status.SUCCESS, reply(r0, 103).unpackStatus());
    assertEquals(Status.SUCCESS, reply(r1, 105).unpackStatus());
  }

  @Test
  void aHostWithoutTheUpcallFailsEveryLocalCallerWithNotSupported() {
    start(new HostModule() {});
    registerTwoNodeJob();
    EmbeddedChannel r0 = client("testjob", 0);
    EmbeddedChannel r1 = client("testjob", 1);
    List<Proc> procs = List.of(Proc.wildcard("testjob"));
    r0.writeInbound(request(101, CONNECTNB, procs, List.of()));
    r1.writeInbound(request(102, CONNECTNB, procs, List.of()));
    assertEquals(Status.ERR_NOT_SUPPORTED, reply(r0, 101).unpackStatus());
    assertEquals(Status.ERR_NOT_SUPPORTED, reply(r1, 102).unpackStatus());
    // No procs at all: BAD_PARAM, as in C.
    r0.writeInbound(request(103, CONNECTNB, List.of(), List.of()));
    assertEquals(Status.ERR_BAD_PARAM, reply(r0, 103).unpackStatus());
    assertEquals(0, core.activeFences());
  }

  @Test
  void aConnectWhoseParticipantDiesCompletesWithPartialSuccess() {
    start(new RecordingHost());
    registerLocal("three", 3);
    EmbeddedChannel[] ch = new EmbeddedChannel[3];
    for (int r = 0; r < 3; r++) {
      ch[r] = client("three", r);
    }
    List<Proc> procs = List.of(Proc.wildcard("three"));
    ch[1].writeInbound(request(110, CONNECTNB, procs, List.of()));
    ch[2].writeInbound(request(111, CONNECTNB, procs, List.of()));
    io.netty.channel.ChannelFuture unused = ch[0].close();
    assertEquals(Status.ERR_PARTIAL_SUCCESS, reply(ch[1], 110).unpackStatus());
    assertEquals(Status.ERR_PARTIAL_SUCCESS, reply(ch[2], 111).unpackStatus());
    assertEquals(0, core.activeFences());
  }

}
