package io.pmix.common.internal.message;

import static io.pmix.common.internal.message.GoldenInputs.ANSWERS;
import static io.pmix.common.internal.message.GoldenInputs.APP;
import static io.pmix.common.internal.message.GoldenInputs.APP2;
import static io.pmix.common.internal.message.GoldenInputs.COLLECT;
import static io.pmix.common.internal.message.GoldenInputs.EVENT_INFO;
import static io.pmix.common.internal.message.GoldenInputs.GET_DIRECTIVES;
import static io.pmix.common.internal.message.GoldenInputs.JOB;
import static io.pmix.common.internal.message.GoldenInputs.JOB_DATA;
import static io.pmix.common.internal.message.GoldenInputs.KILL;
import static io.pmix.common.internal.message.GoldenInputs.LOG_DATA;
import static io.pmix.common.internal.message.GoldenInputs.LOG_DIRECTIVES;
import static io.pmix.common.internal.message.GoldenInputs.LOOKED_UP;
import static io.pmix.common.internal.message.GoldenInputs.MAPBY;
import static io.pmix.common.internal.message.GoldenInputs.PUBLISHED;
import static io.pmix.common.internal.message.GoldenInputs.QUERIES;
import static io.pmix.common.internal.message.GoldenInputs.RANK0;
import static io.pmix.common.internal.message.GoldenInputs.RANK1;
import static io.pmix.common.internal.message.GoldenInputs.STDIN;
import static io.pmix.common.internal.message.GoldenInputs.STDOUT;
import static io.pmix.common.internal.message.GoldenInputs.TIMEOUT;
import static io.pmix.common.internal.message.GoldenInputs.TWO_CODES;
import static io.pmix.common.internal.message.GoldenInputs.TWO_NSPACES;
import static io.pmix.common.internal.message.GoldenInputs.TWO_RANKS;
import static io.pmix.common.internal.message.GoldenInputs.WAIT;
import static io.pmix.common.internal.message.GoldenInputs.commitLocal;
import static io.pmix.common.internal.message.GoldenInputs.commitRemote;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.common.io.BaseEncoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.BufferType;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.jspecify.annotations.Nullable;

/**
 * Every message record against the golden bytes of {@code messages.tsv} (the requests as the
 * encoders before the records wrote them, the replies and pushes as the server writes them), in
 * both buffer formats: each record encodes to exactly those bytes, and decodes them back to an
 * equal record with nothing left over.
 */
class MessageCasesTest {
  /** A vector's record and how a receiver reads it (after the COMMAND unit, for requests). */
  record Case(Message message, Function<PmixReader, Message> decode) {}

  /** One line of the file. */
  record Row(String name, WireFormat format, String hex) {
    @Override
    public String toString() {
      return name + " " + format.bufferType();
    }
  }

  private static Case request(Request r) {
    return new Case(r, rd -> Requests.decode(rd));
  }

  private static Case reply(Message m, Function<PmixReader, Message> decode) {
    return new Case(m, decode);
  }

