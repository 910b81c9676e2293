package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.message.GroupConstructReply;
import io.pmix.server.HostModule;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GROUP_CONSTRUCT and GROUP_DESTRUCT in the server core, on embedded channels: the local
 * collective completed without the host, the host asked only for a context id (once, with every
 * caller's directives), each client answered in its version's layout, 4.2.2's destruct by id
 * alone, groups of the same members but different ids kept apart, a member lost mid-construct,
 * and a host without the upcall.
 */
@Timeout(30)
class ServerGroupsTest {
  private static final int UID = 0x1234;
  private static final int GID = 0x5678;
  private static final int CONSTRUCT = 24;
  private static final int DESTRUCT = 28;

  /** Records group upcalls; completes them when told to. */
  private static final class RecordingHost implements HostModule {
    final List<String> calls = new ArrayList<>();
    final List<List<Info>> infos = new ArrayList<>();
    final List<CompletableFuture<List<Info>>> pending = new ArrayList<>();

    @Override
    public CompletionStage<List<Info>> groupConstruct(
        String groupId, List<Proc> procs, List<Info> info) {
      calls.add("construct " + groupId + " " + procs);
      infos.add(info);
      CompletableFuture<List<Info>> f = new CompletableFuture<>();
      pending.add(f);
      return f;
    }
  }

  private EmbeddedCore fx;

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  private void start(HostModule host) {
    fx = new EmbeddedCore(host, EmbeddedCore.options().build(), true, UID, GID);
  }

  private EmbeddedChannel client(String nspace, int rank, String version) {
    EmbeddedChannel ch = fx.connectClient(nspace, rank, version);
    ByteBuf reply = ch.readOutbound();
    reply.release();
    return ch;
  }

  private static ByteBuf construct(int tag, String id, List<Proc> procs, List<Info> info) {
    return EmbeddedCore.command(
        tag,
        CONSTRUCT,
        w -> {
          w.packString(id);
          w.packSize(procs.size());
          w.pack(DataType.PROC, procs);
          w.packSize(info.size());
          if (!info.isEmpty()) {
            w.packInfos(info);
          }
        });
  }

  /** A destruct: with the members (5.0+), or by id alone (4.2.2) when {@code members} is empty. */
  private static ByteBuf destruct(int tag, String id, List<Proc> members) {
    return EmbeddedCore.command(
        tag,
        DESTRUCT,
        w -> {
          w.packString(id);
          if (!members.isEmpty()) {
            w.packSize(members.size());
            w.pack(DataType.PROC, members);
          }
          w.packSize(0);
        });
  }

  private PmixReader reply(EmbeddedChannel ch, int tag) {
    fx.loopOwner.runPendingTasks();
    return new PmixReader(Unpooled.wrappedBuffer(EmbeddedCore.readFrame(ch, tag)));
  }

  private GroupConstructReply constructReply(
      EmbeddedChannel ch, int tag, GroupConstructReply.Layout layout) {
    return GroupConstructReply.decode(reply(ch, tag), layout);
  }

  private static final List<Proc> PAIR = List.of(Proc.of("job", 0), Proc.of("job", 1));
  private static final Info ACTXID = Info.of(Keys.GROUP_ASSIGN_CONTEXT_ID, Value.of(true));

  @Test
  void aLocalGroupWithoutAContextIdCompletesWithoutTheHostInEachClientsLayout() {
    RecordingHost host = new RecordingHost();
    start(host);
    fx.registerLocal("job", 2);
    EmbeddedChannel c0 = client("job", 0, "4.2.2rc2");
    EmbeddedChannel c1 = client("job", 1, "5.0.11rc1");
    c1.writeInbound(construct(101, "g", PAIR, List.of()));
    fx.loopOwner.runPendingTasks();
    assertNull(c1.readOutbound(), "completes only when every member has called");
    c0.writeInbound(construct(102, "g", PAIR, List.of()));
    GroupConstructReply r0 = constructReply(c0, 102, GroupConstructReply.Layout.V4);
    GroupConstructReply r1 = constructReply(c1, 101, GroupConstructReply.Layout.V5);
    assertEquals(Status.SUCCESS, r0.status());
    assertEquals(OptionalLong.empty(), r0.contextId());
    assertEquals(Status.SUCCESS, r1.status());
    assertEquals(PAIR, r1.members());
    assertEquals(OptionalLong.empty(), r1.contextId());
    assertTrue(host.calls.isEmpty(), host.calls::toString);

    // 4.2.2 destructs by id alone (the server recorded the members), 5.0 with the members.
    c0.writeInbound(destruct(103, "g", List.of()));
    c1.writeInbound(destruct(104, "g", PAIR));
    assertEquals(Status.SUCCESS, reply(c0, 103).unpackStatus());
    assertEquals(Status.SUCCESS, reply(c1, 104).unpackStatus());
    // Now the server knows no such group: a 4.2.2 destruct of it is NOT_FOUND at once.
    c0.writeInbound(destruct(105, "g", List.of()));
    assertEquals(Status.ERR_NOT_FOUND, reply(c0, 105).unpackStatus());
  }

  @Test
  void aContextIdComesFromTheHostOnceForEveryMember() {
    RecordingHost host = new RecordingHost();
    start(host);
    fx.registerLocal("job", 2);
    EmbeddedChannel c0 = client("job", 0, "6.1.0");
    EmbeddedChannel c1 = client("job", 1, "7.0.0a1");
    Info lclid =
        Info.of(Keys.GROUP_INFO, io.pmix.common.DataArray.ofInfos(List.of(
            Info.of(Keys.GROUP_LOCAL_CID, Value.size(5)))));
    c0.writeInbound(construct(101, "ctx", PAIR, List.of(ACTXID, lclid)));
    c1.writeInbound(construct(102, "ctx", PAIR, List.of(ACTXID)));
    fx.loopOwner.runPendingTasks();
    assertEquals(List.of("construct ctx " + PAIR), host.calls);
    List<Info> info = host.infos.get(0);
    assertEquals(2, info.stream().filter(i -> i.key().equals(ACTXID.key())).count(),
        info::toString);
    assertTrue(info.contains(Info.of(Keys.SORTED_PROC_ARRAY, Value.of(true))), info::toString);
    host.pending.get(0).complete(List.of(Info.of(Keys.GROUP_CONTEXT_ID, Value.size(42))));
    List<EmbeddedChannel> members = List.of(c0, c1);
    for (int i = 0; i < 2; i++) {
      GroupConstructReply r =
          constructReply(members.get(i), 101 + i, GroupConstructReply.Layout.V6);
      assertEquals(Status.SUCCESS, r.status());
      assertEquals(OptionalLong.of(42), r.contextId());
      assertEquals(PAIR, r.members());
      assertEquals(List.of(lclid), r.groupInfo());
    }
  }

  @Test
  void groupsOfTheSameMembersButDifferentIdsDoNotMerge() {
    start(new RecordingHost());
    fx.registerLocal("job", 2);
    EmbeddedChannel c0 = client("job", 0, "5.0.11");
    EmbeddedChannel c1 = client("job", 1, "5.0.11");
    c0.writeInbound(construct(101, "a", PAIR, List.of()));
    c1.writeInbound(construct(102, "b", PAIR, List.of()));
    fx.loopOwner.runPendingTasks();
    assertNull(c0.readOutbound());
    assertNull(c1.readOutbound());
    c0.writeInbound(construct(103, "b", PAIR, List.of()));
    c1.writeInbound(construct(104, "a", PAIR, List.of()));
    // c0's "b" completes first (c1 was waiting in it), then "a".
    for (int tag : new int[] {103, 101}) {
      assertEquals(Status.SUCCESS,
          constructReply(c0, tag, GroupConstructReply.Layout.V5).status());
    }
    for (int tag : new int[] {102, 104}) {
      assertEquals(Status.SUCCESS,
          constructReply(c1, tag, GroupConstructReply.Layout.V5).status());
    }
  }

  @Test
  void aMemberLostMidConstructFailsItForTheOthers() {
    RecordingHost host = new RecordingHost();
    start(host);
    fx.registerLocal("job", 3);
    EmbeddedChannel[] c = new EmbeddedChannel[3];
    for (int r = 0; r < 3; r++) {
      c[r] = client("job", r, r == 0 ? "4.2.2" : "5.0.11");
    }
    List<Proc> all = List.of(Proc.wildcard("job"));
    c[0].writeInbound(construct(101, "g", all, List.of(ACTXID)));
    c[1].writeInbound(construct(102, "g", all, List.of(ACTXID)));
    io.netty.channel.ChannelFuture unused = c[2].close();
    fx.loopOwner.runPendingTasks();
    GroupConstructReply r0 = constructReply(c[0], 101, GroupConstructReply.Layout.V4);
    assertEquals(Status.ERR_PARTIAL_SUCCESS, r0.status());
    assertEquals(OptionalLong.empty(), r0.contextId(), "4.2.2's failure still carries SIZE_MAX");
    assertEquals(Status.ERR_PARTIAL_SUCCESS,
        constructReply(c[1], 102, GroupConstructReply.Layout.V5).status());
    assertTrue(host.calls.isEmpty(), "no context id for a group that is not formed");
    // A later construct of the survivors only is a new group, and succeeds.
    c[0].writeInbound(construct(103, "g2", PAIR, List.of()));
    c[1].writeInbound(construct(104, "g2", PAIR, List.of()));
    assertEquals(Status.SUCCESS, constructReply(c[0], 103, GroupConstructReply.Layout.V4).status());
  }

  @Test
  void aHostWithoutTheUpcallGivesEveryMemberNotSupported() {
    start(new HostModule() {});
    fx.registerLocal("job", 2);
    EmbeddedChannel c0 = client("job", 0, "5.0.11");
    EmbeddedChannel c1 = client("job", 1, "5.0.11");
    c0.writeInbound(construct(101, "g", PAIR, List.of(ACTXID)));
    c1.writeInbound(construct(102, "g", PAIR, List.of(ACTXID)));
    assertEquals(Status.ERR_NOT_SUPPORTED,
        constructReply(c0, 101, GroupConstructReply.Layout.V5).status());
    assertEquals(Status.ERR_NOT_SUPPORTED,
        constructReply(c1, 102, GroupConstructReply.Layout.V5).status());
  }

  @Test
  void aDestructWithoutMembersFromA5ClientIsBadParam() {
    start(new RecordingHost());
    fx.registerLocal("job", 1);
    EmbeddedChannel c0 = client("job", 0, "5.0.11");
    c0.writeInbound(EmbeddedCore.command(110, DESTRUCT, w -> {
      w.packString("g");
      w.packSize(0);
      w.pack(DataType.PROC, List.of());
      w.packSize(0);
    }));
    assertEquals(Status.ERR_BAD_PARAM, reply(c0, 110).unpackStatus());
  }
}
