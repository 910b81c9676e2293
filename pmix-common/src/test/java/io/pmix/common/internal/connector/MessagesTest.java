package io.pmix.common.internal.connector;

import static io.pmix.common.internal.connector.Bytes.hex;
import static io.pmix.common.internal.connector.Bytes.hexAndRelease;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.Unpooled;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Request bodies against the captures of docs/commands.md §9 (OpenPMIx 4.2.2, NON_DESC). */
class MessagesTest {
  private final Messages m = new Messages(WireFormat.DEFAULT);

  @Test
  void reqAndFinalize() {
    assertEquals("0200", hexAndRelease(m.req()));
    assertEquals("0205", hexAndRelease(m.finalizeRequest()));
  }

  @Test
  void fenceWithDataCollection() {
    // docs/commands.md §9.3, "raw bytes of that fence request".
    byte[] expected =
        Bytes.of(
            "02 03 02 01 02 10", "'testjob", "fe ff ff ff 0f 02 01 02 1a", "'pmix.collect",
            "00 01 01");
    assertEquals(
        hex(expected),
        hexAndRelease(
            m.fence(List.of(Proc.wildcard("testjob")), List.of(Info.of("pmix.collect", true)))));
  }

  @Test
  void commitSendsGlobalKeysInBothSections() {
    Map<String, Value> local = new LinkedHashMap<>();
    local.put("loc.key", Value.of("rank0-local"));
    local.put("glob.key", Value.of("rank0-global"));
    local.put("num.key", Value.uint32(1000));
    Map<String, Value> remote = new LinkedHashMap<>();
    remote.put("rem.key", Value.of("rank0-remote"));
    remote.put("glob.key", Value.of("rank0-global"));
    remote.put("num.key", Value.uint32(1000));
    byte[] expected =
        Bytes.of(
            "02 02",
            "02 01 02 01 3f",
            "02 10", "'loc.key", "03 18", "'rank0-local",
            "02 12", "'glob.key", "03 1a", "'rank0-global",
            "02 10", "'num.key", "0e e8 07",
            "02 02 02 01 40",
            "02 10", "'rem.key", "03 1a", "'rank0-remote",
            "02 12", "'glob.key", "03 1a", "'rank0-global",
            "02 10", "'num.key", "0e e8 07");
    assertEquals(139, expected.length);
    assertEquals(hex(expected), hexAndRelease(m.commit(local, remote)));
    assertEquals("0202", hexAndRelease(m.commit(Map.of(), Map.of())));
  }

  @Test
  void getOfAPeersKey() {
    byte[] expected = Bytes.of("02 04 02 10", "'testjob", "02 01 02 00 02 10", "'loc.key");
    assertEquals(hex(expected), hexAndRelease(m.get(Proc.of("testjob", 1), List.of(), "loc.key")));
  }

  @Test
  void publishLookupUnpublish() {
    byte[] publish =
        Bytes.of(
            "02 06 02 00 02 02 04 12", "'svc.name", "00 03 10", "'port123", "16", "'pmix.range",
            "00 21 04");
    assertEquals(
        hex(publish),
        hexAndRelease(
            m.publish(
                0,
                List.of(
                    Info.of("svc.name", "port123"),
                    Info.of("pmix.range", DataRange.SESSION.toValue())))));
    byte[] lookup = Bytes.of("02 07 02 00 02 01 02 12", "'svc.name", "02 00");
    assertEquals(
        hex(lookup), hexAndRelease(m.keys(Command.LOOKUPNB, 0, List.of("svc.name"), List.of())));
    byte[] unpublish = Bytes.of("02 08 02 00 02 01 02 12", "'svc.name", "02 00");
    assertEquals(
        hex(unpublish),
        hexAndRelease(m.keys(Command.UNPUBLISHNB, 0, List.of("svc.name"), List.of())));
  }

  @Test
  void events() {
    assertEquals(
        hex(Bytes.of("02 0d 02 01 02 d1 e9 03 02 00")),
        hexAndRelease(m.registerEvents(List.of(Status.of(-31337)), List.of())));
    assertEquals(
        hex(
            Bytes.of(
                "02 0c 02 d1 e9 03 02 03 02 01 02 1c", "'my.event.data", "00 03 18",
                "'hello-event")),
        hexAndRelease(
            m.notify(
                Status.of(-31337),
                DataRange.NAMESPACE,
                List.of(Info.of("my.event.data", "hello-event")))));
    assertEquals(
        hex(Bytes.of("02 0e 02 d1 e9 03")),
        hexAndRelease(m.deregisterEvents(List.of(Status.of(-31337)))));
  }

  @Test
  void queryLogAbort() {
    byte[] query =
        Bytes.of(
            "02 0f 02 02 04 02 18", "'pmix.qry.ns", "00 02 1c", "'my.host.query", "01 18",
            "'pmix.nspace", "00 03 10", "'testjob");
    assertEquals(
        hex(query),
        hexAndRelease(
            m.query(
                List.of(
                    new Value.Query(List.of("pmix.qry.ns"), List.of()),
                    new Value.Query(
                        List.of("my.host.query"), List.of(Info.of("pmix.nspace", "testjob")))))));
    byte[] log =
        Bytes.of(
            "02 10 02 00 02 01 02 20", "'pmix.log.stderr", "00 03 2c", "'log-line-from-client\n",
            "02 00");
    assertEquals(
        hex(log),
        hexAndRelease(
            m.log(List.of(Info.of("pmix.log.stderr", "log-line-from-client\n")), List.of())));
    byte[] abort = Bytes.of("02 01 02 54 02 16", "'test abort", "02 00");
    assertEquals(hex(abort), hexAndRelease(m.abort(Status.of(42), "test abort", List.of())));
  }

  @Test
  void lookupReplyAndStatusOnlyReplies() {
    byte[] reply =
        Bytes.of(
            "02 00 02 01 02 10", "'testjob", "00 12", "'svc.name", "03 10", "'port123");
    PmixReader r = m.reader(WireBuffer.wrap(reply));
    Messages.checkStatus(r, "lookup");
    List<Value.PData> data = Messages.lookupData(r);
    assertEquals(
        List.of(new Value.PData(Proc.of("testjob", 0), "svc.name", Value.of("port123"))), data);
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> Messages.checkStatus(m.reader(WireBuffer.wrap(Bytes.of("02 5d"))), "x"));
    assertEquals(Status.ERR_NOT_SUPPORTED, e.status());
    PmixException lost =
        assertThrows(
            PmixException.class,
            () -> Messages.checkStatus(m.reader(WireBuffer.wrap(new byte[0])), "x"));
    assertEquals(Status.ERR_LOST_CONNECTION, lost.status());
  }

  @Test
  void fullyDescribedBuffersTagEveryUnit() {
    Messages fd = new Messages(WireFormat.FULLY_DESCRIBED);
    // docs/transport.md §11.8: REQ becomes 09 02 22 00.
    assertEquals("09022200", hexAndRelease(fd.req()));
    assertEquals(DataType.COMMAND.code(), 0x22);
  }
}