  static Map<String, Case> cases(WireFormat f) {
    Map<String, Case> c = new LinkedHashMap<>();
    c.put("req", request(ReqRequest.INSTANCE));
    c.put("finalize", request(FinalizeRequest.INSTANCE));
    c.put("commit.empty", request(CommitRequest.of(Map.of(), Map.of())));
    c.put("commit.both", request(CommitRequest.of(commitLocal(), commitRemote())));
    c.put("commit.remote-only", request(CommitRequest.of(Map.of(), commitRemote())));
    c.put("fencenb.collect", request(new FenceNbRequest(List.of(JOB), COLLECT)));
    c.put("fencenb.two-ranks", request(new FenceNbRequest(TWO_RANKS, List.of())));
    c.put("getnb.peer", request(new GetNbRequest(RANK1, List.of(), "loc.key")));
    c.put("getnb.directives", request(new GetNbRequest(JOB, GET_DIRECTIVES, "pmix.job.size")));
    c.put("publishnb", request(new PublishNbRequest(0, PUBLISHED)));
    c.put("publishnb.uid", request(new PublishNbRequest(1000, List.of(Info.of("k", "v")))));
    c.put("lookupnb", request(new LookupNbRequest(0, List.of("svc.name"), List.of())));
    c.put("lookupnb.two-keys", request(new LookupNbRequest(1000, List.of("a", "b"), WAIT)));
    c.put("unpublishnb", request(new UnpublishNbRequest(0, List.of("svc.name"), List.of())));
    c.put("unpublishnb.all", request(new UnpublishNbRequest(7, List.of(), List.of())));
    c.put("notify", request(new NotifyRequest(Status.of(-31337), DataRange.NAMESPACE, EVENT_INFO)));
    c.put(
        "notify.no-info",
        request(new NotifyRequest(Status.of(-5001), DataRange.SESSION, List.of())));
    c.put("regevents", request(new RegEventsRequest(List.of(Status.of(-31337)), List.of())));
    c.put("regevents.default", request(new RegEventsRequest(List.of(), List.of())));
    c.put("regevents.two-codes", request(new RegEventsRequest(TWO_CODES, WAIT)));
    c.put("deregevents", request(new DeregEventsRequest(List.of(Status.of(-31337)))));
    c.put(
        "deregevents.default",
        request(new DeregEventsRequest(List.of(DeregEventsRequest.DEFAULT_HANDLER))));
    c.put("deregevents.two-codes", request(new DeregEventsRequest(TWO_CODES)));
    c.put("query", request(new QueryRequest(QUERIES)));
    c.put("query.empty", request(new QueryRequest(List.of())));
    c.put("log", request(new LogRequest(LOG_DATA, List.of())));
    c.put("log.directives", request(new LogRequest(LOG_DATA, LOG_DIRECTIVES)));
    c.put("abort", request(new AbortRequest(Status.of(42), "test abort", List.of())));
    c.put("abort.procs-no-message", request(new AbortRequest(Status.of(1), null, TWO_RANKS)));
    c.put("spawnnb", request(new SpawnNbRequest(MAPBY, List.of(APP))));
    c.put("spawnnb.two-apps", request(new SpawnNbRequest(List.of(), List.of(APP, APP2))));
    c.put("connectnb", request(new ConnectNbRequest(TWO_NSPACES, TIMEOUT)));
    c.put("connectnb.no-info", request(new ConnectNbRequest(List.of(JOB), List.of())));
    c.put("disconnectnb", request(new DisconnectNbRequest(TWO_NSPACES, TIMEOUT)));
    c.put("job-control", request(new JobControlRequest(List.of(JOB), KILL)));
    c.put("job-control.no-targets", request(new JobControlRequest(List.of(), KILL)));
    // NON_DESC: the bytes a 4.2.2 client (pmix-testkit's hb_client.c) sends, seen with strace.
    c.put("monitor.heartbeat", request(new MonitorRequest(
        Info.of("pmix.monitor.mbeat", Value.Pointer.INSTANCE), Status.MONITOR_HEARTBEAT_ALERT,
        List.of(Info.of("pmix.monitor.id", "HB1"),
            Info.of("pmix.monitor.btime", Value.uint32(1)),
            Info.of("pmix.monitor.bdrop", Value.uint32(1))))));
    c.put("iof-pull", request(new IofPullRequest(List.of(JOB), List.of(), 6, 1)));
    c.put("iof-pull.directives", request(new IofPullRequest(TWO_RANKS, WAIT, 2, 42)));
    c.put("iof-dereg", request(new IofDeregRequest(List.of(), 1)));
    c.put("iof-dereg.directives", request(new IofDeregRequest(WAIT, 9)));
    c.put("iof-push", request(new IofPushRequest(List.of(JOB), List.of(), STDIN)));
    c.put("iof-push.eof", request(new IofPushRequest(List.of(RANK0), WAIT, null)));

    c.put("reply.status", reply(new StatusReply(Status.SUCCESS), StatusReply::decode));
    c.put(
        "reply.status.error",
        reply(new StatusReply(Status.ERR_NOT_SUPPORTED), StatusReply::decode));
    c.put("reply.req", reply(new ReqReply("testjob", kvals(f, JOB_DATA)), ReqReply::decode));
    c.put(
        "reply.getnb",
        reply(
            new GetNbReply(
                Status.SUCCESS,
                List.of(
                    procBlob(f, JOB, JOB_DATA),
                    procBlob(f, RANK1, List.of(new Value.KVal("loc.key", Value.of("v")))))),
            GetNbReply::decode));
    c.put(
        "reply.getnb.not-found",
        reply(new GetNbReply(Status.ERR_NOT_FOUND, List.of()), GetNbReply::decode));
    c.put("reply.lookupnb", reply(new LookupNbReply(Status.SUCCESS, LOOKED_UP), LookupNbReply::decode));
    c.put("reply.query", reply(new QueryReply(Status.SUCCESS, ANSWERS), QueryReply::decode));
    c.put(
        "reply.query.failed",
        reply(new QueryReply(Status.ERR_NOT_FOUND, List.of()), QueryReply::decode));
    c.put(
        "reply.spawnnb",
        reply(new SpawnNbReply(Status.SUCCESS, "spawned-1", kvals(f, JOB_DATA)), SpawnNbReply::decode));
    c.put(
        "reply.connectnb",
        reply(
            new ConnectNbReply(
                Status.SUCCESS, List.of(new ReqReply("childjob", kvals(f, JOB_DATA)))),
            ConnectNbReply::decode));
    c.put(
        "reply.connectnb.failed",
        reply(new ConnectNbReply(Status.ERR_TIMEOUT, List.of()), ConnectNbReply::decode));
    c.put(
        "reply.job-control",
        reply(
            new QueryReply(Status.SUCCESS, List.of(Info.of("fake.jctrl.ack", true))),
            QueryReply::decode));
    c.put("reply.iof-pull", reply(new IofPullReply(Status.SUCCESS, 7), IofPullReply::decode));
    c.put(
        "push.notify",
        reply(
            new NotifyPush(
                Status.of(-5000),
                Proc.of("fakesrv", 0),
                List.of(Info.of("my.key", "hello")),
                OptionalInt.of(DataRange.SESSION.code())),
            MessageCasesTest::decodePush));
    c.put(
        "push.notify.no-info",
        reply(
            new NotifyPush(
                Status.ERR_LOST_CONNECTION,
                RANK0,
                List.of(),
                OptionalInt.of(DataRange.PROC_LOCAL.code())),
            MessageCasesTest::decodePush));
    c.put(
        "push.iof",
        reply(new IofDelivery(RANK0, 2, 1, List.of(), STDOUT), IofDelivery::decode));
    c.put(
        "push.iof.end",
        reply(
            new IofDelivery(RANK1, 4, 3, List.of(Info.of("pmix.iof.cmp", true)), new byte[0]),
            IofDelivery::decode));
    // GROUP_CONSTRUCT as a 4.2.2 client sent it (docs/commands.md §9.10, the same bytes).
    c.put(
        "group-construct",
        request(new GroupConstructRequest("grpA", List.of(RANK0), List.of(ACTXID))));
    c.put("group-destruct", request(new GroupDestructRequest("grpA", TWO_RANKS, TIMEOUT)));
    c.put(
        "group-destruct.v4",
        reply(new GroupDestructRequest("grpA", List.of(), TIMEOUT), MessageCasesTest::v4Destruct));
    // 4.2.2's reply as its server sent it (§9.10: context id 1234), then the later layouts.
    c.put("reply.group-construct.v4", groupReply(GroupConstructReply.Layout.V4, 1234L));
    c.put("reply.group-construct.v5", groupReply(GroupConstructReply.Layout.V5, 7L));
    c.put("reply.group-construct.v5.no-id", groupReply(GroupConstructReply.Layout.V5, null));
    c.put("reply.group-construct.v6", groupReply(GroupConstructReply.Layout.V6, 7L));
    c.put("reply.group-construct.v6.no-id", groupReply(GroupConstructReply.Layout.V6, null));
    for (GroupConstructReply.Layout l : GroupConstructReply.Layout.values()) {
      c.put(
          "reply.group-construct." + l.name().toLowerCase(java.util.Locale.ROOT) + ".failed",
          reply(GroupConstructReply.failure(l, Status.ERR_PARTIAL_SUCCESS), r ->
              GroupConstructReply.decode(r, l)));
    }
    return c;
  }

