package io.pmix.server.internal;

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
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tool and launcher handshakes (connect flags 3 to 8) against the server core on {@link
 * EmbeddedChannel}s: the reply layouts byte for byte (docs/transport.md §7.2 and §11.3 to §11.5),
 * what the host's {@code tool_connected} sees, every refusal being a close without a byte, the
 * namespaces made for tools and their release, a launcher child on a registered rank keeping the
 * client lifecycle, and the tool's REQ reply.
 */
class ToolSupportTest {
  private static final int UID = Rendezvous.effectiveIds()[0];
  private static final int GID = Rendezvous.effectiveIds()[1];
  private static final int SERVER_RANK = 13082;

  /** The info blob of docs/transport.md §11.3 (pmix.ppid 13122, pmix.cmd.line ./tool), pad. */
  private static final byte[] BLOB_11_3 =
      ByteBufUtil.decodeHexDump(
          "020204"
              + "14706d69782e7070696400" + "00" + "05" + "0ec266"
              + "1c706d69782e636d642e6c696e6500" + "00" + "03" + "0e2e2f746f6f6c00"
              + "00");

  /** A host that records tool_connected calls and answers them on command. */
  private static final class FakeHost implements HostModule {
    final List<List<Info>> toolCalls = new ArrayList<>();
    @Nullable CompletableFuture<Proc> answer;
    boolean implementsToolConnected = true;

    @Override
    public CompletionStage<Proc> toolConnected(List<Info> info) {
      toolCalls.add(info);
      if (!implementsToolConnected) {
        return HostModule.notSupported();
      }
      CompletableFuture<Proc> f = new CompletableFuture<>();
      answer = f;
      return f;
    }
  }

  private EmbeddedChannel loopOwner;
  private ServerCore core;
  private FakeHost host;
  private EmbeddedCore fx;

  private void start(boolean toolSupport, boolean hostDecides) {
    start(toolSupport, hostDecides, true);
  }

  private void start(boolean toolSupport, boolean hostDecides, boolean trustClaims) {
    host = new FakeHost();
    host.implementsToolConnected = hostDecides;
    ServerOptions opts =
        EmbeddedCore.options()
            .serverRank(SERVER_RANK)
            .trustClaimedCredentials(trustClaims)
            .toolSupport(toolSupport)
            .build();
    fx = new EmbeddedCore(host, opts, false, UID, GID);
    loopOwner = fx.loopOwner;
    core = fx.core;
  }

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  private EmbeddedChannel newChannel() {
    return fx.channel();
  }

  private static ConnectRequest.Builder tool(ConnectorKind kind, int uid, int gid) {
    ConnectRequest.Builder b =
        ConnectRequest.builder()
            .security("native", new NativeCredential(uid, gid).toBytes())
            .kind(kind)
            .ids(uid, gid)
            .version("4.2.2rc2")
            .padPresent(true);
    return b;
  }

