package io.pmix.common.internal.message;

import static io.pmix.common.internal.message.GoldenInputs.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.connector.DataStore;
import io.pmix.common.internal.connector.IofChunk;
import io.pmix.common.internal.connector.Messages;
import io.pmix.common.internal.wire.Command;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One-off: wrote {@code messages.tsv} from the request encoders of {@code connector.Messages} as
 * they were before the message records existed, and the replies and pushes as pmix-server's
 * ServerCore (and the tool tests' scripted server) wrote them then, each checked to read back
 * through the decoders of that {@code Messages}. Run with the test class path and the output file
 * as its argument.
 */
public final class GoldenMessagesGenerator {
  private GoldenMessagesGenerator() {}

  public static void main(String[] args) throws IOException {
    Map<String, Function<Messages, ByteBuf>> requests = new LinkedHashMap<>();
    requests.put("req", Messages::req);
    requests.put("finalize", Messages::finalizeRequest);
    requests.put("commit.empty", m -> m.commit(Map.of(), Map.of()));
    requests.put("commit.both", m -> m.commit(commitLocal(), commitRemote()));
    requests.put("commit.remote-only", m -> m.commit(Map.of(), commitRemote()));
    requests.put("fencenb.collect", m -> m.fence(List.of(JOB), COLLECT));
    requests.put("fencenb.two-ranks", m -> m.fence(TWO_RANKS, List.of()));
    requests.put("getnb.peer", m -> m.get(RANK1, List.of(), "loc.key"));
    requests.put("getnb.directives", m -> m.get(JOB, GET_DIRECTIVES, "pmix.job.size"));
    requests.put("publishnb", m -> m.publish(0, PUBLISHED));
    requests.put("publishnb.uid", m -> m.publish(1000, List.of(Info.of("k", "v"))));
    requests.put("lookupnb", m -> m.keys(Command.LOOKUPNB, 0, List.of("svc.name"), List.of()));
    requests.put("lookupnb.two-keys", m -> m.keys(Command.LOOKUPNB, 1000, List.of("a", "b"), WAIT));
    requests.put(
        "unpublishnb", m -> m.keys(Command.UNPUBLISHNB, 0, List.of("svc.name"), List.of()));
    requests.put("unpublishnb.all", m -> m.keys(Command.UNPUBLISHNB, 7, List.of(), List.of()));
    requests.put(
        "notify", m -> m.notify(Status.of(-31337), DataRange.NAMESPACE, EVENT_INFO));
    requests.put("notify.no-info", m -> m.notify(Status.of(-5001), DataRange.SESSION, List.of()));
    requests.put("regevents", m -> m.registerEvents(List.of(Status.of(-31337)), List.of()));
    requests.put("regevents.default", m -> m.registerEvents(List.of(), List.of()));
    requests.put("regevents.two-codes", m -> m.registerEvents(TWO_CODES, WAIT));
    requests.put("deregevents", m -> m.deregisterEvents(List.of(Status.of(-31337))));
    requests.put(
        "deregevents.default", m -> m.deregisterEvents(List.of(Status.of(Integer.MIN_VALUE))));
    requests.put("deregevents.two-codes", m -> m.deregisterEvents(TWO_CODES));
    requests.put("query", m -> m.query(QUERIES));
    requests.put("query.empty", m -> m.query(List.of()));
    requests.put("log", m -> m.log(LOG_DATA, List.of()));
    requests.put("log.directives", m -> m.log(LOG_DATA, LOG_DIRECTIVES));
    requests.put("abort", m -> m.abort(Status.of(42), "test abort", List.of()));
    requests.put("abort.procs-no-message", m -> m.abort(Status.of(1), null, TWO_RANKS));
    requests.put("spawnnb", m -> m.spawn(MAPBY, List.of(APP)));
    requests.put("spawnnb.two-apps", m -> m.spawn(List.of(), List.of(APP, APP2)));
    requests.put("connectnb", m -> m.connect(Command.CONNECTNB, TWO_NSPACES, TIMEOUT));
    requests.put("connectnb.no-info", m -> m.connect(Command.CONNECTNB, List.of(JOB), List.of()));
    requests.put("disconnectnb", m -> m.connect(Command.DISCONNECTNB, TWO_NSPACES, TIMEOUT));
    requests.put("job-control", m -> m.jobControl(List.of(JOB), KILL));
    requests.put("job-control.no-targets", m -> m.jobControl(List.of(), KILL));
    requests.put("iof-pull", m -> m.iofPull(List.of(JOB), List.of(), 6, 1));
    requests.put("iof-pull.directives", m -> m.iofPull(TWO_RANKS, WAIT, 2, 42));
    requests.put("iof-dereg", m -> m.iofDeregister(List.of(), 1));
    requests.put("iof-dereg.directives", m -> m.iofDeregister(WAIT, 9));
    requests.put("iof-push", m -> m.iofPush(List.of(JOB), List.of(), STDIN));
    requests.put("iof-push.eof", m -> m.iofPush(List.of(RANK0), WAIT, null));

    Map<String, Consumer<PmixWriter>> replies = new LinkedHashMap<>();
    replies.put("reply.status", w -> w.packStatus(Status.SUCCESS));
    replies.put("reply.status.error", w -> w.packStatus(Status.ERR_NOT_SUPPORTED));
    replies.put(
        "reply.req",
        w -> {
          w.packString("testjob");
          JOB_DATA.forEach(w::pack);
        });
    replies.put(
        "reply.getnb",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.pack(Value.of(procBlob(w.format(), JOB, JOB_DATA)));
          w.pack(Value.of(procBlob(w.format(), RANK1, List.of(new Value.KVal("loc.key", Value.of("v"))))));
        });
    replies.put("reply.getnb.not-found", w -> w.packStatus(Status.ERR_NOT_FOUND));
    replies.put(
        "reply.lookupnb",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.packSize(LOOKED_UP.size());
          w.pack(DataType.PDATA, LOOKED_UP);
        });
    replies.put(
        "reply.query",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.packSize(ANSWERS.size());
          w.packInfos(ANSWERS);
        });
    replies.put("reply.query.failed", w -> w.packStatus(Status.ERR_NOT_FOUND));
    replies.put(
        "reply.spawnnb",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.packString("spawned-1");
          JOB_DATA.forEach(w::pack);
        });
    replies.put(
        "reply.connectnb",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.pack(Value.of(nspaceBlob(w.format(), "childjob", JOB_DATA)));
        });
    replies.put("reply.connectnb.failed", w -> w.packStatus(Status.ERR_TIMEOUT));
    replies.put(
        "reply.job-control",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.packSize(1);
          w.packInfos(List.of(Info.of("fake.jctrl.ack", true)));
        });
    replies.put(
        "reply.iof-pull",
        w -> {
          w.packStatus(Status.SUCCESS);
          w.packSize(7);
        });
    replies.put(
        "push.notify",
        w -> {
          w.packByteEnum(DataType.COMMAND, Command.NOTIFY.code());
          w.packStatus(Status.of(-5000));
          w.packProc(Proc.of("fakesrv", 0));
          w.packSize(1);
          w.packInfos(List.of(Info.of("my.key", "hello")));
          w.packByteEnum(DataType.DATA_RANGE, DataRange.SESSION.code());
        });
    replies.put(
        "push.notify.no-info",
        w -> {
          w.packByteEnum(DataType.COMMAND, Command.NOTIFY.code());
          w.packStatus(Status.ERR_LOST_CONNECTION);
          w.packProc(RANK0);
          w.packSize(0);
          w.packByteEnum(DataType.DATA_RANGE, DataRange.PROC_LOCAL.code());
        });
    replies.put(
        "push.iof",
        w -> {
          w.packProc(RANK0);
          w.pack(Value.unsigned(DataType.IOF_CHANNEL, 2));
          w.packSize(1);
          w.packSize(0);
          w.pack(Value.of(STDOUT));
        });
    replies.put(
        "push.iof.end",
        w -> {
          w.packProc(RANK1);
          w.pack(Value.unsigned(DataType.IOF_CHANNEL, 4));
          w.packSize(3);
          w.packSize(1);
          w.packInfos(List.of(Info.of("pmix.iof.cmp", true)));
        });

    List<String> lines = new ArrayList<>();
    lines.add("# messages.tsv: golden bytes of every request a pmix-java client or tool sends, and of the"
        + " replies and pushes it reads.");
    lines.add("# Requests: written by the encoders of io.pmix.common.internal.connector.Messages at commit"
        + " ae46bac (before the message records of io.pmix.common.internal.message existed), whose"
        + " bodies MessagesTest, ToolMessagesTest and ConnectMessagesTest check against libpmix 4.2.2's.");
    lines.add("# Replies and pushes: written as pmix-server's ServerCore (and the tool tests' scripted"
        + " server for job control, IOF_PULL and IOF delivery) wrote them at that commit, each read back"
        + " through that Messages' decoders when generated.");
    lines.add("# Generator: GoldenMessagesGenerator (test scope, removed after use; see git history).");
    lines.add("# Columns: name (the MessageCasesTest vector), format (NON_DESC or FULLY_DESC), hex.");
    lines.add("name\tformat\thex");
    for (WireFormat f : List.of(WireFormat.DEFAULT, WireFormat.FULLY_DESCRIBED)) {
      Messages m = new Messages(f, ByteBufAllocator.DEFAULT);
      for (Map.Entry<String, Function<Messages, ByteBuf>> e : requests.entrySet()) {
        lines.add(e.getKey() + "\t" + f.bufferType() + "\t" + hex(e.getValue().apply(m)));
      }
      for (Map.Entry<String, Consumer<PmixWriter>> e : replies.entrySet()) {
        ByteBuf b = Unpooled.buffer();
        e.getValue().accept(new PmixWriter(b, f));
        byte[] bytes = ByteBufUtil.getBytes(b);
        b.release();
        readBack(e.getKey(), bytes, m);
        lines.add(e.getKey() + "\t" + f.bufferType() + "\t" + ByteBufUtil.hexDump(bytes));
      }
    }
    Files.write(Path.of(args[0]), lines, StandardCharsets.UTF_8);
  }

  /** Reads a reply or push back as the connector of the time did, so a wrong recipe fails here. */
  private static void readBack(String name, byte[] bytes, Messages m) {
    PmixReader r = m.reader(Unpooled.wrappedBuffer(bytes));
    DataStore store = new DataStore(RANK0, "node", m.format());
    switch (name) {
      case "reply.req" -> {
        check(name, "testjob".equals(r.unpackString()));
        store.ingestJobData("testjob", r);
      }
      case "reply.getnb" -> {
        check(name, Messages.status(r).isSuccess());
        while (r.hasRemaining()) {
          store.ingestGetBlob(r.unpackOne(DataType.BYTE_OBJECT).asBytes(), JOB);
        }
      }
      case "reply.lookupnb" -> {
        Messages.checkStatus(r, name);
        check(name, LOOKED_UP.equals(Messages.lookupData(r)));
      }
      case "reply.query", "reply.job-control" -> {
        Messages.checkStatus(r, name);
        check(name, Messages.infoArray(r).size() == 1);
      }
      case "reply.spawnnb" -> {
        Messages.checkStatus(r, name);
        check(name, "spawned-1".equals(r.unpackString()));
        store.ingestJobData("spawned-1", r);
      }
      case "reply.connectnb" -> {
        Messages.checkStatus(r, name);
        check(name, List.of("childjob").equals(Messages.connectBlobs(r, store, m.format())));
      }
      case "reply.iof-pull" -> {
        Messages.checkStatus(r, name);
        check(name, Messages.iofServerId(r) == 7);
      }
      case "push.notify", "push.notify.no-info" -> {
        check(name, r.unpackByteEnum(DataType.COMMAND) == Command.NOTIFY.code());
        r.unpackStatus();
        r.unpackProc();
        long n = r.unpackSize();
        if (n > 0) {
          r.unpackInfos(Integer.MAX_VALUE);
        }
        check(name, DataRange.fromCode(r.unpackByteEnum(DataType.DATA_RANGE)).isPresent());
      }
      case "push.iof", "push.iof.end" -> {
        IofChunk c = Messages.iofChunk(r);
        check(name, c.localId() == 1 || c.localId() == 3);
      }
      default -> check(name, Messages.status(r) != null);
    }
    check(name + " (bytes left over)", !r.hasRemaining());
  }

  private static void check(String what, boolean ok) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }

  private static byte[] procBlob(WireFormat f, Proc p, List<Value.KVal> kvs) {
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b, f);
    w.packProc(p);
    kvs.forEach(w::pack);
    byte[] out = ByteBufUtil.getBytes(b);
    b.release();
    return out;
  }

  private static byte[] nspaceBlob(WireFormat f, String nspace, List<Value.KVal> kvs) {
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b, f);
    w.packString(nspace);
    kvs.forEach(w::pack);
    byte[] out = ByteBufUtil.getBytes(b);
    b.release();
    return out;
  }

  private static String hex(ByteBuf b) {
    try {
      return ByteBufUtil.hexDump(b);
    } finally {
      b.release();
    }
  }
}