  private static final Info ACTXID = Info.of("pmix.grp.actxid", Value.of(true));

  private static Case groupReply(GroupConstructReply.Layout l, @Nullable Long ctx) {
    OptionalLong id = ctx == null ? OptionalLong.empty() : OptionalLong.of(ctx);
    List<Proc> members = l == GroupConstructReply.Layout.V4 ? List.of() : TWO_RANKS;
    List<Info> info =
        l == GroupConstructReply.Layout.V6 && ctx != null
            ? List.of(Info.of("pmix.grp.info", DataArray.ofInfos(List.of(
                Info.of("pmix.procid", RANK0), Info.of("pmix.grp.lclid", Value.size(3))))))
            : List.of();
    return reply(new GroupConstructReply(l, Status.SUCCESS, members, id, info),
        r -> GroupConstructReply.decode(r, l));
  }

  private static Message v4Destruct(PmixReader r) {
    assertEquals(Command.GROUP_DESTRUCT.code(), r.unpackByteEnum(DataType.COMMAND));
    return GroupDestructRequest.decode(r, false);
  }

  private static Message decodePush(PmixReader r) {
    assertEquals(Command.NOTIFY.code(), r.unpackByteEnum(DataType.COMMAND));
    return NotifyPush.decode(r);
  }

  static List<Row> rows() {
    List<Row> out = new ArrayList<>();
    try (InputStream in = MessageCasesTest.class.getResourceAsStream("messages.tsv");
        BufferedReader br = new BufferedReader(new InputStreamReader(in, UTF_8))) {
      boolean header = true;
      for (String line; (line = br.readLine()) != null; ) {
        if (line.startsWith("#") || line.isBlank()) {
          continue;
        }
        if (header) {
          header = false;
          continue;
        }
        String[] f = line.split("\t", -1);
        out.add(new Row(f[0], WireFormat.of(BufferType.valueOf(f[1])), f[2]));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  static Stream<Row> allRows() {
    return rows().stream();
  }

  @Test
  void everyVectorHasACaseAndEveryCaseAVectorInBothFormats() {
    List<Row> rows = rows();
    for (WireFormat f : List.of(WireFormat.DEFAULT, WireFormat.FULLY_DESCRIBED)) {
      Set<String> inFile = new TreeSet<>();
      for (Row r : rows) {
        if (r.format().equals(f)) {
          inFile.add(r.name());
        }
      }
      assertEquals(new TreeSet<>(cases(f).keySet()), inFile, f.toString());
    }
    assertEquals(2 * cases(WireFormat.DEFAULT).size(), rows.size());
  }

  @Test
  void everyRequestRecordHasAVector() {
    Set<Class<?>> covered = new java.util.HashSet<>();
    for (Case c : cases(WireFormat.DEFAULT).values()) {
      covered.add(c.message().getClass());
    }
    for (Class<?> k : Request.class.getPermittedSubclasses()) {
      assertEquals(true, covered.contains(k), k + " has no golden vector");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("allRows")
  void encodesToTheGoldenBytes(Row row) {
    Message m = cases(row.format()).get(row.name()).message();
    ByteBuf out = Unpooled.buffer();
    try {
      m.encode(new PmixWriter(out, row.format()));
      assertEquals(row.hex(), ByteBufUtil.hexDump(out));
    } finally {
      out.release();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("allRows")
  void decodesTheGoldenBytesToAnEqualRecord(Row row) {
    Case c = cases(row.format()).get(row.name());
    ByteBuf in = Unpooled.wrappedBuffer(BaseEncoding.base16().lowerCase().decode(row.hex()));
    PmixReader r = new PmixReader(in, row.format());
    Message got = c.decode().apply(r);
    assertEquals(c.message(), got);
    assertEquals(c.message().hashCode(), got.hashCode());
    assertFalse(r.hasRemaining(), "bytes left over");
  }

  private static byte[] kvals(WireFormat f, List<Value.KVal> kvs) {
    ByteBuf b = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(b, f);
      kvs.forEach(w::pack);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private static byte[] procBlob(WireFormat f, Proc p, List<Value.KVal> kvs) {
    ByteBuf b = Unpooled.buffer();
    try {
      PmixWriter w = new PmixWriter(b, f);
      w.packProc(p);
      kvs.forEach(w::pack);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }
}