  private void send(EmbeddedChannel ch, ConnectRequest req) {
    ByteBuf b = ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req);
    assertFalse(ch.writeInbound(b));
    loopOwner.runPendingTasks();
  }

  /** Lets the host's pending answer reach the core. */
  private void answer(@Nullable Proc proc, @Nullable Status failure) {
    CompletableFuture<Proc> f = host.answer;
    assertTrue(f != null, "tool_connected was not called");
    if (failure != null) {
      f.completeExceptionally(new PmixException(failure, "refused"));
    } else {
      f.complete(proc);
    }
    loopOwner.runPendingTasks();
  }

  private static byte[] fix256(String s) {
    byte[] out = new byte[256];
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    System.arraycopy(b, 0, out, 0, b.length);
    return out;
  }

  private static byte[] expectedReply(@Nullable Proc assigned) {
    ByteBuf b = Unpooled.buffer();
    b.writeInt(0);
    if (assigned != null) {
      b.writeBytes(fix256(assigned.nspace())).writeInt(assigned.rank());
    }
    b.writeBytes(fix256("pmix-server")).writeInt(SERVER_RANK).writeInt(0);
    byte[] out = ByteBufUtil.getBytes(b);
    b.release();
    return out;
  }

  @CanIgnoreReturnValue
  private static byte[] readAll(EmbeddedChannel ch) {
    ByteBuf all = Unpooled.buffer();
    for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
      all.writeBytes(b);
      b.release();
    }
    byte[] out = ByteBufUtil.getBytes(all);
    all.release();
    return out;
  }

  private void finalizeAndClose(EmbeddedChannel ch, int tag) {
    ch.writeInbound(frame(tag, w -> w.packByteEnum(DataType.COMMAND, 5)));
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag)));
    assertEquals(Status.SUCCESS, r.unpackStatus());
    var unused = ch.close();
    loopOwner.runPendingTasks();
  }

  // ---- reply layouts ----

  @Test
  void toolNeedingAnIdGetsTheHostsIdentityIn528Bytes() {
    start(true, true);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).padPresent(false).infoBlob(BLOB_11_3).build());
    assertNull(ch.readOutbound(), "nothing may be sent before the host decided");
    // tool_connected sees the decoded blob, then version, euid, egid (docs/transport.md §7.2).
    assertEquals(
        List.of(
            Info.of("pmix.ppid", Value.pid(13122)),
            Info.of("pmix.cmd.line", Value.of("./tool")),
            Info.of(Keys.VERSION_INFO, Value.of("4.2.2rc2")),
            Info.of(Keys.USERID, Value.uint32(Integer.toUnsignedLong(UID))),
            Info.of(Keys.GRPID, Value.uint32(Integer.toUnsignedLong(GID)))),
        host.toolCalls.get(0));
    answer(Proc.of("tool-ns-1", 0), null);
    byte[] reply = readAll(ch);
    assertEquals(528, reply.length);
    assertArrayEquals(expectedReply(Proc.of("tool-ns-1", 0)), reply);
    ServerSnapshot.PeerView pv = core.snapshot().peers().get(0);
    assertEquals("tool-ns-1", pv.nspace());
    assertEquals(ServerSnapshot.Role.TOOL, pv.role());
  }

  @ParameterizedTest
  @EnumSource(
      value = ConnectorKind.class,
      names = {"TOOL_GIVEN_ID", "TOOL_CLIENT", "LAUNCHER_GIVEN_ID", "LAUNCHER_CLIENT"})
  void connectorsWithAnIdentityGetTheServerIdentityIn268Bytes(ConnectorKind kind) {
    start(true, true);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(kind, UID, GID).procId("mytool", 7).build());
    List<Info> seen = host.toolCalls.get(0);
    assertEquals(
        List.of(
            Info.of(Keys.VERSION_INFO, Value.of("4.2.2rc2")),
            Info.of(Keys.USERID, Value.uint32(Integer.toUnsignedLong(UID))),
            Info.of(Keys.GRPID, Value.uint32(Integer.toUnsignedLong(GID))),
            Info.of(Keys.NSPACE, Value.of("mytool")),
            Info.of(Keys.RANK, Value.rank(7))),
        seen);
    answer(Proc.of("mytool", 7), null);
    assertArrayEquals(expectedReply(null), readAll(ch));
    ServerSnapshot.PeerView pv = core.snapshot().peers().get(0);
    assertEquals(
        kind.isLauncher() ? ServerSnapshot.Role.LAUNCHER : ServerSnapshot.Role.TOOL, pv.role());
    assertEquals(7, pv.rank());
  }

  @Test
  void launcherNeedingAnIdGetsOneToo() {
    start(true, true);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.LAUNCHER_NEEDS_ID, UID, GID).build());
    answer(Proc.of("launcher-ns", 0), null);
    assertArrayEquals(expectedReply(Proc.of("launcher-ns", 0)), readAll(ch));
    assertEquals(ServerSnapshot.Role.LAUNCHER, core.snapshot().peers().get(0).role());
  }

  @Test
  void withoutAHostDecisionTheServerAssignsNamespacesOfItsOwn() {
    start(true, false);
    EmbeddedChannel a = newChannel();
    send(a, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    assertArrayEquals(expectedReply(Proc.of("pmix-server-tool-1", 0)), readAll(a));
    EmbeddedChannel b = newChannel();
    send(b, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    assertArrayEquals(expectedReply(Proc.of("pmix-server-tool-2", 0)), readAll(b));
    EmbeddedChannel c = newChannel();
    send(c, tool(ConnectorKind.TOOL_GIVEN_ID, UID, GID).procId("mine", 3).build());
    assertArrayEquals(expectedReply(null), readAll(c));
    assertEquals("mine", core.snapshot().peers().get(2).nspace());
  }

  // ---- refusals: always a close without a byte ----

  @Test
  void refusalsCloseWithoutAByte() {
    start(true, true);
    // The host says no.
    EmbeddedChannel refused = newChannel();
    send(refused, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    answer(null, Status.ERR_UNREACH);
    assertNull(refused.readOutbound());
    assertFalse(refused.isActive());
    // A credential that contradicts the identity block (4.2.2 would send -12 and hang the tool).
    EmbeddedChannel forged = newChannel();
    ConnectRequest r =
        ConnectRequest.builder()
            .security("native", new NativeCredential(UID + 1, GID).toBytes())
            .kind(ConnectorKind.TOOL_NEEDS_ID)
            .ids(UID, GID)
            .build();
    send(forged, r);
    assertNull(forged.readOutbound());
    assertFalse(forged.isActive());
    // Legacy flags.
    EmbeddedChannel legacy = newChannel();
    send(legacy, tool(ConnectorKind.LEGACY_TOOL, UID, GID).build());
    assertFalse(legacy.isActive());
    // A rank of a host namespace the host did not register.
    assertEquals(Status.SUCCESS, core.registerNspace("job", 1, List.of()));
    EmbeddedChannel intruder = newChannel();
    send(intruder, tool(ConnectorKind.TOOL_CLIENT, UID, GID).procId("job", 5).build());
    answer(Proc.of("job", 5), null);
    assertNull(intruder.readOutbound());
    assertFalse(intruder.isActive());
    assertTrue(core.snapshot().peers().isEmpty());
  }

  @Test
  void aToolWhoseSocketOwnerIsUnknownIsClosedUnlessClaimsAreTrusted() {
    // No socket owner lookup on an embedded channel: the kernel's word is missing.
    start(true, true, false);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    assertTrue(host.toolCalls.isEmpty(), "the host is not asked about an unverified tool");
    assertNull(ch.readOutbound());
    assertFalse(ch.isActive());
  }

  @Test
  void withoutToolSupportToolsAreClosed() {
    start(false, true);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    assertTrue(host.toolCalls.isEmpty());
    assertNull(ch.readOutbound());
    assertFalse(ch.isActive());
  }

  @Test
  void withoutAHostDecisionOnlyTheServersUserIsAccepted() {
    start(true, false);
    int other = UID == 0 ? 4660 : UID + 1;
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, other, GID).build());
    assertNull(ch.readOutbound());
    assertFalse(ch.isActive());
  }

  @Test
  void aToolThatLeavesBeforeTheHostAnswersLeavesNothing() {
    start(true, true);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    var unused = ch.close();
    answer(Proc.of("late", 0), null);
    assertTrue(core.snapshot().peers().isEmpty());
    assertTrue(core.snapshot().namespace("late").isEmpty());
  }

  // ---- lifetime ----

  @Test
  void aPureToolIsFreedAtCloseWithTheNamespaceMadeForIt() {
    start(true, false);
    for (int i = 0; i < 20; i++) {
      EmbeddedChannel ch = newChannel();
      send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
      assertEquals(528, readAll(ch).length);
      finalizeAndClose(ch, 101);
    }
    ServerSnapshot s = core.snapshot();
    assertTrue(s.peers().isEmpty(), s.toJson());
    assertTrue(s.namespaces().isEmpty(), s.toJson());
  }

  @Test
  void toolsSharingAnIdentityShareTheRankUntilTheLastLeaves() {
    start(true, false);
    EmbeddedChannel a = newChannel();
    send(a, tool(ConnectorKind.TOOL_GIVEN_ID, UID, GID).procId("twin", 0).build());
    readAll(a);
    EmbeddedChannel b = newChannel();
    send(b, tool(ConnectorKind.TOOL_GIVEN_ID, UID, GID).procId("twin", 0).build());
    readAll(b);
    ServerSnapshot.RankView rv = core.snapshot().namespace("twin").orElseThrow().ranks().get(0);
    assertEquals(2, rv.procCount());
    assertEquals(1, rv.peerIndex());
    // The newer leaves: the rank's index is repointed to the survivor.
    finalizeAndClose(b, 101);
    rv = core.snapshot().namespace("twin").orElseThrow().ranks().get(0);
    assertEquals(1, rv.procCount());
    assertEquals(0, rv.peerIndex());
    finalizeAndClose(a, 101);
    assertTrue(core.snapshot().namespace("twin").isEmpty());
    assertTrue(core.snapshot().peers().isEmpty());
  }

  @ParameterizedTest
  @EnumSource(value = ConnectorKind.class, names = {"TOOL_CLIENT", "LAUNCHER_CLIENT"})
  void aLauncherChildOnARegisteredRankKeepsTheClientLifecycle(ConnectorKind kind) {
    start(true, false);
    assertEquals(Status.SUCCESS, core.registerNspace("job", 1, List.of()));
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("job", 0), UID, GID, null));
    for (int cycle = 0; cycle < 3; cycle++) {
      EmbeddedChannel ch = newChannel();
      send(ch, tool(kind, UID, GID).procId("job", 0).build());
      assertArrayEquals(expectedReply(null), readAll(ch));
      finalizeAndClose(ch, 101);
      ServerSnapshot s = core.snapshot();
      // One tombstone at the rank's index, reclaimed by the next cycle.
      assertEquals(1, s.peers().size(), s.toJson());
      assertEquals(ServerSnapshot.PeerState.TOMBSTONE, s.peers().get(0).state());
      ServerSnapshot.RankView rv = s.namespace("job").orElseThrow().ranks().get(0);
      assertEquals(0, rv.procCount());
      assertEquals(s.peers().get(0).index(), rv.peerIndex());
      assertEquals(1, s.namespace("job").orElseThrow().nfinalized(), s.toJson());
    }
    // Its uid must be the registered one.
    EmbeddedChannel other = newChannel();
    send(other, tool(kind, UID, GID + 1).procId("job", 0).build());
    assertFalse(other.isActive());
  }

  // ---- REQ ----

  @Test
  void reqReplyOfAToolIsItsNamespaceAndVersion() {
    start(true, true);
    EmbeddedChannel ch = newChannel();
    send(ch, tool(ConnectorKind.TOOL_NEEDS_ID, UID, GID).build());
    answer(Proc.of("tool-ns-1", 0), null);
    readAll(ch);
    ch.writeInbound(frame(101, w -> w.packByteEnum(DataType.COMMAND, 0)));
    // docs/transport.md §11.3: 41 bytes.
    byte[] expected =
        ByteBufUtil.decodeHexDump(
            "0214746f6f6c2d6e732d3100"
                + "0220706d69782e626672" + "6f70732e6d6f6400" + "03" + "12342e322e3272633200");
    assertArrayEquals(expected, readFrame(ch, 101));
  }
}
