package io.pmix.server.internal;

import static io.pmix.server.internal.EmbeddedCore.command;
import static io.pmix.server.internal.EmbeddedCore.frame;
import static io.pmix.server.internal.EmbeddedCore.readFrame;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import io.pmix.server.ServerSnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server core behind real pipelines on {@link EmbeddedChannel}s: handshake decisions, the REQ
 * reply against the worked example of docs/commands.md §9.1, commands, errors, waits and the
 * finalize lifecycle.
 */
class ServerCoreTest {
  private static final int UID = 0x1234;
  private static final int GID = 0x5678;

  /** Owns the core's "progress thread": embedded loops always report being in the loop. */
  private EmbeddedChannel loopOwner;
  private ServerCore core;
  private EmbeddedCore fx;

  @BeforeEach
  void setUp() {
    fx = new EmbeddedCore(new HostModule() {}, EmbeddedCore.options().build(), true, UID, GID);
    loopOwner = fx.loopOwner;
    core = fx.core;
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  /** The "min" registration of docs/commands.md §9.1: two nodes, ranks 0 and 1 local. */
  private void registerTestjob() {
    List<Info> infos =
        List.of(
            Info.of(Keys.NODE_MAP, Value.of("pmix[vm,remotenode]")),
            Info.of(Keys.PROC_MAP, Value.of("raw:0,1;2,3")),
            Info.of(Keys.JOB_SIZE, Value.uint32(4)),
            Info.of(Keys.UNIV_SIZE, Value.uint32(4)));
    assertEquals(Status.SUCCESS, core.registerNspace("testjob", 2, infos));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("testjob", 0), UID, GID, null));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("testjob", 1), UID, GID, null));
  }

  private EmbeddedChannel newChannel() {
    return fx.channel();
  }

  private static ConnectRequest clientRequest(String nspace, int rank, int uid, int gid) {
    return ConnectRequest.builder()
        .security("native", new NativeCredential(uid, gid).toBytes())
        .kind(ConnectorKind.SIMPLE_CLIENT)
        .procId(nspace, rank)
        .version("4.2.2rc2")
        .padPresent(true)
        .build();
  }

  private static ByteBuf encode(ConnectRequest req) {
    return ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req);
  }

  /** Connects as {@code nspace:rank}; returns the index the server assigned. */
  @CanIgnoreReturnValue
  private int connect(EmbeddedChannel ch, String nspace, int rank) {
    assertFalse(ch.writeInbound(encode(clientRequest(nspace, rank, UID, GID))));
    ByteBuf reply = ch.readOutbound();
    try {
      assertEquals(8, reply.readableBytes());
      assertEquals(0, reply.readInt());
      return reply.readInt();
    } finally {
      reply.release();
    }
  }

  private static Status readStatusReply(EmbeddedChannel ch, int tag) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag)));
    return r.unpackStatus();
  }

  // ---- handshake ----

  @Test
  void acceptsARegisteredClientWithItsSlotIndex() {
    registerTestjob();
    assertEquals(0, connect(newChannel(), "testjob", 0));
    assertEquals(1, connect(newChannel(), "testjob", 1));
    ServerSnapshot s = core.snapshot();
    assertEquals(2, s.peers().size());
    assertEquals(1, s.namespace("testjob").orElseThrow().ranks().get(1).peerIndex());
    assertEquals(1, s.namespace("testjob").orElseThrow().ranks().get(1).procCount());
  }

  @Test
  void acceptsAHandshakeFedByteByByte() {
    registerTestjob();
    EmbeddedChannel ch = newChannel();
    ByteBuf req = encode(clientRequest("testjob", 0, UID, GID));
    while (req.isReadable()) {
      assertFalse(ch.writeInbound(req.readRetainedSlice(1)));
    }
    req.release();
    ByteBuf reply = ch.readOutbound();
    assertEquals(0, reply.readLong());
    reply.release();
  }

  @Test
  void refusesByClosingWithoutAByte() {
    registerTestjob();
    EmbeddedChannel unknownNs = newChannel();
    assertFalse(unknownNs.writeInbound(encode(clientRequest("nosuchjob", 0, UID, GID))));
    assertNull(unknownNs.readOutbound());
    assertFalse(unknownNs.isActive());

    EmbeddedChannel unknownRank = newChannel();
    assertFalse(unknownRank.writeInbound(encode(clientRequest("testjob", 7, UID, GID))));
    assertFalse(unknownRank.isActive());

    EmbeddedChannel badUid = newChannel();
    assertFalse(badUid.writeInbound(encode(clientRequest("testjob", 0, UID + 1, GID))));
    assertNull(badUid.readOutbound());
    assertFalse(badUid.isActive());

    EmbeddedChannel none = newChannel();
    ConnectRequest r =
        ConnectRequest.builder()
            .security("none", new byte[0])
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId("testjob", 0)
            .build();
    assertFalse(none.writeInbound(encode(r)));
    assertFalse(none.isActive());

    EmbeddedChannel tool = newChannel();
    ConnectRequest t =
        ConnectRequest.builder()
            .security("native", new NativeCredential(UID, GID).toBytes())
            .kind(ConnectorKind.TOOL_NEEDS_ID)
            .ids(UID, GID)
            .build();
    assertFalse(tool.writeInbound(encode(t)));
    assertFalse(tool.isActive());
    assertTrue(core.snapshot().peers().isEmpty());
  }

  @Test
  void singletonOf422GetsTheToolLayoutReply() {
    EmbeddedChannel ch = newChannel();
    ConnectRequest r =
        ConnectRequest.builder()
            .security("native", new NativeCredential(UID, GID).toBytes())
            .kind(ConnectorKind.SINGLETON_CLIENT)
            .ids(UID, GID)
            .procId("singleton.vm.4711", 0)
            .version("4.2.2rc2")
            .padPresent(true)
            .build();
    assertFalse(ch.writeInbound(encode(r)));
    ByteBuf reply = ch.readOutbound();
    assertEquals(268, reply.readableBytes());
    assertEquals(0, reply.readInt());
    reply.release();
    ch.writeInbound(command(101, 5, w -> {}));
    assertEquals(Status.SUCCESS, readStatusReply(ch, 101));
    assertEquals(
        ServerSnapshot.Role.SINGLETON, core.snapshot().peers().get(0).role());
  }

  // ---- REQ against docs/commands.md §9.1 ----

  @Test
  void reqReplyMatchesTheWorkedExampleByteForByte() throws Exception {
    byte[] expectedPrefix = workedExampleReqReply(resourceLines("req-reply-min.txt"));

    registerTestjob();
    EmbeddedChannel ch = newChannel();
    connect(ch, "testjob", 0);
    assertFalse(ch.writeInbound(command(101, 0, w -> {})));
    byte[] body = readFrame(ch, 101);
    assertEquals(746, body.length, "body length of the 4.2.2 reply");
    byte[] prefix = new byte[expectedPrefix.length];
    System.arraycopy(body, 0, prefix, 0, prefix.length);
    assertEquals(ByteBufUtil.hexDump(expectedPrefix), ByteBufUtil.hexDump(prefix));
  }

  /** A test resource next to this class, by lines; a missing one fails the test. */
  private static List<String> resourceLines(String name) throws IOException {
    try (InputStream in = ServerCoreTest.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new AssertionError("test resource missing: " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    }
  }

  /** The bytes of the 9.1 reply as far as the dump shows them (through rank 0's blob). */
  private static byte[] workedExampleReqReply(List<String> lines) {
    Pattern row = Pattern.compile("^\\s+\\+[0-9a-f]{4}\\s+((?:[0-9a-f]{2} )*[0-9a-f]{2})( \\.\\.)?\\s+(.*)$");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    boolean in = false;
    for (String line : lines) {
      if (line.startsWith("S->C REQ reply (746 body bytes)")) {
        in = true;
        continue;
      }
      if (!in) {
        continue;
      }
      if (line.trim().startsWith("...")) {
        break;
      }
      Matcher m = row.matcher(line);
      if (!m.matches()) {
        continue;
      }
      List<String> hex = com.google.common.base.Splitter.on(' ').splitToList(m.group(1));
      if (m.group(2) != null) {
        // Cut string: length byte(s) from the dump, the text from the decoded comment, then NUL.
        Matcher t = Pattern.compile("'([^']*)'").matcher(m.group(3));
        assertTrue(t.find(), line);
        out.write(Integer.parseInt(hex.get(0), 16));
        byte[] text = t.group(1).getBytes(StandardCharsets.UTF_8);
        out.write(text, 0, text.length);
        out.write(0);
      } else {
        for (String h : hex) {
          out.write(Integer.parseInt(h, 16));
        }
      }
    }
    return out.toByteArray();
  }

  @Test
  void reqReplyCarriesDerivedLocalityForEveryRank() {
    registerTestjob();
    EmbeddedChannel ch = newChannel();
    connect(ch, "testjob", 1);
    ch.writeInbound(command(101, 0, w -> {}));
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, 101)));
    assertEquals("testjob", r.unpackString());
    int pblobs = 0;
    int nodes = 0;
    while (r.hasRemaining()) {
      Value.KVal kv = (Value.KVal) r.unpackOne(DataType.KVAL);
      if (kv.key().equals("pmix.pblob")) {
        PmixReader b = new PmixReader(Unpooled.wrappedBuffer(kv.value().asBytes()));
        assertEquals(pblobs, b.unpackRank());
        List<String> keys = new ArrayList<>();
        while (b.hasRemaining()) {
          keys.add(((Value.KVal) b.unpackOne(DataType.KVAL)).key());
        }
        assertEquals(List.of("pmix.hname", "pmix.nodeid", "pmix.lrank", "pmix.nrank"), keys);
        pblobs++;
      } else if (kv.key().equals("pmix.node.arr")) {
        DataArray a = (DataArray) kv.value();
        assertEquals("pmix.hname", ((Info) a.items().get(0)).key());
        nodes++;
      }
    }
    assertEquals(4, pblobs);
    assertEquals(2, nodes);
  }

  // ---- commands and errors ----

  @Test
  void unknownAndUnsupportedCommandsGetNotSupportedAndMalformedOnesAnErrorStatus() {
    registerTestjob();
    EmbeddedChannel ch = newChannel();
    connect(ch, "testjob", 0);
    ch.writeInbound(command(101, 200, w -> {}));
    assertEquals(Status.ERR_NOT_SUPPORTED, readStatusReply(ch, 101));
    ch.writeInbound(command(102, 17, w -> {})); // ALLOC: no handler yet
    assertEquals(Status.ERR_NOT_SUPPORTED, readStatusReply(ch, 102));
    ch.writeInbound(command(103, 4, w -> {})); // GETNB without its fields
    assertEquals(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, readStatusReply(ch, 103));
    ch.writeInbound(frame(104, w -> {})); // not even a command byte
    assertEquals(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, readStatusReply(ch, 104));
    // Still serving.
    assertTrue(ch.isActive());
    ch.writeInbound(command(105, 0, w -> {}));
    assertTrue(readFrame(ch, 105).length > 100);
    // DEREGEVENTS never gets a reply.
    ch.writeInbound(command(106, 14, w -> w.packStatus(Status.of(-31337))));
    assertNull(ch.readOutbound());
  }

  @Test
  void oversizedFrameDropsOnlyThatConnection() {
    registerTestjob();
    EmbeddedChannel bad = newChannel();
    connect(bad, "testjob", 0);
    EmbeddedChannel good = newChannel();
    connect(good, "testjob", 1);
    ByteBuf huge = Unpooled.buffer().writeInt(0).writeInt(101).writeInt(1 << 20).writeInt(0);
    bad.writeInbound(huge);
    assertFalse(bad.isActive());
    good.writeInbound(command(101, 0, w -> {}));
    assertTrue(readFrame(good, 101).length > 100);
  }

  private static ByteBuf commit(int tag, int rank) {
    return command(
        tag,
        2,
        w -> {
          ByteBuf inner = Unpooled.buffer();
          new PmixWriter(inner)
              .pack(new Value.KVal("loc.key", Value.of("rank" + rank + "-local")))
              .pack(new Value.KVal("glob.key", Value.uint32(1000 + rank)));
          w.packByteEnum(DataType.SCOPE, 1);
          w.pack(new Value.Buffer(1, ByteBufUtil.getBytes(inner)));
          inner.release();
        });
  }

  private static ByteBuf get(int tag, String nspace, int rank, String key, List<Info> info) {
    return command(
        tag,
        4,
        w -> {
          w.packString(nspace);
          w.packRank(rank);
          w.packSize(info.size());
          if (!info.isEmpty()) {
            w.packInfos(info);
          }
          w.packString(key);
        });
  }

  @Test
  void getOfALocalPeerReturnsAllItsLocalDataAfterItsCommit() {
    registerTestjob();
    EmbeddedChannel r0 = newChannel();
    connect(r0, "testjob", 0);
    EmbeddedChannel r1 = newChannel();
    connect(r1, "testjob", 1);
    // Asked before the commit: the request waits.
    r0.writeInbound(get(101, "testjob", 1, "loc.key", List.of()));
    assertNull(r0.readOutbound());
    r1.writeInbound(commit(101, 1));
    assertEquals(Status.SUCCESS, readStatusReply(r1, 101));
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(r0, 101)));
    assertEquals(Status.SUCCESS, r.unpackStatus());
    PmixReader blob = new PmixReader(Unpooled.wrappedBuffer(r.unpackOne(DataType.BYTE_OBJECT).asBytes()));
    assertEquals(Proc.of("testjob", 1), blob.unpackProc());
    assertEquals(new Value.KVal("loc.key", Value.of("rank1-local")), blob.unpackOne(DataType.KVAL));
    assertEquals(new Value.KVal("glob.key", Value.uint32(1001)), blob.unpackOne(DataType.KVAL));
    assertFalse(blob.hasRemaining());
    assertFalse(r.hasRemaining());
    // A key the peer never put, asked with IMMEDIATE: NOT_FOUND at once.
    r0.writeInbound(get(102, "testjob", 1, "pmix.rank", List.of(Info.of(Keys.IMMEDIATE, Value.of(true)))));
    assertEquals(Status.ERR_NOT_FOUND, readStatusReply(r0, 102));
  }

  @Test
  void publishCarriesTheAuthenticatedIdentityNotTheClaimedOne() {
    List<List<Info>> published = new ArrayList<>();
    // This test's own host: a fresh fixture around it.
    fx.close();
    fx =
        new EmbeddedCore(
            new HostModule() {
              @Override
              public java.util.concurrent.CompletionStage<Void> publish(Proc proc, List<Info> info) {
                published.add(info);
                return java.util.concurrent.CompletableFuture.completedFuture(null);
              }
            },
            EmbeddedCore.options().build(),
            true,
            UID,
            GID);
    loopOwner = fx.loopOwner;
    core = fx.core;
    registerTestjob();
    EmbeddedChannel r0 = newChannel();
    connect(r0, "testjob", 0);
    // The message claims uid 0, and a directive claims uid/gid 0 as well: both must be ignored.
    r0.writeInbound(
        command(
            101,
            6,
            w -> {
              w.packUInt32(0);
              w.packSize(3);
              w.packInfos(
                  List.of(
                      Info.of("svc.name", Value.of("port-1")),
                      Info.of(Keys.USERID, Value.uint32(0)),
                      Info.of(Keys.GRPID, Value.uint32(0))));
            }));
    // The host's completion hops back to the progress loop.
    loopOwner.runPendingTasks();
    r0.runPendingTasks();
    assertEquals(Status.SUCCESS, readStatusReply(r0, 101));
    assertEquals(1, published.size());
    List<Info> info = published.get(0);
    assertEquals(
        List.of(
            Info.of("svc.name", Value.of("port-1")),
            Info.of(Keys.USERID, Value.uint32(UID)),
            Info.of(Keys.GRPID, Value.uint32(GID))),
        info);
  }

  /**
   * A host whose publish, clientConnected and clientFinalized note their calls and complete at
   * once, saying so for the data calls and the client calls as told.
   */
  private static final class RecordingHost implements HostModule {
    private final List<String> calls;
    private final boolean dataAtOnce;
    private final boolean clientAtOnce;

    RecordingHost(List<String> calls, boolean dataAtOnce, boolean clientAtOnce) {
      this.calls = calls;
      this.dataAtOnce = dataAtOnce;
      this.clientAtOnce = clientAtOnce;
    }

    private java.util.concurrent.CompletionStage<Void> note(String what, Proc proc) {
      calls.add(what + " " + proc.rank());
      return java.util.concurrent.CompletableFuture.completedFuture(null);
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> publish(Proc proc, List<Info> info) {
      return note("publish", proc);
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> clientConnected(
        Proc proc, @Nullable Object hostObject) {
      return note("connected", proc);
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> clientFinalized(
        Proc proc, @Nullable Object hostObject) {
      return note("finalized", proc);
    }

    @Override
    public boolean dataCallsReturnAtOnce() {
      return dataAtOnce;
    }

    @Override
    public boolean clientCallsReturnAtOnce() {
      return clientAtOnce;
    }
  }

  /**
   * The upcall was called by the progress thread itself (the host executor not asked) exactly
   * when the host says it returns at once; either way its answer comes back through the loop.
   */
  private void assertRoutedThenAnswered(
      boolean atOnce, List<String> viaExecutor, EmbeddedChannel ch, int tag) {
    assertEquals(atOnce ? List.of() : List.of("task"), viaExecutor, "atOnce=" + atOnce);
    loopOwner.runPendingTasks();
    ch.runPendingTasks();
    assertEquals(Status.SUCCESS, readStatusReply(ch, tag), "atOnce=" + atOnce);
  }

  /**
   * Replaces the fixture's core with one of {@code host} whose host executor runs each task at
   * once; returns the list where that executor notes "task" for each, with testjob registered.
   */
  private List<String> restartWith(HostModule host) {
    List<String> viaExecutor = new ArrayList<>();
    fx.close();
    fx =
        new EmbeddedCore(
            host,
            EmbeddedCore.options().build(),
            true,
            UID,
            GID,
            task -> {
              viaExecutor.add("task");
              task.run();
            });
    loopOwner = fx.loopOwner;
    core = fx.core;
    registerTestjob();
    return viaExecutor;
  }

  @Test
  void publishRunsOnTheProgressThreadOnlyForAHostWhoseDataCallsReturnAtOnce() {
    for (boolean atOnce : new boolean[] {false, true}) {
      List<String> calls = new ArrayList<>();
      List<String> viaExecutor = restartWith(new RecordingHost(calls, atOnce, false));
      EmbeddedChannel r0 = newChannel();
      connect(r0, "testjob", 0);
      viaExecutor.clear(); // the connection's own upcall
      calls.clear();
      r0.writeInbound(
          command(
              101,
              6,
              w -> {
                w.packUInt32(0);
                w.packSize(1);
                w.packInfos(List.of(Info.of("svc.name", Value.of("port-1"))));
              }));
      assertEquals(List.of("publish 0"), calls, "atOnce=" + atOnce);
      assertRoutedThenAnswered(atOnce, viaExecutor, r0, 101);
    }
  }

  @Test
  void connectedAndFinalizedRunOnTheProgressThreadOnlyForAHostWhoseClientCallsReturnAtOnce() {
    for (boolean atOnce : new boolean[] {false, true}) {
      List<String> calls = new ArrayList<>();
      List<String> viaExecutor = restartWith(new RecordingHost(calls, false, atOnce));
      EmbeddedChannel r0 = newChannel();
      connect(r0, "testjob", 0);
      assertEquals(List.of("connected 0"), calls, "atOnce=" + atOnce);
      assertEquals(atOnce ? List.of() : List.of("task"), viaExecutor, "atOnce=" + atOnce);
      viaExecutor.clear();
      r0.writeInbound(command(101, 5, w -> {}));
      assertEquals(List.of("connected 0", "finalized 0"), calls, "atOnce=" + atOnce);
      // The finalize is answered only once the host's stage completed.
      assertRoutedThenAnswered(atOnce, viaExecutor, r0, 101);
    }
  }

  @Test
  void aGetOfTheEmptyNamespaceIsRefusedAtOnce() {
    registerTestjob();
    EmbeddedChannel r0 = newChannel();
    connect(r0, "testjob", 0);
    r0.writeInbound(get(101, "", 0, "any.key", List.of()));
    assertEquals(Status.ERR_BAD_PARAM, readStatusReply(r0, 101));
    // The server goes on: the same get of the namespace itself waits for rank 0's commit.
    r0.writeInbound(get(102, "testjob", 0, "any.key", List.of()));
    assertNull(r0.readOutbound());
  }

  @Test
  void getOfUncommittedLocalDataTimesOutAfterTwoSecondsByDefault() {
    registerTestjob();
    EmbeddedChannel r0 = newChannel();
    connect(r0, "testjob", 0);
    EmbeddedChannel r1 = newChannel();
    connect(r1, "testjob", 1);
    r0.writeInbound(get(101, "testjob", 1, "never.key", List.of()));
    loopOwner.advanceTimeBy(1, TimeUnit.SECONDS);
    loopOwner.runScheduledPendingTasks();
    assertNull(r0.readOutbound());
    loopOwner.advanceTimeBy(2, TimeUnit.SECONDS);
    loopOwner.runScheduledPendingTasks();
    assertEquals(Status.ERR_TIMEOUT, readStatusReply(r0, 101));
  }

  @Test
  void localFenceCompletesWhenEveryLocalRankArrived() {
    assertEquals(
        Status.SUCCESS,
        core.registerNspace("two", 2, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(2)))));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("two", 0), UID, GID, null));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("two", 1), UID, GID, null));
    EmbeddedChannel r0 = newChannel();
    connect(r0, "two", 0);
    EmbeddedChannel r1 = newChannel();
    connect(r1, "two", 1);
    Consumer<PmixWriter> fence =
        w -> {
          w.packSize(1);
          w.packProc(Proc.wildcard("two"));
          w.packSize(1);
          w.packInfos(List.of(Info.of(Keys.COLLECT_DATA, Value.of(true))));
        };
    r0.writeInbound(command(103, 3, fence));
    assertNull(r0.readOutbound());
    assertEquals(1, core.activeFences());
    r1.writeInbound(command(107, 3, fence));
    assertEquals(Status.SUCCESS, readStatusReply(r0, 103));
    assertEquals(Status.SUCCESS, readStatusReply(r1, 107));
    assertEquals(0, core.activeFences());
  }

  @Test
  void fenceWhosePeerDiesCompletesWithPartialSuccess() {
    assertEquals(Status.SUCCESS, core.registerNspace("three", 3, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(3)))));
    for (int r = 0; r < 3; r++) {
      assertEquals(Status.SUCCESS, core.registerClient(Proc.of("three", r), UID, GID, null));
    }
    EmbeddedChannel[] ch = new EmbeddedChannel[3];
    for (int r = 0; r < 3; r++) {
      ch[r] = newChannel();
      connect(ch[r], "three", r);
    }
    Consumer<PmixWriter> fence =
        w -> {
          w.packSize(1);
          w.packProc(Proc.wildcard("three"));
          w.packSize(0);
        };
    ch[1].writeInbound(command(110, 3, fence));
    ch[2].writeInbound(command(111, 3, fence));
    io.netty.channel.ChannelFuture unusedClose = ch[0].close();
    assertEquals(Status.ERR_PARTIAL_SUCCESS, readStatusReply(ch[1], 110));
    assertEquals(Status.ERR_PARTIAL_SUCCESS, readStatusReply(ch[2], 111));
    ServerSnapshot s = core.snapshot();
    assertEquals(2, s.namespace("three").orElseThrow().nlocalprocs());
    // The lost peer stays at the slot the rank's index names.
    assertEquals(0, s.namespace("three").orElseThrow().ranks().get(0).peerIndex());
    assertEquals(ServerSnapshot.PeerState.LOST, s.peer(0).orElseThrow().state());
  }

  // ---- finalize lifecycle ----

  @Test
  void finalizeTombstonesThenReconnectReclaims() {
    registerTestjob();
    EmbeddedChannel first = newChannel();
    int idx = connect(first, "testjob", 0);
    first.writeInbound(command(101, 5, w -> {}));
    loopOwner.runPendingTasks(); // the host's clientFinalized answer comes back through the loop
    assertEquals(Status.SUCCESS, readStatusReply(first, 101));
    ServerSnapshot s = core.snapshot();
    assertEquals(ServerSnapshot.PeerState.FINALIZING, s.peers().get(0).state());
    assertEquals(1, s.namespace("testjob").orElseThrow().nfinalized());
    io.netty.channel.ChannelFuture unusedClose = first.close();
    s = core.snapshot();
    assertEquals(ServerSnapshot.PeerState.TOMBSTONE, s.peers().get(0).state());
    assertEquals(idx, s.namespace("testjob").orElseThrow().ranks().get(0).peerIndex());
    assertEquals(0, s.namespace("testjob").orElseThrow().ranks().get(0).procCount());
    assertEquals(1, s.namespace("testjob").orElseThrow().nfinalized());

    EmbeddedChannel second = newChannel();
    assertEquals(idx, connect(second, "testjob", 0)); // the reclaimed slot is reused
    s = core.snapshot();
    assertEquals(1, s.peers().size());
    assertEquals(ServerSnapshot.PeerState.ACTIVE, s.peers().get(0).state());
    assertEquals(0, s.namespace("testjob").orElseThrow().nfinalized());
    assertEquals(1, s.namespace("testjob").orElseThrow().ranks().get(0).procCount());
  }

  @Test
  void strandedFinalizedCloneIsFreedAtOnce() {
    registerTestjob();
    EmbeddedChannel parent = newChannel();
    connect(parent, "testjob", 0);
    EmbeddedChannel clone = newChannel();
    int cloneIdx = connect(clone, "testjob", 0);
    assertEquals(2, core.snapshot().namespace("testjob").orElseThrow().ranks().get(0).procCount());
    parent.writeInbound(command(101, 5, w -> {}));
    loopOwner.runPendingTasks();
    assertEquals(Status.SUCCESS, readStatusReply(parent, 101));
    io.netty.channel.ChannelFuture unusedClose = parent.close();
    ServerSnapshot s = core.snapshot();
    // The parent no longer owns the rank's slot pointer: it is stranded and freed.
    assertEquals(1, s.peers().size());
    assertEquals(cloneIdx, s.peers().get(0).index());
    assertEquals(0, s.namespace("testjob").orElseThrow().nfinalized());
    assertEquals(1, s.namespace("testjob").orElseThrow().ranks().get(0).procCount());
  }

  @Test
  void deregisterNspaceReleasesEverything() {
    registerTestjob();
    EmbeddedChannel ch = newChannel();
    connect(ch, "testjob", 0);
    assertEquals(Status.SUCCESS, core.deregisterNspace("testjob"));
    assertFalse(ch.isActive());
    ServerSnapshot s = core.snapshot();
    assertTrue(s.peers().isEmpty());
    assertTrue(s.namespaces().isEmpty());
  }

  @Test
  void registrationErrorsAreReported() {
    assertEquals(
        Status.ERR_BAD_PARAM,
        core.registerNspace(
            "bad", 1, List.of(Info.of(Keys.NODE_MAP, Value.of("a,b")), Info.of(Keys.PROC_MAP, Value.of("0")))));
    assertEquals(
        Status.ERR_BAD_PARAM,
        core.registerNspace("bad", 1, List.of(Info.of(Keys.PROC_DATA, Value.of(3)))));
    assertTrue(core.snapshot().namespaces().isEmpty());
  }

  @Test
  void versionParsingFollowsC() {
    assertArrayEquals(new int[] {4, 2, 2}, HostForwarding.parseVersion("4.2.2rc2"));
    assertArrayEquals(new int[] {5, 0, 11}, HostForwarding.parseVersion("5.0.11rc1"));
    assertArrayEquals(new int[] {7, 0, 0}, HostForwarding.parseVersion("7.0.0a1"));
  }
}
