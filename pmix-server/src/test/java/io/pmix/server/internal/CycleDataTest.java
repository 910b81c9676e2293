package io.pmix.server.internal;

import static io.pmix.server.internal.EmbeddedCore.command;
import static io.pmix.server.internal.EmbeddedCore.readFrame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.server.HostModule;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A rank's committed data belongs to one init/finalize cycle (init-finalize-lifecycle.txt 6.2.4
 * "Reclaim on reconnect", 6.2.10 "No cross-cycle carryover"): it stays readable through the
 * tombstone until the rank reconnects, and the reconnect that reclaims the tombstone starts the
 * rank on a clean slate; a connection that reclaims nothing (a clone while the rank's process still
 * runs) keeps it (issue #19: every key of every cycle was kept and re-sent).
 */
class CycleDataTest {
  private static final int UID = 0x1234;
  private static final int GID = 0x5678;
  private static final int COMMIT = 2;
  private static final int GETNB = 4;
  private static final int FINALIZE = 5;
  private static final int SCOPE_GLOBAL = 3;

  private EmbeddedCore fx;

  @BeforeEach
  void setUp() {
    fx = new EmbeddedCore(new HostModule() {}, EmbeddedCore.options().build(), true, UID, GID);
    fx.registerLocal("job", 2);
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  private EmbeddedChannel connect(int rank) {
    EmbeddedChannel ch = fx.connectClient("job", rank);
    ByteBuf reply = ch.readOutbound();
    assertTrue(reply != null, "refused");
    reply.release();
    return ch;
  }

  private static Status status(EmbeddedChannel ch, int tag) {
    return new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag))).unpackStatus();
  }

  private static void commit(EmbeddedChannel ch, int tag, String key, int value) {
    ch.writeInbound(
        command(
            tag,
            COMMIT,
            w -> {
              ByteBuf inner = Unpooled.buffer();
              new PmixWriter(inner).pack(new Value.KVal(key, Value.uint32(value)));
              w.packByteEnum(DataType.SCOPE, SCOPE_GLOBAL);
              w.pack(new Value.Buffer(1, ByteBufUtil.getBytes(inner)));
              inner.release();
            }));
    assertEquals(Status.SUCCESS, status(ch, tag));
  }

  private void finalizeAndClose(EmbeddedChannel ch, int tag) {
    ch.writeInbound(command(tag, FINALIZE, w -> {}));
    fx.loopOwner.runPendingTasks();
    assertEquals(Status.SUCCESS, status(ch, tag));
    ChannelFuture unused = ch.close();
  }

  private static void sendGet(EmbeddedChannel ch, int tag, int rank, String key, boolean immediate) {
    List<Info> info = immediate ? List.of(Info.of(Keys.IMMEDIATE, Value.of(true))) : List.of();
    ch.writeInbound(
        command(
            tag,
            GETNB,
            w -> {
              w.packString("job");
              w.packRank(rank);
              w.packSize(info.size());
              if (!info.isEmpty()) {
                w.packInfos(info);
              }
              w.packString(key);
            }));
  }

  /** The keys of the rank's data a successful GET reply carries, in order. */
  private static List<String> keysOfReply(EmbeddedChannel ch, int tag) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag)));
    assertEquals(Status.SUCCESS, r.unpackStatus());
    PmixReader blob =
        new PmixReader(Unpooled.wrappedBuffer(r.unpackOne(DataType.BYTE_OBJECT).asBytes()));
    blob.unpackProc();
    List<String> keys = new ArrayList<>();
    while (blob.hasRemaining()) {
      keys.add(((Value.KVal) blob.unpackOne(DataType.KVAL)).key());
    }
    return keys;
  }

  @Test
  void theReconnectThatReclaimsTheTombstoneDropsTheRanksOldData() {
    EmbeddedChannel peer = connect(1);
    EmbeddedChannel r0 = connect(0);
    commit(r0, 101, "cycle.0", 0);
    finalizeAndClose(r0, 102);
    // Between the cycles the tombstone still serves the finalized cycle's data (6.2.4).
    sendGet(peer, 201, 0, "cycle.0", false);
    assertEquals(List.of("cycle.0"), keysOfReply(peer, 201));

    EmbeddedChannel again = connect(0);
    // The new cycle has not committed: nothing of the old one is served, not even IMMEDIATE.
    sendGet(peer, 202, 0, "cycle.0", true);
    assertEquals(Status.ERR_NOT_FOUND, status(peer, 202));
    commit(again, 103, "cycle.1", 1);
    sendGet(peer, 203, 0, "cycle.1", false);
    assertEquals(List.of("cycle.1"), keysOfReply(peer, 203));
  }

  @Test
  void aGetWaitsForTheNewCyclesCommitRatherThanTakingTheOldData() {
    EmbeddedChannel peer = connect(1);
    EmbeddedChannel r0 = connect(0);
    commit(r0, 101, "k", 0);
    finalizeAndClose(r0, 102);
    EmbeddedChannel again = connect(0);
    sendGet(peer, 201, 0, "k", false);
    assertNull(peer.readOutbound(), "the GET must wait for the new cycle's commit");
    commit(again, 103, "k", 1);
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(peer, 201)));
    assertEquals(Status.SUCCESS, r.unpackStatus());
    PmixReader blob =
        new PmixReader(Unpooled.wrappedBuffer(r.unpackOne(DataType.BYTE_OBJECT).asBytes()));
    assertEquals(Proc.of("job", 0), blob.unpackProc());
    assertEquals(new Value.KVal("k", Value.uint32(1)), blob.unpackOne(DataType.KVAL));
  }

  @Test
  void aCloneOfARunningRankReclaimsNothingAndKeepsItsData() {
    EmbeddedChannel peer = connect(1);
    EmbeddedChannel parent = connect(0);
    commit(parent, 101, "parent.key", 0);
    EmbeddedChannel clone = connect(0);
    sendGet(peer, 201, 0, "parent.key", false);
    assertEquals(List.of("parent.key"), keysOfReply(peer, 201));
    commit(clone, 102, "clone.key", 1);
    // The parent finalizes and leaves; the clone still runs: a third process of the rank
    // reconnecting now reclaims nothing (the clone is live), so the running data stays.
    finalizeAndClose(parent, 103);
    EmbeddedChannel third = connect(0);
    sendGet(peer, 202, 0, "parent.key", false);
    assertEquals(List.of("parent.key", "clone.key"), keysOfReply(peer, 202));
    assertTrue(third.isActive());
  }

  @Test
  void aRankThatDiedAndIsStartedAgainBeginsClean() {
    EmbeddedChannel peer = connect(1);
    EmbeddedChannel r0 = connect(0);
    commit(r0, 101, "before.death", 0);
    ChannelFuture unused = r0.close(); // died without finalizing: a lost peer
    EmbeddedChannel restarted = connect(0);
    sendGet(peer, 201, 0, "before.death", true);
    assertEquals(Status.ERR_NOT_FOUND, status(peer, 201));
    commit(restarted, 102, "after.restart", 1);
    sendGet(peer, 202, 0, "after.restart", false);
    assertEquals(List.of("after.restart"), keysOfReply(peer, 202));
  }

  @Test
  void manyCyclesKeepTheReplyFlat() {
    EmbeddedChannel peer = connect(1);
    int firstSize = -1;
    for (int cycle = 0; cycle < 200; cycle++) {
      EmbeddedChannel r0 = connect(0);
      // One value for every cycle (a varint grows past 127): only the key's text changes.
      commit(r0, 101, "cycle." + cycle, 7);
      sendGet(peer, 201, 0, "cycle." + cycle, false);
      byte[] reply = readFrame(peer, 201);
      if (firstSize < 0) {
        firstSize = reply.length;
      }
      // The key's text grows by a digit or two; the reply must not grow with the cycles.
      assertTrue(reply.length <= firstSize + 2, "cycle " + cycle + ": " + reply.length + " bytes");
      finalizeAndClose(r0, 102);
    }
  }
}
