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
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.server.HostModule;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.ServerSnapshot.NamespaceView;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Singletons (connect flag 9) on {@link EmbeddedChannel}s, credentials taken as claimed: a
 * singleton may only live in a namespace the host did not register, a singleton namespace belongs
 * to the uid that made it, and everything a singleton made is freed when its last connection ends
 * (issue #19: rank injection into a host's job; a namespace and a lost peer left per singleton).
 */
class SingletonAdmissionTest {
  private static final int UID = 0x1234;
  private static final int GID = 0x5678;
  private static final int OTHER_UID = 0x4321;
  private static final int OTHER_GID = 0x8765;
  private static final int FINALIZE = 5;
  private static final int FENCENB = 3;

  private EmbeddedCore fx;
  private ServerCore core;

  @BeforeEach
  void setUp() {
    fx = new EmbeddedCore(new HostModule() {}, EmbeddedCore.options().build(), true, UID, GID);
    core = fx.core;
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  private static ConnectRequest singleton(
      String nspace, int rank, int uid, int gid, String version) {
    return ConnectRequest.builder()
        .security("native", new NativeCredential(uid, gid).toBytes())
        .kind(ConnectorKind.SINGLETON_CLIENT)
        .ids(uid, gid)
        .procId(nspace, rank)
        .version(version)
        .padPresent(true)
        .build();
  }

  /** Sends a 4.2.2 singleton's request; the channel with its reply (if any) queued. */
  private EmbeddedChannel connectSingleton(String nspace, int rank, int uid, int gid) {
    return send(singleton(nspace, rank, uid, gid, "4.2.2rc2"));
  }

  private EmbeddedChannel send(ConnectRequest req) {
    EmbeddedChannel ch = fx.channel();
    assertFalse(ch.writeInbound(ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req)));
    return ch;
  }

  /** The channel was closed without a byte written: the refusal every C connector understands. */
  private static void assertRefused(EmbeddedChannel ch) {
    assertNull(ch.readOutbound(), "a refusal writes nothing");
    assertFalse(ch.isActive(), "a refusal closes the socket");
  }

  /** The 4.2.2 singleton's reply (the 268-byte tool layout, status 0) was written. */
  private static void assertAccepted(EmbeddedChannel ch) {
    ByteBuf reply = ch.readOutbound();
    assertTrue(reply != null, "refused");
    try {
      assertEquals(268, reply.readableBytes());
      assertEquals(0, reply.readInt());
    } finally {
      reply.release();
    }
    assertTrue(ch.isActive());
  }

  private static void close(EmbeddedChannel ch) {
    ChannelFuture unused = ch.close();
  }

  private NamespaceView ns(String nspace) {
    return core.snapshot().namespace(nspace).orElseThrow();
  }

  // ---- rank injection ----

  @Test
  void aSingletonClaimingAnUnregisteredRankOfAHostJobIsRefusedAndChangesNothing() {
    fx.registerLocal("job", 4);
    // Another user, and the job's own user: neither may add a rank to the host's job.
    for (int[] ids : new int[][] {{OTHER_UID, OTHER_GID}, {UID, GID}}) {
      EmbeddedChannel hostile = connectSingleton("job", 7, ids[0], ids[1]);
      assertRefused(hostile);
    }
    // A registered rank, by another user or its own: refused as well (a singleton is no client).
    assertRefused(connectSingleton("job", 3, OTHER_UID, OTHER_GID));
    assertRefused(connectSingleton("job", 3, UID, GID));
    ServerSnapshot s = core.snapshot();
    assertTrue(s.peers().isEmpty(), s::toString);
    assertEquals(4, ns("job").nlocalprocs());
    assertEquals(List.of(0, 1, 2, 3), List.copyOf(ns("job").ranks().keySet()));
  }

  @Test
  void theJobsWildcardFenceStillWaitsForEveryRealRankAfterAnInjectionAttempt() {
    fx.registerLocal("job", 2);
    EmbeddedChannel r0 = connectClientOk("job", 0);
    EmbeddedChannel r1 = connectClientOk("job", 1);
    EmbeddedChannel hostile = connectSingleton("job", 5, OTHER_UID, OTHER_GID);
    close(hostile);
    r0.writeInbound(
        command(
            101,
            FENCENB,
            w -> {
              w.packSize(1);
              w.packProc(Proc.wildcard("job"));
              w.packSize(0);
            }));
    assertNull(r0.readOutbound(), "the fence must wait for rank 1");
    assertEquals(2, ns("job").nlocalprocs());
    r1.writeInbound(
        command(
            102,
            FENCENB,
            w -> {
              w.packSize(1);
              w.packProc(Proc.wildcard("job"));
              w.packSize(0);
            }));
    assertEquals(Status.SUCCESS, status(r0, 101));
    assertEquals(Status.SUCCESS, status(r1, 102));
  }

  @Test
  void aNamespaceTheHostOnlyRegisteredClientsInIsTheHostsToo() {
    // register-client before register-nspace leaves a placeholder: still the host's.
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("early", 0), UID, GID, null));
    assertRefused(connectSingleton("early", 1, OTHER_UID, OTHER_GID));
    assertRefused(connectSingleton("early", 0, UID, GID));
    assertEquals(List.of(0), List.copyOf(ns("early").ranks().keySet()));
  }

  @Test
  void aSingletonNamespaceBelongsToTheUidThatMadeIt() {
    EmbeddedChannel mine = connectSingleton("singleton.vm.4711", 0, UID, GID);
    assertAccepted(mine);
    // Another user cannot join it, under another rank or the same one.
    assertRefused(connectSingleton("singleton.vm.4711", 1, OTHER_UID, OTHER_GID));
    assertRefused(connectSingleton("singleton.vm.4711", 0, OTHER_UID, OTHER_GID));
    // Its maker can (a forked child of the singleton, say).
    EmbeddedChannel child = connectSingleton("singleton.vm.4711", 0, UID, GID);
    assertAccepted(child);
    assertEquals(2, core.snapshot().peers().size());
    assertEquals(List.of(0), List.copyOf(ns("singleton.vm.4711").ranks().keySet()));
  }

  @Test
  void aHostRegistrationTakesANamespaceBackFromASingletonThatSquattedIt() {
    // A singleton takes the name of a job the host has not registered yet.
    EmbeddedChannel squatter = connectSingleton("job", 2, OTHER_UID, OTHER_GID);
    assertAccepted(squatter);
    fx.registerLocal("job", 2);
    assertFalse(squatter.isActive(), "the squatter's connection must be closed");
    ServerSnapshot s = core.snapshot();
    assertTrue(s.peers().isEmpty(), s::toString);
    NamespaceView job = ns("job");
    assertTrue(job.registered());
    assertEquals(2, job.nlocalprocs());
    assertEquals(List.of(0, 1), List.copyOf(job.ranks().keySet()));
    // The job works as registered.
    EmbeddedChannel r0 = connectClientOk("job", 0);
    assertTrue(r0.isActive());
  }

  @Test
  void aHostRegisteringAClientInASquattedNamespaceTakesItBackToo() {
    EmbeddedChannel squatter = connectSingleton("job", 0, OTHER_UID, OTHER_GID);
    assertAccepted(squatter);
    assertEquals(Status.SUCCESS, core.registerClient(Proc.of("job", 0), UID, GID, null));
    assertFalse(squatter.isActive());
    assertTrue(core.snapshot().peers().isEmpty());
    assertEquals(UID, ns("job").ranks().get(0).uid());
    assertEquals(-1, ns("job").ranks().get(0).peerIndex());
  }

  @Test
  void aSingletonOfTheClientLayoutFollowsTheSameRules() {
    fx.registerLocal("job", 2);
    // OpenPMIx 5.0.9 and later singletons read the client layout (8 bytes).
    assertRefused(send(singleton("job", 1, UID, GID, "5.0.9")));
    assertRefused(send(singleton("job", 9, OTHER_UID, OTHER_GID, "5.0.9")));
    EmbeddedChannel own = send(singleton("singleton.vm.99", 0, UID, GID, "5.0.9"));
    ByteBuf reply = own.readOutbound();
    assertTrue(reply != null, "refused");
    try {
      assertEquals(8, reply.readableBytes());
      assertEquals(0, reply.readInt());
    } finally {
      reply.release();
    }
    assertEquals(ServerSnapshot.Role.SINGLETON, core.snapshot().peers().get(0).role());
    assertEquals(2, ns("job").nlocalprocs());
  }

  // ---- what a singleton leaves behind ----

  @Test
  void aSingletonThatDiesLeavesNothing() {
    EmbeddedChannel s = connectSingleton("singleton.vm.1", 0, OTHER_UID, OTHER_GID);
    assertAccepted(s);
    close(s);
    ServerSnapshot snap = core.snapshot();
    assertTrue(snap.peers().isEmpty(), snap::toString);
    assertTrue(snap.namespaces().isEmpty(), snap::toString);
    assertTrue(snap.references().isEmpty(), snap::toString);
  }

  @Test
  void aSingletonThatFinalizesLeavesNothing() {
    EmbeddedChannel s = connectSingleton("singleton.vm.2", 0, UID, GID);
    assertAccepted(s);
    s.writeInbound(command(101, FINALIZE, w -> {}));
    fx.loopOwner.runPendingTasks();
    assertEquals(Status.SUCCESS, status(s, 101));
    close(s);
    ServerSnapshot snap = core.snapshot();
    assertTrue(snap.peers().isEmpty(), snap::toString);
    assertTrue(snap.namespaces().isEmpty(), snap::toString);
  }

  @Test
  void aSingletonNamespaceGoesWithItsLastConnection() {
    EmbeddedChannel parent = connectSingleton("singleton.vm.3", 0, UID, GID);
    assertAccepted(parent);
    EmbeddedChannel child = connectSingleton("singleton.vm.3", 0, UID, GID);
    assertAccepted(child);
    close(parent);
    ServerSnapshot snap = core.snapshot();
    assertEquals(1, snap.peers().size(), snap::toString);
    assertEquals(1, ns("singleton.vm.3").ranks().get(0).procCount());
    close(child);
    snap = core.snapshot();
    assertTrue(snap.peers().isEmpty(), snap::toString);
    assertTrue(snap.namespaces().isEmpty(), snap::toString);
    // The name is free again: a new singleton of another user may take it.
    assertAccepted(connectSingleton("singleton.vm.3", 0, OTHER_UID, OTHER_GID));
  }

  @Test
  void manySingletonsInARowLeaveNothing() {
    for (int i = 0; i < 500; i++) {
      EmbeddedChannel s = connectSingleton("singleton.vm." + i, 0, OTHER_UID, OTHER_GID);
      assertAccepted(s);
      close(s);
    }
    ServerSnapshot snap = core.snapshot();
    assertTrue(snap.peers().isEmpty(), snap::toString);
    assertTrue(snap.namespaces().isEmpty(), snap::toString);
  }

  // ---- helpers ----

  private EmbeddedChannel connectClientOk(String nspace, int rank) {
    EmbeddedChannel ch = fx.connectClient(nspace, rank);
    ByteBuf reply = ch.readOutbound();
    assertTrue(reply != null, "client refused");
    reply.release();
    return ch;
  }

  private static Status status(EmbeddedChannel ch, int tag) {
    return new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag))).unpackStatus();
  }
}
