package io.pmix.common.internal.connector;

import static io.pmix.common.internal.connector.Bytes.hex;
import static io.pmix.common.internal.connector.Bytes.hexAndRelease;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * CONNECTNB/DISCONNECTNB bodies (the order in which {@code PMIx_Connect_nb} of 4.2.2 packs: cmd,
 * SIZE nprocs, PROC[nprocs] as one unit, SIZE ninfo, INFO[ninfo] when non-empty), the reading of
 * connect reply blobs, and the app completion {@code PMIx_Spawn_nb} does. The live comparison
 * against libpmix is in pmix-testkit's ConnectSpawnIT.
 */
class ConnectMessagesTest {
  private final Messages m = new Messages(WireFormat.DEFAULT);

  @Test
  void connectAndDisconnectHaveTheFenceLayout() {
    List<Proc> procs = List.of(Proc.wildcard("testjob"), Proc.of("childjob", 0));
    byte[] body =
        Bytes.of(
            "02 02", // SIZE 2
            "04 10", "'testjob", "fe ff ff ff 0f", "12", "'childjob", "00", // PROC[2]
            "02 01 02 1a", "'pmix.timeout", "00 09 14"); // SIZE 1, INFO pmix.timeout INT32 10
    List<Info> info = List.of(Info.of("pmix.timeout", Value.of(10)));
    assertEquals(
        "020a" + hex(body), hexAndRelease(m.connect(Command.CONNECTNB, procs, info)));
    assertEquals(
        "020b" + hex(body), hexAndRelease(m.connect(Command.DISCONNECTNB, procs, info)));
    // No infos: SIZE 0 and no INFO unit.
    assertEquals(
        hex(Bytes.of("02 0a 02 01 02 10", "'testjob", "fe ff ff ff 0f 02 00")),
        hexAndRelease(m.connect(Command.CONNECTNB, List.of(Proc.wildcard("testjob")), List.of())));
    assertThrows(
        IllegalArgumentException.class,
        () -> m.connect(Command.FENCENB, procs, List.of()));
  }

  @Test
  void connectReplyBlobsGoToTheStore() {
    DataStore store = new DataStore(Proc.of("testjob", 0), "vm", WireFormat.DEFAULT);
    ByteBuf inner = Unpooled.buffer();
    PmixWriter iw = new PmixWriter(inner, WireFormat.DEFAULT);
    iw.packString("childjob");
    iw.pack(new Value.KVal("pmix.job.size", Value.unsigned(io.pmix.common.DataType.UINT32, 3)));
    byte[] blob = ByteBufUtil.getBytes(inner);
    inner.release();
    ByteBuf reply = Unpooled.buffer();
    PmixWriter w = new PmixWriter(reply, WireFormat.DEFAULT);
    w.packStatus(Status.SUCCESS);
    w.pack(Value.of(blob));
    var r = m.reader(io.pmix.common.codec.WireBuffer.of(reply));
    assertEquals(Status.SUCCESS, Messages.status(r));
    assertEquals(List.of("childjob"), Messages.connectBlobs(r, store, WireFormat.DEFAULT));
    reply.release();
    assertTrue(store.knowsNamespace("childjob"));
    var found =
        assertInstanceOf(
            DataStore.Lookup.Found.class,
            store.lookup(Proc.wildcard("childjob"), "pmix.job.size", List.of()));
    assertEquals(3, found.value().asInt());
    store.forgetNamespace("childjob");
    assertFalse(store.knowsNamespace("childjob"));
  }

  @Test
  void appsAreCompletedAsTheCClientDoes() {
    // Missing cwd: ours; empty argv: the command's basename.
    Value.App a = ConnectorSession.fillApp(new Value.App("/bin/true", List.of(), List.of(), null, 2, List.of()), "/here");
    assertEquals(List.of("true"), a.argv());
    assertEquals("/here", a.cwd());
    assertEquals(2, a.maxprocs());
    // argv[0] with the same basename stays as it is (capture 9.10: '/bin/true', 'arg1').
    a = ConnectorSession.fillApp(
        new Value.App("/bin/true", List.of("/bin/true", "arg1"), List.of(), "/home/app", 1, List.of()), "/here");
    assertEquals(List.of("/bin/true", "arg1"), a.argv());
    assertEquals("/home/app", a.cwd());
    // A different first element gets the basename in front.
    a = ConnectorSession.fillApp(
        new Value.App("/usr/bin/env", List.of("-i", "x"), List.of(), "/", 1, List.of()), "/here");
    assertEquals(List.of("env", "-i", "x"), a.argv());
    assertThrows(
        IllegalArgumentException.class,
        () -> ConnectorSession.fillApp(new Value.App(null, List.of("x"), List.of(), null, 1, List.of()), "/"));
    assertEquals("b", ConnectorSession.basename("/a/b/"));
    assertEquals("b", ConnectorSession.basename("b"));
  }
}
