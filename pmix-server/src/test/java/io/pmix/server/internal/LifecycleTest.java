package io.pmix.server.internal;

import static io.pmix.server.internal.EmbeddedCore.command;
import static io.pmix.server.internal.EmbeddedCore.readFrame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
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
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.HostModule;
import io.pmix.server.LifecycleInvariants;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.RankInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server half of docs/lifecycle.md on {@link EmbeddedChannel}s, in orderings real
 * clients cannot force: a re-init before the old close, deaths of referenced and displaced peers,
 * finalize during a pending fence, tools, pruning, deregistration, the snapshot's JSON.
 */
class LifecycleTest {
  private static final int UID = 0x1234;
  private static final int GID = 0x5678;
  private static final int FINALIZE = 5;
  private static final int FENCENB = 3;
  private static final int GETNB = 4;
  private static final int NOTIFY = 12;
  private static final int REGEVENTS = 13;

  private EmbeddedCore fx;
  private EmbeddedChannel loopOwner;
  private ServerCore core;
  private final Map<String, Integer> latch = new ConcurrentHashMap<>();
  private final List<String> epilogs = new ArrayList<>();

  @BeforeEach
  void setUp() {
    HostModule host =
        new HostModule() {
          @Override
          public CompletionStage<Void> localAppFinalized(String nspace) {
            latch.merge(nspace, 1, Integer::sum);
            return CompletableFuture.completedFuture(null);
          }
        };
    fx = new EmbeddedCore(host, EmbeddedCore.options().build(), true, UID, GID);
    loopOwner = fx.loopOwner;
    core = fx.core;
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  // ---- helpers ----

  private void register(String nspace, int n) {
    fx.registerLocal(nspace, n);
  }

  private EmbeddedChannel channel() {
    return fx.channel();
  }

  /** Connects as a client; returns the channel (its slot is the reply's index). */
  private EmbeddedChannel connect(String nspace, int rank) {
    EmbeddedChannel ch = fx.connectClient(nspace, rank);
    ByteBuf reply = ch.readOutbound();
    assertTrue(reply != null, "refused");
    reply.release();
    return ch;
  }

  /** Registers {@code nspace} with {@code n} local ranks and connects each, rank 0 first. */
  private EmbeddedChannel[] job(String nspace, int n) {
    register(nspace, n);
    EmbeddedChannel[] ranks = new EmbeddedChannel[n];
    for (int r = 0; r < n; r++) {
      ranks[r] = connect(nspace, r);
    }
    return ranks;
  }

  private static Status status(EmbeddedChannel ch, int tag) {
    return new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag))).unpackStatus();
  }

  private void finalizeAndReply(EmbeddedChannel ch, int tag) {
    ch.writeInbound(command(tag, FINALIZE, w -> {}));
    loopOwner.runPendingTasks();
    assertEquals(Status.SUCCESS, status(ch, tag));
  }

  private static void close(EmbeddedChannel ch) {
    ChannelFuture unused = ch.close();
  }

  private static Consumer<PmixWriter> wildcardFence(String nspace) {
    return w -> {
      w.packSize(1);
      w.packProc(Proc.wildcard(nspace));
      w.packSize(0);
    };
  }

  private static Consumer<PmixWriter> get(Proc target, String key, int timeout) {
    return w -> {
      w.packString(target.nspace());
      w.packRank(target.rank());
      w.packSize(1);
      w.packInfos(List.of(Info.of(Keys.TIMEOUT, Value.of(timeout))));
      w.packString(key);
    };
  }

  private ServerSnapshot.RankView rank(String nspace, int r) {
    return core.snapshot().namespace(nspace).orElseThrow().ranks().get(r);
  }

  private ServerSnapshot.NamespaceView ns(String nspace) {
    return core.snapshot().namespace(nspace).orElseThrow();
  }

  private void checkInvariants(int live, String... deregistered) {
    LifecycleInvariants.check(
        core.snapshot(),
        LifecycleInvariants.expect()
            .liveProcesses(live)
            .deregistered(deregistered)
            .latchCalls(latch));
  }

  // ---- tombstones, stranded peers, reclaim ----

  @Test
  void reinitBeforeTheOldCloseFreesOnlyTheStrandedPeer() {
    register("job", 1);
    EmbeddedChannel first = connect("job", 0);
    finalizeAndReply(first, 101);
    int oldIdx = rank("job", 0).peerIndex();
    // The fast re-init connects before the old socket's close is processed.
    EmbeddedChannel second = connect("job", 0);
    int newIdx = rank("job", 0).peerIndex();
    assertTrue(newIdx != oldIdx);
    assertEquals(2, rank("job", 0).procCount());
    assertEquals(1, ns("job").nfinalized());
    checkInvariants(2);
    close(first);
    ServerSnapshot s = core.snapshot();
    assertTrue(s.peer(oldIdx).isEmpty());
    assertEquals(newIdx, rank("job", 0).peerIndex()); // the live index was not touched
    assertEquals(0, ns("job").nfinalized());
    assertEquals(1, rank("job", 0).procCount());
    checkInvariants(1);
    finalizeAndReply(second, 102);
    close(second);
    assertEquals(ServerSnapshot.PeerState.TOMBSTONE, core.snapshot().peer(newIdx).get().state());
    checkInvariants(0);
  }

  @Test
  void lostPeerStaysInertAtItsIndexUntilTheRankReconnects() {
    register("job", 2);
    EmbeddedChannel r0 = connect("job", 0);
    EmbeddedChannel unused1 = connect("job", 1);
    int idx = rank("job", 0).peerIndex();
    close(r0); // died without finalizing
    assertEquals(ServerSnapshot.PeerState.LOST, core.snapshot().peer(idx).get().state());
    assertEquals(idx, rank("job", 0).peerIndex());
    assertEquals(0, rank("job", 0).procCount());
    assertEquals(1, ns("job").nlocalprocs()); // as 4.2.2: no longer a local process
    assertEquals(0, ns("job").nfinalized());
    checkInvariants(1);
    // Relaunched: the lost peer is reclaimed, the rank counts again.
    EmbeddedChannel again = connect("job", 0);
    assertEquals(idx, rank("job", 0).peerIndex()); // the freed slot is reused
    assertEquals(ServerSnapshot.PeerState.ACTIVE, core.snapshot().peer(idx).get().state());
    assertEquals(2, ns("job").nlocalprocs());
    checkInvariants(2);
    close(again);
  }

  @Test
  void displacedCloneDyingIsFreedAndTheRankStaysAlive() {
    register("job", 1);
    EmbeddedChannel parent = connect("job", 0);
    int parentIdx = rank("job", 0).peerIndex();
    EmbeddedChannel clone = connect("job", 0);
    int cloneIdx = rank("job", 0).peerIndex();
    close(parent); // the parent dies; the clone holds the index
    assertTrue(core.snapshot().peer(parentIdx).isEmpty());
    assertEquals(cloneIdx, rank("job", 0).peerIndex());
    assertEquals(1, ns("job").nlocalprocs()); // the rank still has a live process
    checkInvariants(1);
    finalizeAndReply(clone, 107);
    close(clone);
    checkInvariants(0);
  }

  // ---- collectives by identity ----

  @Test
  void orderlyFinalizeNeverShortensAPendingFence() {
    register("two", 2);
    EmbeddedChannel r0 = connect("two", 0);
    EmbeddedChannel r1 = connect("two", 1);
    // rank 0 is already in the next cycle's fence while rank 1 finishes its cycle.
    r0.writeInbound(command(103, FENCENB, wildcardFence("two")));
    finalizeAndReply(r1, 104);
    close(r1);
    assertNull(r0.readOutbound(), "4.2.2 would complete it early with PARTIAL_SUCCESS");
    assertEquals(1, core.activeFences());
    // rank 1's next cycle joins the same fence.
    EmbeddedChannel r1b = connect("two", 1);
    r1b.writeInbound(command(105, FENCENB, wildcardFence("two")));
    assertEquals(Status.SUCCESS, status(r0, 103));
    assertEquals(Status.SUCCESS, status(r1b, 105));
    assertEquals(0, core.activeFences());
    checkInvariants(2);
  }

  /**
   * A fence unlike the last one decoded, even of the same length, is decoded as itself (the
   * server reuses the last fence's record only for the very same bytes): rank 0's fence of ranks
   * 0 and 2 does not join the pending fence of ranks 1 and 2, which keeps waiting for rank 2.
   */
  @Test
  void aFenceUnlikeTheLastIsDecodedAsItself() {
    EmbeddedChannel[] r = job("three", 3);
    Consumer<PmixWriter> ranks12 = fenceOf(Proc.of("three", 1), Proc.of("three", 2));
    Consumer<PmixWriter> ranks02 = fenceOf(Proc.of("three", 0), Proc.of("three", 2));
    r[1].writeInbound(command(130, FENCENB, ranks12));
    r[0].writeInbound(command(131, FENCENB, ranks02));
    assertNull(r[1].readOutbound(), "ranks 1 and 2's fence waits for rank 2");
    assertNull(r[0].readOutbound(), "ranks 0 and 2's fence waits for rank 2");
    assertEquals(2, core.activeFences());
    r[2].writeInbound(command(132, FENCENB, ranks12));
    r[2].writeInbound(command(133, FENCENB, ranks02));
    assertEquals(Status.SUCCESS, status(r[1], 130));
    assertEquals(Status.SUCCESS, status(r[2], 132));
    assertEquals(Status.SUCCESS, status(r[0], 131));
    assertEquals(Status.SUCCESS, status(r[2], 133));
    assertEquals(0, core.activeFences());
  }

  private static Consumer<PmixWriter> fenceOf(Proc... procs) {
    return w -> {
      w.packSize(procs.length);
      w.pack(DataType.PROC, List.of(procs));
      w.packSize(0);
    };
  }

  @Test
  void rankThatContributedKeepsItsContributionWhenItDies() {
    EmbeddedChannel[] r = job("three", 3);
    r[0].writeInbound(command(110, FENCENB, wildcardFence("three")));
    close(r[0]);
    assertEquals(1, core.activeFences());
    r[1].writeInbound(command(111, FENCENB, wildcardFence("three")));
    r[2].writeInbound(command(112, FENCENB, wildcardFence("three")));
    assertEquals(Status.SUCCESS, status(r[1], 111));
    assertEquals(Status.SUCCESS, status(r[2], 112));
  }

  @Test
  void deathOfAWaitedRankFailsTheFenceAndARelaunchedRankIsWaitedForAgain() {
    EmbeddedChannel[] r = job("three", 3);
    r[1].writeInbound(command(120, FENCENB, wildcardFence("three")));
    close(r[0]);
    assertEquals(1, core.activeFences()); // rank 2 still missing
    // rank 0 is registered again and restarted before rank 2 arrives: it is waited for again.
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("three", 0), UID, GID, null));
    assertEquals(3, ns("three").nlocalprocs());
    EmbeddedChannel r0b = connect("three", 0);
    r[2].writeInbound(command(121, FENCENB, wildcardFence("three")));
    assertNull(r[1].readOutbound());
    r0b.writeInbound(command(122, FENCENB, wildcardFence("three")));
    assertEquals(Status.SUCCESS, status(r[1], 120));
    assertEquals(Status.SUCCESS, status(r0b, 122));
    assertEquals(Status.SUCCESS, status(r[2], 121));
  }

  @Test
  void relaunchedRankContributesAgainInsteadOfItsDeadPredecessor() {
    EmbeddedChannel[] r = job("three", 3);
    r[0].writeInbound(command(190, FENCENB, wildcardFence("three")));
    close(r[0]); // contributed, then died: the contribution stands ...
    // ... until the rank is started anew: its new process will run the fence again.
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("three", 0), UID, GID, null));
    EmbeddedChannel r0b = connect("three", 0);
    r[1].writeInbound(command(191, FENCENB, wildcardFence("three")));
    r[2].writeInbound(command(192, FENCENB, wildcardFence("three")));
    assertNull(r[1].readOutbound(), "the new rank 0 has not arrived yet");
    r0b.writeInbound(command(193, FENCENB, wildcardFence("three")));
    assertEquals(Status.SUCCESS, status(r[1], 191));
    assertEquals(Status.SUCCESS, status(r[2], 192));
    assertEquals(Status.SUCCESS, status(r0b, 193));
    assertEquals(0, core.activeFences());
  }

  // ---- finalize prunes ----

  @Test
  void finalizePrunesTheClientScopedStateOfThePeer() {
    register("job", 2);
    EmbeddedChannel r0 = connect("job", 0);
    EmbeddedChannel r1 = connect("job", 1);
    Peer p0 = peerAt(rank("job", 0).peerIndex());
    r0.writeInbound(
        command(
            130,
            REGEVENTS,
            w -> {
              w.packSize(1);
              w.packStatus(Status.of(-31337));
              w.packSize(0);
            }));
    assertEquals(Status.SUCCESS, status(r0, 130));
    core.addIofRequest(p0, List.of(Proc.wildcard("job")), 1);
    r0.writeInbound(command(131, GETNB, get(Proc.of("job", 1), "never", 30)));
    r1.writeInbound(command(132, GETNB, get(Proc.of("job", 0), "never", 30)));
    // rank 1 raises an event for rank 0 only, before rank 0 registered for that code.
    r1.writeInbound(
        command(
            133,
            NOTIFY,
            w -> {
              w.packStatus(Status.of(-31338));
              w.packByteEnum(DataType.DATA_RANGE, 6);
              w.packSize(1);
              w.packInfos(
                  List.of(
                      Info.of(
                          "pmix.evrange",
                          DataArray.of(DataType.PROC, List.of(Proc.of("job", 0))))));
            }));
    assertEquals(Status.SUCCESS, status(r1, 133));
    assertEquals(5, countReferences(0), core.snapshot().references().toString());

    finalizeAndReply(r0, 134);
    // Its registrations and its parked GET are gone; the GET waiting for its data is answered.
    assertEquals(Status.ERR_NOT_FOUND, status(r1, 132));
    assertNull(r0.readOutbound(), "a finalized peer gets nothing but its FINALIZE answer");
    assertEquals(0, countReferences(0), core.snapshot().references().toString());
    assertEquals(
        Status.SUCCESS, core.notifyLocal(Status.of(-31337), Proc.of("job", 1), 3, List.of(), null));
    assertNull(r0.readOutbound());
    checkInvariants(2);
  }

  private long countReferences(int rank) {
    return core.snapshot().references().stream()
        .filter(r -> r.kind() != ServerSnapshot.ReferenceKind.COLLECTIVE)
        .filter(r -> r.rank() == rank || r.holderIndex() == rank || r.rank() == Proc.RANK_WILDCARD)
        .count();
  }

  private Peer peerAt(int index) {
    Peer p = core.peerAt(index);
    assertTrue(p != null, "no peer in slot " + index);
    return p;
  }

  @Test
  void cachedEventReachesALateTargetButNotItsNextCycle() {
    register("job", 2);
    EmbeddedChannel r0 = connect("job", 0);
    EmbeddedChannel r1 = connect("job", 1);
    List<Info> toRank1 =
        List.of(Info.of("pmix.evrange", DataArray.of(DataType.PROC, List.of(Proc.of("job", 1)))));
    assertEquals(
        Status.SUCCESS, core.notifyLocal(Status.of(-5), Proc.of("job", 0), 6, toRank1, null));
    assertEquals(
        Status.SUCCESS, core.notifyLocal(Status.of(-6), Proc.of("job", 0), 6, toRank1, null));
    r1.writeInbound(command(140, REGEVENTS, w -> regCodes(w, -5)));
    assertEquals(Status.SUCCESS, status(r1, 140));
    PmixReader n = new PmixReader(Unpooled.wrappedBuffer(readFrame(r1, 0)));
    n.unpackByteEnum(DataType.COMMAND);
    assertEquals(-5, n.unpackStatus().code());
    assertNull(r0.readOutbound()); // not a target
    finalizeAndReply(r1, 141);
    close(r1);
    EmbeddedChannel r1b = connect("job", 1);
    r1b.writeInbound(command(142, REGEVENTS, w -> regCodes(w, -6)));
    assertEquals(Status.SUCCESS, status(r1b, 142));
    assertNull(r1b.readOutbound(), "the event for the previous cycle was dropped at its finalize");
    checkInvariants(2);
  }

  private static void regCodes(PmixWriter w, int code) {
    w.packSize(1);
    w.packStatus(Status.of(code));
    w.packSize(0);
  }

  // ---- tools ----

  @Test
  void pureToolIsFreedAtCloseAndItsRankIndexRepointedToALiveSibling() {
    // A namespace and rank record that are neither the host's nor made for a tool.
    Namespace tns = core.registry().placeholder("toolns");
    RankInfo info = core.registry().addRank(tns, 0, UID, GID, null);
    Peer a = core.attach(NettyConnection.of(channel()), tns, info, ServerSnapshot.Role.TOOL, WireFormat.DEFAULT, "4.2.2");
    Peer b = core.attach(NettyConnection.of(channel()), tns, info, ServerSnapshot.Role.TOOL, WireFormat.DEFAULT, "4.2.2");
    assertEquals(b.index(), info.peerIndex());
    core.frame(b, 150, payloadOf(FINALIZE));
    core.closed(b); // finalized referenced tool: freed, index to the live sibling
    assertNull(core.peerAt(b.index()));
    assertEquals(a.index(), info.peerIndex());
    assertEquals(1, info.procCount());
    assertEquals(0, core.nfinalized(tns));
    core.closed(a); // died: freed as well, index unset
    assertNull(core.peerAt(a.index()));
    assertEquals(-1, info.peerIndex());
    assertEquals(0, info.procCount());
  }

  @Test
  void toolOnAHostRegisteredRankKeepsClientSemanticsAndIsReclaimedOnItsReconnect() {
    register("job", 1);
    Namespace ns = namespaceOf("job");
    RankInfo info = ns.rank(0);
    Peer t = core.attach(NettyConnection.of(channel()), ns, info, ServerSnapshot.Role.LAUNCHER, WireFormat.DEFAULT, "4.2.2");
    core.frame(t, 160, payloadOf(FINALIZE));
    loopOwner.runPendingTasks();
    core.closed(t);
    assertEquals(ServerSnapshot.PeerState.TOMBSTONE, core.snapshot().peer(t.index()).get().state());
    assertEquals(1, core.nfinalized(ns));
    assertEquals(t.index(), info.peerIndex());
    checkInvariants(0);
    Peer again = core.attach(NettyConnection.of(channel()), ns, info, ServerSnapshot.Role.LAUNCHER, WireFormat.DEFAULT, "4.2.2");
    assertEquals(0, core.nfinalized(ns));
    assertEquals(1, core.snapshot().peers().size());
    assertEquals(again.index(), info.peerIndex());
  }

  private Namespace namespaceOf(String name) {
    return core.registry().namespace(name);
  }

  private static byte[] payloadOf(int cmd) {
    ByteBuf payload = Unpooled.buffer();
    new PmixWriter(payload).packByteEnum(DataType.COMMAND, cmd);
    byte[] b = new byte[payload.readableBytes()];
    payload.readBytes(b);
    return b;
  }

  // ---- deregistration ----

  @Test
  void deregisterClientReleasesTheRankRefusesItsReconnectAndTellsTheHostOnce() {
    register("job", 2);
    assertEquals(Status.SUCCESS, core.registerEpilog(Proc.of("job", 0), () -> epilogs.add("r0")));
    EmbeddedChannel r0 = connect("job", 0);
    EmbeddedChannel r1 = connect("job", 1);
    finalizeAndReply(r0, 170);
    close(r0);
    finalizeAndReply(r1, 171);
    close(r1);
    int tomb = rank("job", 0).peerIndex();
    assertFalse(ns("job").localAppFiniFired()); // finalize alone does not fire it
    assertEquals(Status.SUCCESS, core.deregisterClient(Proc.of("job", 0)));
    assertTrue(core.snapshot().peer(tomb).isEmpty());
    assertFalse(ns("job").ranks().containsKey(0));
    assertEquals(1, ns("job").nlocalprocs());
    assertEquals(1, ns("job").nfinalized());
    assertTrue(ns("job").localAppFiniFired());
    assertEquals(List.of("r0"), epilogs);
    checkInvariants(0);
    EmbeddedChannel refused = channel();
    ConnectRequest req =
        ConnectRequest.builder()
            .security("native", new NativeCredential(UID, GID).toBytes())
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId("job", 0)
            .version("4.2.2rc2")
            .padPresent(true)
            .build();
    refused.writeInbound(ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req));
    assertFalse(refused.isActive());
    assertEquals(Status.SUCCESS, core.deregisterClient(Proc.of("job", 1)));
    assertEquals(Status.SUCCESS, core.deregisterNspace("job"));
    assertEquals(Map.of("job", 1), latch);
    checkInvariants(0, "job");
  }

  @Test
  void deregisterNspacePurgesEverythingThatNamesIt() {
    register("gone", 2);
    register("stay", 1);
    assertEquals(
        Status.SUCCESS, core.registerEpilog(Proc.wildcard("gone"), () -> epilogs.add("ns")));
    assertEquals(Status.SUCCESS, core.registerEpilog(Proc.of("gone", 1), () -> epilogs.add("r1")));
    EmbeddedChannel g0 = connect("gone", 0);
    EmbeddedChannel s0 = connect("stay", 0);
    Peer stay = peerAt(rank("stay", 0).peerIndex());
    // A fence across both jobs, a GET waiting on the job, forwarding from it, an event for it.
    Consumer<PmixWriter> both =
        w -> {
          w.packSize(2);
          w.pack(DataType.PROC, List.of(Proc.wildcard("gone"), Proc.wildcard("stay")));
          w.packSize(0);
        };
    s0.writeInbound(command(180, FENCENB, both));
    s0.writeInbound(command(181, GETNB, get(Proc.of("gone", 1), "k", 0)));
    core.addIofRequest(stay, List.of(Proc.wildcard("gone")), 1);
    List<Info> toGone =
        List.of(Info.of("pmix.evrange", DataArray.of(DataType.PROC, List.of(Proc.of("gone", 1)))));
    assertEquals(
        Status.SUCCESS, core.notifyLocal(Status.of(-7), Proc.of("stay", 0), 6, toGone, null));
    assertTrue(core.snapshot().references().stream().anyMatch(r -> r.nspace().equals("gone")));

    assertEquals(Status.SUCCESS, core.deregisterNspace("gone"));
    assertFalse(g0.isActive());
    assertEquals(Status.ERR_LOST_CONNECTION, status(s0, 180));
    assertEquals(Status.ERR_NOT_FOUND, status(s0, 181));
    assertEquals(List.of("r1", "ns"), epilogs);
    assertEquals(Map.of("gone", 1), latch);
    checkInvariants(1, "gone");
    assertEquals(0, core.activeFences());
  }

  // ---- snapshot ----

  @Test
  void snapshotJsonHasTheFixedLayout() {
    ServerSnapshot s =
        new ServerSnapshot(
            List.of(
                new ServerSnapshot.PeerView(
                    0, "job", 0, ServerSnapshot.Role.CLIENT, ServerSnapshot.PeerState.TOMBSTONE),
                new ServerSnapshot.PeerView(
                    2, "t\"o\\o\n", -2, ServerSnapshot.Role.LAUNCHER,
                    ServerSnapshot.PeerState.ACTIVE)),
            Map.of(
                "job",
                new ServerSnapshot.NamespaceView(
                    "job", true, 2, 1, false,
                    Map.of(
                        1, new ServerSnapshot.RankView(1, UID, GID, 1, -1),
                        0, new ServerSnapshot.RankView(0, UID, GID, 0, 0))),
                "a",
                new ServerSnapshot.NamespaceView("a", true, 0, 0, true, Map.of())),
            List.of(),
            List.of(
                new ServerSnapshot.StoreView("ds12", "/t/pmix_dstor_ds12_7.1", false, List.of()),
                new ServerSnapshot.StoreView(
                    "ds12", "/t/pmix_dstor_ds12_7", true, List.of("a", "job"))));
    assertEquals(
        "{\"peers\":["
            + "{\"index\":0,\"nspace\":\"job\",\"rank\":0,\"role\":\"client\",\"state\":\"tombstone\"},"
            + "{\"index\":2,\"nspace\":\"t\\\"o\\\\o\\n\",\"rank\":4294967294,\"role\":\"launcher\","
            + "\"state\":\"active\"}],"
            + "\"namespaces\":["
            + "{\"nspace\":\"a\",\"nlocalprocs\":0,\"nfinalized\":0,\"localAppFiniFired\":true,"
            + "\"ranks\":[]},"
            + "{\"nspace\":\"job\",\"nlocalprocs\":2,\"nfinalized\":1,\"localAppFiniFired\":false,"
            + "\"ranks\":[{\"rank\":0,\"procCount\":0,\"peerIndex\":0},"
            + "{\"rank\":1,\"procCount\":1,\"peerIndex\":-1}]}],"
            + "\"stores\":["
            + "{\"module\":\"ds12\",\"directory\":\"/t/pmix_dstor_ds12_7.1\",\"retired\":false,"
            + "\"namespaces\":[]},"
            + "{\"module\":\"ds12\",\"directory\":\"/t/pmix_dstor_ds12_7\",\"retired\":true,"
            + "\"namespaces\":[\"a\",\"job\"]}]}",
        s.toJson());
    assertEquals("{\"peers\":[],\"namespaces\":[],\"stores\":[]}", core.snapshot().toJson());
  }
}
