package io.pmix.dataserver.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameEncoder;
import io.pmix.dataserver.DataStore;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.LookupResult;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The data server's request handler on EmbeddedChannels: the protocol and bad input. */
class DsServerHandlerTest {
  private static final System.Logger LOG = System.getLogger("test");
  private static final Identity ALICE = Identity.of(Proc.of("job", 0), 1000, 100);

  private final DataStore store = new DataStore(DataStoreOptions.builder().build());
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private DsServerCore core;

  private EmbeddedChannel connect(int maxFrame) {
    EmbeddedChannel ch = new EmbeddedChannel();
    if (core == null) {
      core = new DsServerCore(store, ch.eventLoop());
    }
    ch.pipeline()
        .addLast(new FrameDecoder(maxFrame))
        .addLast(FrameEncoder.INSTANCE)
        .addLast(new DsServerHandler(core, LOG));
    channels.add(ch);
    return ch;
  }

  private EmbeddedChannel greeted() {
    EmbeddedChannel ch = connect(1 << 20);
    Wire.Reply r = send(ch, Wire.hello());
    assertEquals(Status.SUCCESS, r.status());
    assertEquals(DsProtocol.VERSION, r.rest().unpackUInt32());
    return ch;
  }

  /** Writes bytes inbound and returns the one reply they produce. */
  private static Wire.Reply send(EmbeddedChannel ch, byte[] bytes) {
    boolean unused = ch.writeInbound(Unpooled.wrappedBuffer(bytes));
    ByteBuf out = ch.readOutbound();
    if (out == null) {
      throw new AssertionError("no reply");
    }
    return Wire.decode(out);
  }

  private static void noReply(EmbeddedChannel ch) {
    assertNull(ch.readOutbound());
  }

  private static byte[] publish(int id, Identity who, List<Info> info) {
    return Wire.request(
        DsProtocol.PUBLISH,
        id,
        w -> {
          DsProtocol.writeIdentity(w, who);
          DsProtocol.writeInfos(w, info);
        });
  }

  private static byte[] lookup(int id, Identity who, List<String> keys, List<Info> info) {
    return Wire.request(
        DsProtocol.LOOKUP,
        id,
        w -> {
          DsProtocol.writeIdentity(w, who);
          DsProtocol.writeKeys(w, keys);
          DsProtocol.writeInfos(w, info);
        });
  }

  private static final Info WAIT = Info.of(Keys.WAIT, Value.of(0));

  @AfterEach
  void finish() {
    for (EmbeddedChannel ch : channels) {
      for (Object o; (o = ch.readOutbound()) != null; ) {
        io.netty.util.ReferenceCountUtil.release(o);
      }
      assertFalse(ch.finish());
    }
  }

  @Test
  void publishLookupUnpublishRoundTrip() {
    EmbeddedChannel ch = greeted();
    Wire.Reply p = send(ch, publish(7, ALICE, List.of(Info.of("svc", "port"))));
    assertEquals(DsProtocol.PUBLISH, p.command());
    assertEquals(7, p.id());
    assertEquals(Status.SUCCESS, p.status());

    Wire.Reply l = send(ch, lookup(8, ALICE.withProc(Proc.of("other", 0)), List.of("svc"), List.of()));
    assertEquals(8, l.id());
    assertEquals(Status.SUCCESS, l.status());
    LookupResult r = DsProtocol.readLookupData(l.rest(), l.status());
    assertEquals(List.of(new Value.PData(Proc.of("job", 0), "svc", Value.of("port"))), r.data());

    Wire.Reply u =
        send(
            ch,
            Wire.request(
                DsProtocol.UNPUBLISH,
                9,
                w -> {
                  DsProtocol.writeIdentity(w, ALICE);
                  DsProtocol.writeKeys(w, List.of("svc"));
                  DsProtocol.writeInfos(w, List.of());
                }));
    assertEquals(Status.SUCCESS, u.status());
    Wire.Reply gone = send(ch, lookup(10, ALICE, List.of("svc"), List.of()));
    assertEquals(Status.ERR_NOT_FOUND, gone.status());
    assertFalse(gone.rest().hasRemaining(), "a failed lookup carries no data");
  }

  @Test
  void theStoresStatusesAreRelayed() {
    EmbeddedChannel ch = greeted();
    assertEquals(Status.SUCCESS, send(ch, publish(1, ALICE, List.of(Info.of("k", "v")))).status());
    assertEquals(
        Status.ERR_DUPLICATE_KEY, send(ch, publish(2, ALICE, List.of(Info.of("k", "w")))).status());
    Identity bob = Identity.of(Proc.of("b", 0), 2000, 200);
    assertEquals(Status.ERR_NO_PERMISSIONS, send(ch, lookup(3, bob, List.of("k"), List.of())).status());
  }

  @Test
  void aRequestSplitAnywhereIsServedOnce() {
    EmbeddedChannel ch = greeted();
    byte[] req = publish(3, ALICE, List.of(Info.of("svc", "x")));
    for (int i = 0; i < req.length; i++) {
      boolean unused = ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {req[i]}));
      if (i < req.length - 1) {
        noReply(ch);
      }
    }
    Wire.Reply r = Wire.decode(ch.readOutbound());
    assertEquals(Status.SUCCESS, r.status());
    assertEquals(1, store.itemCount());
  }

  @Test
  void anythingBeforeHelloIsRefusedAndTheConnectionClosed() {
    EmbeddedChannel ch = connect(1 << 20);
    Wire.Reply r = send(ch, publish(1, ALICE, List.of(Info.of("svc", "x"))));
    assertEquals(Status.ERR_INIT, r.status());
    assertFalse(ch.isOpen());
    assertEquals(0, store.itemCount());
  }

  @Test
  void anotherProtocolVersionIsRefusedAndTheConnectionClosed() {
    EmbeddedChannel ch = connect(1 << 20);
    Wire.Reply r =
        send(
            ch,
            Wire.request(
                DsProtocol.HELLO,
                1,
                w -> {
                  w.packString(DsProtocol.MAGIC);
                  w.packUInt32(99);
                  w.packString("future");
                }));
    assertEquals(Status.ERR_NOT_SUPPORTED, r.status());
    assertEquals(DsProtocol.VERSION, r.rest().unpackUInt32());
    assertFalse(ch.isOpen());
  }

  @Test
  void anUnknownCommandIsNotSupportedAndTheConnectionStays() {
    EmbeddedChannel ch = greeted();
    Wire.Reply r = send(ch, Wire.request(200, 5, w -> {}));
    assertEquals(200, r.command());
    assertEquals(5, r.id());
    assertEquals(Status.ERR_NOT_SUPPORTED, r.status());
    assertTrue(ch.isOpen());
    assertEquals(Status.SUCCESS, send(ch, publish(6, ALICE, List.of(Info.of("a", "b")))).status());
  }

  @Test
  void fieldsThatDoNotDecodeGetTheDecodersStatus() {
    EmbeddedChannel ch = greeted();
    // Identity cut short.
    Wire.Reply r = send(ch, Wire.request(DsProtocol.PUBLISH, 4, w -> w.packProc(Proc.of("j", 0))));
    assertEquals(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, r.status());
    // A count that promises more infos than are sent.
    Wire.Reply r2 =
        send(
            ch,
            Wire.request(
                DsProtocol.PUBLISH,
                5,
                w -> {
                  DsProtocol.writeIdentity(w, ALICE);
                  w.packSize(3);
                  w.packInfos(List.of(Info.of("a", "b")));
                }));
    assertEquals(Status.ERR_UNPACK_FAILURE, r2.status());
    // An identity with an unknown uid.
    Wire.Reply r3 =
        send(
            ch,
            Wire.request(
                DsProtocol.PUBLISH,
                6,
                w -> {
                  w.packProc(Proc.of("j", 0));
                  for (int i = 0; i < 4; i++) {
                    w.packUInt32(-1);
                  }
                  w.packString("n");
                  DsProtocol.writeInfos(w, List.of(Info.of("a", "b")));
                }));
    assertEquals(Status.ERR_BAD_PARAM, r3.status());
    // A huge count in a tiny message allocates nothing and is refused.
    Wire.Reply r4 =
        send(
            ch,
            Wire.request(
                DsProtocol.LOOKUP,
                7,
                w -> {
                  DsProtocol.writeIdentity(w, ALICE);
                  w.packSize(Long.MAX_VALUE);
                }));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, r4.status());
    assertTrue(ch.isOpen());
    assertEquals(0, store.itemCount());
  }

  @Test
  void aMessageThatCannotBeAttributedClosesTheConnection() {
    EmbeddedChannel ch = greeted();
    ByteBuf junk = Unpooled.wrappedBuffer(new byte[] {(byte) 0xff, 0x7f});
    byte[] bytes = Wire.frameBytes(junk);
    junk.release();
    boolean unused = ch.writeInbound(Unpooled.wrappedBuffer(bytes));
    noReply(ch);
    assertFalse(ch.isOpen());
  }

  @Test
  void anOversizedFrameClosesTheConnectionBeforeItIsBuffered() {
    EmbeddedChannel ch = connect(64);
    Wire.Reply ok = send(ch, Wire.hello());
    assertEquals(Status.SUCCESS, ok.status());
    ByteBuf header = Unpooled.buffer().writeInt(0).writeInt(0).writeInt(1 << 30).writeInt(0);
    boolean unused = ch.writeInbound(header);
    noReply(ch);
    assertFalse(ch.isOpen());
  }

  @Test
  void aWaitingLookupIsAnsweredByAnotherConnectionsPublish() {
    EmbeddedChannel waiter = greeted();
    EmbeddedChannel publisher = greeted();
    boolean unused =
        waiter.writeInbound(Unpooled.wrappedBuffer(lookup(40, ALICE, List.of("svc"), List.of(WAIT))));
    noReply(waiter);
    assertEquals(1, store.pendingLookupCount());
    assertEquals(Status.SUCCESS, send(publisher, publish(1, ALICE.withProc(Proc.of("srv", 0)), List.of(Info.of("svc", "p")))).status());
    Wire.Reply r = Wire.decode(waiter.readOutbound());
    assertEquals(40, r.id());
    assertEquals(Status.SUCCESS, r.status());
    assertEquals("p", DsProtocol.readLookupData(r.rest(), r.status()).data().get(0).value().asString());
  }

  @Test
  void aVanishingClientsWaitingLookupsAreCancelledAndOthersServedOn() {
    EmbeddedChannel leaver = greeted();
    EmbeddedChannel stayer = greeted();
    boolean unused =
        leaver.writeInbound(Unpooled.wrappedBuffer(lookup(1, ALICE, List.of("a"), List.of(WAIT))));
    boolean unused2 =
        leaver.writeInbound(Unpooled.wrappedBuffer(lookup(2, ALICE, List.of("b"), List.of(WAIT))));
    boolean unused3 =
        stayer.writeInbound(Unpooled.wrappedBuffer(lookup(3, ALICE, List.of("a"), List.of(WAIT))));
    assertEquals(3, store.pendingLookupCount());
    leaver.close().syncUninterruptibly();
    assertEquals(1, store.pendingLookupCount());
    noReply(leaver);
    boolean unused4 =
        stayer.writeInbound(
            Unpooled.wrappedBuffer(
                publish(4, ALICE.withProc(Proc.of("s", 1)), List.of(Info.of("a", "1")))));
    // The publish answers the waiting lookup before its own reply goes out.
    Wire.Reply r = Wire.decode(stayer.readOutbound());
    assertEquals(3, r.id());
    assertEquals(Status.SUCCESS, r.status());
    Wire.Reply p = Wire.decode(stayer.readOutbound());
    assertEquals(4, p.id());
    assertEquals(Status.SUCCESS, p.status());
    assertEquals(0, store.pendingLookupCount());
  }

  @Test
  void cancelCompletesAWaitingLookupWithTheReason() {
    EmbeddedChannel ch = greeted();
    boolean unused =
        ch.writeInbound(Unpooled.wrappedBuffer(lookup(11, ALICE, List.of("a"), List.of(WAIT))));
    Consumer<PmixWriter> cancel11 =
        w -> {
          w.packUInt32(11);
          w.packStatus(Status.ERR_TIMEOUT);
        };
    boolean unused2 = ch.writeInbound(Unpooled.wrappedBuffer(Wire.request(DsProtocol.CANCEL, 12, cancel11)));
    Wire.Reply lookupReply = Wire.decode(ch.readOutbound());
    Wire.Reply cancelReply = Wire.decode(ch.readOutbound());
    assertEquals(11, lookupReply.id());
    assertEquals(Status.ERR_TIMEOUT, lookupReply.status());
    assertEquals(12, cancelReply.id());
    assertEquals(Status.SUCCESS, cancelReply.status());
    assertEquals(Status.ERR_NOT_FOUND, send(ch, Wire.request(DsProtocol.CANCEL, 13, cancel11)).status());
  }

  @Test
  void aRequestIdAlreadyWaitingIsRefused() {
    EmbeddedChannel ch = greeted();
    boolean unused =
        ch.writeInbound(Unpooled.wrappedBuffer(lookup(5, ALICE, List.of("a"), List.of(WAIT))));
    assertEquals(Status.ERR_BAD_PARAM, send(ch, lookup(5, ALICE, List.of("b"), List.of(WAIT))).status());
    assertEquals(1, store.pendingLookupCount());
  }

  @Test
  void lifetimeCommandsReachTheStore() {
    EmbeddedChannel ch = greeted();
    Identity app1 = ALICE.withAppNumber(1).withSessionId(4);
    assertEquals(
        Status.SUCCESS,
        send(
                ch,
                publish(
                    1,
                    app1,
                    List.of(
                        Info.of("p", "v"),
                        Info.of(Keys.PERSISTENCE, Value.unsigned(DataType.PERSIST, Retention.PROC.code())))))
            .status());
    assertEquals(Status.SUCCESS, send(ch, publish(2, app1, List.of(Info.of("a", "v"), persist(Retention.APP)))).status());
    assertEquals(Status.SUCCESS, send(ch, publish(3, app1, List.of(Info.of("n", "v")))).status());
    assertEquals(Status.SUCCESS, send(ch, publish(4, app1, List.of(Info.of("s", "v"), persist(Retention.SESSION)))).status());
    assertEquals(4, store.itemCount());
    assertEquals(Status.SUCCESS, send(ch, Wire.request(DsProtocol.PROC_ENDED, 5, w -> w.packProc(app1.proc()))).status());
    assertEquals(3, store.itemCount());
    assertEquals(
        Status.SUCCESS,
        send(ch, Wire.request(DsProtocol.APP_ENDED, 6, w -> {
          w.packString("job");
          w.packUInt32(1);
        })).status());
    assertEquals(2, store.itemCount());
    assertEquals(
        Status.ERR_BAD_PARAM,
        send(ch, Wire.request(DsProtocol.APP_ENDED, 7, w -> {
          w.packString("job");
          w.packUInt32(-1);
        })).status());
    assertEquals(Status.SUCCESS, send(ch, Wire.request(DsProtocol.NSPACE_ENDED, 8, w -> w.packString("job"))).status());
    assertEquals(1, store.itemCount());
    assertEquals(Status.SUCCESS, send(ch, Wire.request(DsProtocol.SESSION_ENDED, 9, w -> w.packUInt32(4))).status());
    assertEquals(0, store.itemCount());
  }

  @Test
  void trailingBytesAreIgnoredForLaterVersions() {
    EmbeddedChannel ch = greeted();
    Wire.Reply r =
        send(
            ch,
            Wire.request(
                DsProtocol.PUBLISH,
                1,
                w -> {
                  DsProtocol.writeIdentity(w, ALICE);
                  DsProtocol.writeInfos(w, List.of(Info.of("k", "v")));
                  w.packString("a field from the future");
                }));
    assertEquals(Status.SUCCESS, r.status());
  }

  private static Info persist(Retention r) {
    return Info.of(Keys.PERSISTENCE, Value.unsigned(DataType.PERSIST, r.code()));
  }
}
