package io.pmix.server.internal;

import static io.pmix.server.internal.EmbeddedCore.readFrame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.GetNbRequest;
import io.pmix.common.internal.message.GoldenMessages;
import io.pmix.common.internal.message.JobControlRequest;
import io.pmix.common.internal.message.MonitorRequest;
import io.pmix.common.internal.message.NotifyPush;
import io.pmix.common.internal.message.NotifyRequest;
import io.pmix.common.internal.message.Request;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.Tags;
import io.pmix.server.HostModule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The server's ends of the message layer, through the real pipeline on {@link EmbeddedChannel}s:
 * the golden requests of {@code messages.tsv} (pmix-common's test-jar) go in, and the server's
 * replies and pushes come out as exactly the golden bytes wherever the server's answer is
 * determined by the golden inputs, in both buffer formats; hostile counts are refused before any
 * host call.
 */
class ServerMessagesTest {
  private static final long HUGE_COUNT = 0xFFFFFFFFFFFFFFFFL;

  /** What the recording host was asked. */
  private final List<String> hostCalls = new ArrayList<>();

  private EmbeddedCore fx;

  /** What the host's disconnect upcall answers: completed by the test that needs it. */
  private final CompletableFuture<Void> hostDisconnect = new CompletableFuture<>();

  /** A host that answers what the golden replies need and records every call. */
  private final HostModule host =
      new HostModule() {
        @Override
        public CompletionStage<Void> abort(
            Proc proc, @Nullable Object hostObject, Status status, @Nullable String message,
            List<Proc> procs) {
          hostCalls.add("abort " + proc + " " + status.code() + " " + message + " " + procs);
          return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletionStage<Void> publish(Proc proc, List<Info> info) {
          hostCalls.add("publish " + proc);
          return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletionStage<List<Value.PData>> lookup(
            Proc proc, List<String> keys, List<Info> info) {
          hostCalls.add("lookup " + keys);
          // GoldenInputs.LOOKED_UP
          return CompletableFuture.completedFuture(
              List.of(new Value.PData(Proc.of("testjob", 0), "svc.name", Value.of("port123"))));
        }

        @Override
        public CompletionStage<Void> unpublish(Proc proc, List<String> keys, List<Info> info) {
          hostCalls.add("unpublish " + keys);
          return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletionStage<Void> log(Proc requester, List<Info> data, List<Info> directives) {
          hostCalls.add("log " + data);
          return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletionStage<List<Info>> query(Proc requester, List<Value.Query> queries) {
          hostCalls.add("query " + queries.size());
          return CompletableFuture.completedFuture(List.of());
        }

        @Override
        public CompletionStage<List<Info>> jobControl(
            Proc requester, List<Proc> targets, List<Info> directives) {
          hostCalls.add("jobControl " + requester + " " + targets + " "
              + directives.stream().map(Info::key).toList());
          // The scripted server's acknowledgement in reply.job-control.
          return CompletableFuture.completedFuture(List.of(Info.of("fake.jctrl.ack", true)));
        }

        @Override
        public CompletionStage<Void> disconnect(List<Proc> procs, List<Info> info) {
          hostCalls.add("disconnect " + procs);
          return hostDisconnect;
        }

        @Override
        public CompletionStage<byte[]> fenceNb(List<Proc> procs, List<Info> info, byte[] data) {
          hostCalls.add("fence " + procs);
          return CompletableFuture.completedFuture(new byte[0]);
        }

        @Override
        public CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
          hostCalls.add("dmodex " + proc);
          // GoldenInputs.JOB_DATA for the job level, and rank 1's "loc.key".
          List<Value.KVal> kvs =
              proc.rank() == Proc.RANK_WILDCARD
                  ? List.of(
                      new Value.KVal("pmix.job.size", Value.unsigned(DataType.UINT32, 2)),
                      new Value.KVal("pmix.bfrops.mod", Value.of("4.2.2")))
                  : List.of(new Value.KVal("loc.key", Value.of("v")));
          ByteBuf b = Unpooled.buffer();
          try {
            PmixWriter w = new PmixWriter(b, WireFormat.DEFAULT);
            kvs.forEach(w::pack);
            return CompletableFuture.completedFuture(ByteBufUtil.getBytes(b));
          } finally {
            b.release();
          }
        }
      };

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  static Stream<WireFormat> formats() {
    return Stream.of(WireFormat.DEFAULT, WireFormat.FULLY_DESCRIBED);
  }

  private void start() {
    start(host);
  }

  private void start(HostModule h) {
    fx = new EmbeddedCore(h, EmbeddedCore.options().build(), true, 0x1234, 0x5678);
  }

  private void register(String nspace, int n) {
    assertEquals(
        Status.SUCCESS,
        fx.core.registerNspace(nspace, n, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(n)))));
    for (int r = 0; r < n; r++) {
      assertEquals(Status.SUCCESS, fx.core.registerClient(Proc.of(nspace, r), fx.uid, fx.gid, null));
    }
  }

  /** A 4.2.2 client speaking {@code format}, connected, its handshake reply consumed. */
  private EmbeddedChannel client(String nspace, int rank, WireFormat format) {
    EmbeddedChannel ch = fx.channel();
    ConnectRequest req =
        ConnectRequest.builder()
            .security("native", new NativeCredential(fx.uid, fx.gid).toBytes())
            .kind(ConnectorKind.SIMPLE_CLIENT)
            .procId(nspace, rank)
            .version("4.2.2rc2")
            .bufferType(format.bufferType().code())
            .padPresent(true)
            .build();
    assertFalse(ch.writeInbound(ConnectRequestCodec.encode(ByteBufAllocator.DEFAULT, req)));
    ByteBuf hs = ch.readOutbound();
    try {
      assertEquals(0, hs.getInt(0), "handshake status");
    } finally {
      hs.release();
    }
    return ch;
  }

  /** Sends {@code payload} in a frame of {@code tag}, then runs what the host's answers queued. */
  private void send(EmbeddedChannel ch, int tag, byte[] payload) {
    ByteBuf f = Unpooled.buffer();
    f.writeInt(0).writeInt(tag).writeInt(payload.length).writeInt(0).writeBytes(payload);
    ch.writeInbound(f);
    fx.loopOwner.runPendingTasks();
    ch.runPendingTasks();
  }

  private void sendGolden(EmbeddedChannel ch, int tag, String request, WireFormat format) {
    send(ch, tag, GoldenMessages.bytes(request, format));
  }

  private void send(EmbeddedChannel ch, int tag, Request request, WireFormat format) {
    send(ch, tag, bytes(format, request::encode));
  }

  private static byte[] bytes(WireFormat format, Consumer<PmixWriter> body) {
    ByteBuf b = Unpooled.buffer();
    try {
      body.accept(new PmixWriter(b, format));
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** The next frame on {@code tag} is golden vector {@code name} in {@code format}. */
  private static void assertGolden(
      String name, WireFormat format, EmbeddedChannel ch, int tag, String why) {
    assertEquals(
        ByteBufUtil.hexDump(GoldenMessages.bytes(name, format)),
        ByteBufUtil.hexDump(readFrame(ch, tag)),
        why + ": " + name + " " + format.bufferType());
  }

  private static Status status(EmbeddedChannel ch, int tag, WireFormat format) {
    return new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, tag)), format).unpackStatus();
  }

  // ---- golden request in, golden reply out ----

  @ParameterizedTest
  @MethodSource("formats")
  void statusRepliesAreTheGoldenStatusReplies(WireFormat f) {
    start();
    register("testjob", 2);
    EmbeddedChannel c = client("testjob", 0, f);
    int tag = 101;
    for (String ok :
        List.of(
            "commit.both", "commit.remote-only", "commit.empty", "publishnb", "publishnb.uid",
            "unpublishnb", "unpublishnb.all", "regevents", "regevents.two-codes", "notify",
            "notify.no-info", "log", "log.directives", "abort", "abort.procs-no-message")) {
      sendGolden(c, tag, ok, f);
      assertGolden("reply.status", f, c, tag++, ok);
    }
    // Commands this server does not serve: NOT_SUPPORTED, as for any command without a handler.
    for (String refused :
        List.of(
            "iof-pull", "iof-pull.directives", "iof-push", "iof-push.eof", "iof-dereg",
            "iof-dereg.directives", "spawnnb", "spawnnb.two-apps")) {
      sendGolden(c, tag, refused, f);
      assertGolden("reply.status.error", f, c, tag++, refused);
    }
    // DEREGEVENTS is never answered.
    for (String silent : List.of("deregevents", "deregevents.default", "deregevents.two-codes")) {
      sendGolden(c, tag++, silent, f);
      assertNull(c.readOutbound(), silent);
    }
    assertTrue(hostCalls.contains("abort testjob:0 42 test abort []"), hostCalls::toString);
    assertTrue(
        hostCalls.contains("abort testjob:0 1 null [testjob:0, testjob:1]"), hostCalls::toString);
  }

  @ParameterizedTest
  @MethodSource("formats")
  void lookupRepliesWithTheGoldenData(WireFormat f) {
    start();
    register("testjob", 1);
    EmbeddedChannel c = client("testjob", 0, f);
    sendGolden(c, 101, "lookupnb", f);
    assertGolden("reply.lookupnb", f, c, 101, "host found LOOKED_UP");
    assertEquals(List.of("lookup [svc.name]"), hostCalls);
  }

  @ParameterizedTest
  @MethodSource("formats")
  void queryRepliesAreTheGoldenOnes(WireFormat f) {
    start();
    register("testjob", 1);
    register("other", 1);
    EmbeddedChannel c = client("testjob", 0, f);
    // pmix.qry.ns answered here ("testjob,other"), my.host.query by the host (nothing).
    sendGolden(c, 101, "query", f);
    assertGolden("reply.query", f, c, 101, "namespaces here, nothing from the host");
    sendGolden(c, 102, "query.empty", f);
    assertGolden("reply.query.failed", f, c, 102, "no query: not found");
  }

  @ParameterizedTest
  @MethodSource("formats")
  void getOfAnotherNodesProcessRepliesWithTheGoldenBlobs(WireFormat f) {
    start();
    register("other", 1);
    EmbeddedChannel c = client("other", 0, f);
    // testjob is no namespace of this node; IMMEDIATE: NOT_FOUND without asking the host.
    sendGolden(c, 101, "getnb.directives", f);
    assertGolden("reply.getnb.not-found", f, c, 101, "immediate get of a foreign job");
    // The job level of testjob comes from the host's direct modex (JOB_DATA) ...
    send(c, 102, new GetNbRequest(Proc.wildcard("testjob"), List.of(), null), f);
    assertEquals(Status.SUCCESS, status(c, 102, f));
    // ... then rank 1's data: the reply to a caller of another namespace carries the job level
    // blob first, then the target's.
    sendGolden(c, 103, "getnb.peer", f);
    assertGolden("reply.getnb", f, c, 103, "job level and rank 1 from the host");
    assertEquals(List.of("dmodex testjob:WILDCARD", "dmodex testjob:1"), hostCalls);
  }

  @ParameterizedTest
  @MethodSource("formats")
  void connectThatTimesOutRepliesWithTheGoldenFailure(WireFormat f) {
    timesOutAlone(f, "connectnb");
  }

  /**
   * Rank 0 of a 2-rank job sends the golden {@code request} (childjob:0 and testjob:*, pmix.timeout
   * 10) that rank 1 never joins: nothing until the 10 s pass, then the golden failure.
   */
  private void timesOutAlone(WireFormat f, String request) {
    start();
    register("testjob", 2);
    EmbeddedChannel c = client("testjob", 0, f);
    sendGolden(c, 101, request, f);
    assertNull(c.readOutbound());
    fx.loopOwner.advanceTimeBy(10, TimeUnit.SECONDS);
    fx.loopOwner.runScheduledPendingTasks();
    assertGolden("reply.connectnb.failed", f, c, 101, "timed out");
  }

  /**
   * OpenPMIx master's simptimeout: a disconnect with {@code pmix.timeout} that a local
   * participant never joins answers TIMEOUT (the host never asked), as a connect does.
   */
  @ParameterizedTest
  @MethodSource("formats")
  void disconnectThatTimesOutLocallyRepliesTimeoutWithoutTheHost(WireFormat f) {
    timesOutAlone(f, "disconnectnb");
    assertEquals(List.of(), hostCalls);
  }

  /**
   * Once every local participant of a disconnect has arrived the host has it: its {@code
   * pmix.timeout} no longer fires here (master deletes the local-phase timer), and the host's
   * answer is what the callers get.
   */
  @ParameterizedTest
  @MethodSource("formats")
  void disconnectTimeoutStopsWhenTheHostHasIt(WireFormat f) {
    start();
    register("testjob", 2);
    EmbeddedChannel c0 = client("testjob", 0, f);
    EmbeddedChannel c1 = client("testjob", 1, f);
    sendGolden(c0, 101, "disconnectnb", f);
    sendGolden(c1, 101, "disconnectnb", f);
    assertEquals(List.of("disconnect [childjob:0, testjob:WILDCARD]"), hostCalls);
    fx.loopOwner.advanceTimeBy(30, TimeUnit.SECONDS);
    fx.loopOwner.runScheduledPendingTasks();
    assertNull(c0.readOutbound());
    assertNull(c1.readOutbound());
    hostDisconnect.complete(null);
    fx.loopOwner.runPendingTasks();
    c0.runPendingTasks();
    c1.runPendingTasks();
    assertEquals(Status.SUCCESS, status(c0, 101, f));
    assertEquals(Status.SUCCESS, status(c1, 101, f));
  }

  // ---- job control ----

  /** JOB_CONTROL goes to the host's jobControl, whose results follow SUCCESS in the reply. */
  @ParameterizedTest
  @MethodSource("formats")
  void jobControlIsTheHostsAndRepliesWithTheGoldenResults(WireFormat f) {
    start();
    register("testjob", 2);
    EmbeddedChannel c = client("testjob", 0, f);
    sendGolden(c, 101, "job-control", f);
    assertGolden("reply.job-control", f, c, 101, "the host's results");
    sendGolden(c, 102, "job-control.no-targets", f);
    assertGolden("reply.job-control", f, c, 102, "the host's results");
    assertEquals(
        List.of("jobControl testjob:0 [testjob:WILDCARD] [pmix.jctrl.kill]",
            "jobControl testjob:0 [] [pmix.jctrl.kill]"),
        hostCalls);
  }

  /** A host without the upcall: NOT_SUPPORTED at once (what PRRTE answers to what it lacks). */
  @Test
  void jobControlWithoutTheUpcallIsNotSupportedAtOnce() {
    start(new HostModule() {});
    register("testjob", 1);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    sendGolden(c, 101, "job-control", WireFormat.DEFAULT);
    assertEquals(Status.ERR_NOT_SUPPORTED, status(c, 101, WireFormat.DEFAULT));
  }

  private static JobControlRequest cleanup(List<Proc> targets, Info... directives) {
    return new JobControlRequest(targets, List.of(directives));
  }

  /**
   * Cleanup directives are the server's: answered SUCCESS without the host, and the directory
   * (recursively, but for the ignored file and the directories holding it) and the file are
   * removed when the host deregisters the namespace, not before.
   */
  @Test
  void cleanupDirectivesAreServedByTheServerAtDeregistration(@TempDir Path tmp)
      throws IOException {
    start();
    register("testjob", 2);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    Path dir = Files.createDirectories(tmp.resolve("session/sub/deeper"));
    Files.writeString(dir.resolve("a"), "a");
    Path kept = Files.writeString(tmp.resolve("session/sub/keep"), "k");
    Path gone = Files.writeString(tmp.resolve("session/x"), "x");
    Path file = Files.writeString(tmp.resolve("lone"), "l");
    Path top = tmp.resolve("session");
    send(c, 101, cleanup(List.of(),
        Info.of(Keys.REGISTER_CLEANUP_DIR, Value.of(top.toString())),
        Info.of(Keys.CLEANUP_RECURSIVE, Value.of(true)),
        Info.of(Keys.CLEANUP_IGNORE, Value.of(kept.toString()))), WireFormat.DEFAULT);
    assertEquals(Status.SUCCESS, status(c, 101, WireFormat.DEFAULT));
    send(c, 102, cleanup(List.of(Proc.wildcard("testjob")),
        Info.of(Keys.REGISTER_CLEANUP, Value.of(file.toString()))), WireFormat.DEFAULT);
    assertEquals(Status.SUCCESS, status(c, 102, WireFormat.DEFAULT));
    assertEquals(List.of(), hostCalls);
    assertTrue(Files.exists(gone) && Files.exists(file));
    assertEquals(Status.SUCCESS, fx.core.deregisterNspace("testjob"));
    fx.loopOwner.runPendingTasks();
    assertFalse(Files.exists(dir.getParent().resolve("deeper")));
    assertFalse(Files.exists(gone));
    assertFalse(Files.exists(file));
    assertTrue(Files.exists(kept), "ignored");
  }

  /** Without pmix.clnup.recurse only the top directory's files go; pmix.clnup.lvtop keeps it. */
  @Test
  void aCleanupDirectoryWithoutRecursionKeepsItsSubdirectories(@TempDir Path tmp)
      throws IOException {
    start();
    register("testjob", 1);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    Path sub = Files.createDirectories(tmp.resolve("d/sub"));
    Path f = Files.writeString(tmp.resolve("d/f"), "f");
    Path empty = Files.createDirectories(tmp.resolve("e"));
    send(c, 101, cleanup(List.of(Proc.of("testjob", 0)),
        Info.of(Keys.REGISTER_CLEANUP_DIR, Value.of(tmp.resolve("d").toString()))),
        WireFormat.DEFAULT);
    assertEquals(Status.SUCCESS, status(c, 101, WireFormat.DEFAULT));
    send(c, 102, cleanup(List.of(Proc.of("testjob", 0)),
        Info.of(Keys.REGISTER_CLEANUP_DIR, Value.of(empty.toString())),
        Info.of(Keys.CLEANUP_LEAVE_TOPDIR, Value.of(true))), WireFormat.DEFAULT);
    assertEquals(Status.SUCCESS, status(c, 102, WireFormat.DEFAULT));
    assertEquals(Status.SUCCESS, fx.core.deregisterClient(Proc.of("testjob", 0)));
    fx.loopOwner.runPendingTasks();
    assertFalse(Files.exists(f));
    assertTrue(Files.isDirectory(sub));
    assertTrue(Files.isDirectory(empty), "left by pmix.clnup.lvtop");
  }

  /**
   * A path both to remove and to ignore is CONFLICTING_CLEANUP_DIRECTIVES (-51); a path that is
   * no string is BAD_PARAM; mixed with other directives, the host gets them all.
   */
  @Test
  void conflictingOrMalformedCleanupIsRefusedAndMixedRequestsReachTheHost() {
    start();
    register("testjob", 1);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    send(c, 101, cleanup(List.of(),
        Info.of(Keys.CLEANUP_IGNORE, Value.of("/nonexistent/p")),
        Info.of(Keys.REGISTER_CLEANUP, Value.of("/nonexistent/p"))), WireFormat.DEFAULT);
    assertEquals(Status.ERR_CONFLICTING_CLEANUP_DIRECTIVES, status(c, 101, WireFormat.DEFAULT));
    send(c, 102, cleanup(List.of(), Info.of(Keys.REGISTER_CLEANUP.name(), Value.of(7))),
        WireFormat.DEFAULT);
    assertEquals(Status.ERR_BAD_PARAM, status(c, 102, WireFormat.DEFAULT));
    assertEquals(List.of(), hostCalls);
    send(c, 103, cleanup(List.of(),
        Info.of(Keys.REGISTER_CLEANUP, Value.of("/nonexistent/q")),
        Info.of(Keys.JOB_CTRL_PREEMPTIBLE, Value.of(true))), WireFormat.DEFAULT);
    assertGolden("reply.job-control", WireFormat.DEFAULT, c, 103, "the host's results");
    assertEquals(
        List.of("jobControl testjob:0 [] [pmix.reg.cleanup, pmix.jctrl.preempt]"), hostCalls);
  }

  // ---- monitoring ----

  /** An empty tag-1 message: what PMIx_Heartbeat sends. */
  private void heartbeat(EmbeddedChannel ch) {
    ByteBuf f = Unpooled.buffer();
    f.writeInt(0).writeInt(Tags.HEARTBEAT).writeInt(0).writeInt(0);
    ch.writeInbound(f);
    fx.loopOwner.runPendingTasks();
  }

  private void windows(int n) {
    for (int i = 0; i < n; i++) {
      fx.loopOwner.advanceTimeBy(1, TimeUnit.SECONDS);
      fx.loopOwner.runScheduledPendingTasks();
    }
  }

  /**
   * The golden heartbeat monitor (one-second windows, one drop allowed, 4.2.2 client's bytes) is
   * the server's: SUCCESS alone, the host never asked. Heartbeats keep it quiet; two empty windows
   * in a row raise MONITOR_HEARTBEAT_ALERT about the requester to the other clients (not to the
   * requester), once, until it beats again.
   */
  @ParameterizedTest
  @MethodSource("formats")
  void aHeartbeatMonitorAlertsAfterMoreEmptyWindowsThanDrops(WireFormat f) {
    start();
    register("testjob", 2);
    EmbeddedChannel listener = client("testjob", 0, f);
    EmbeddedChannel watched = client("testjob", 1, f);
    sendGolden(listener, 101, "regevents.default", f);
    assertGolden("reply.status", f, listener, 101, "registered");
    sendGolden(watched, 101, "regevents.default", f);
    assertGolden("reply.status", f, watched, 101, "registered");
    sendGolden(watched, 102, "monitor.heartbeat", f);
    assertGolden("reply.status", f, watched, 102, "monitoring");
    assertEquals(List.of(), hostCalls);
    for (int i = 0; i < 3; i++) {
      heartbeat(watched);
      windows(1);
    }
    windows(1); // one empty window: within the drops
    assertNull(listener.readOutbound());
    windows(1);
    NotifyPush alert = push(listener, f);
    assertEquals(Status.MONITOR_HEARTBEAT_ALERT, alert.code());
    assertEquals(Proc.of("testjob", 1), alert.source());
    windows(3);
    assertNull(listener.readOutbound(), "reported once");
    assertNull(watched.readOutbound(), "the source is not told");
    heartbeat(watched);
    windows(3);
    assertEquals(Proc.of("testjob", 1), push(listener, f).source());
    // The requester's connection ends: so does its monitor.
    var unused = watched.close();
    fx.loopOwner.runPendingTasks();
    windows(5);
    assertNull(listener.readOutbound());
  }

  private static NotifyPush push(EmbeddedChannel ch, WireFormat f) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(readFrame(ch, Tags.NOTIFY)), f);
    assertEquals(Command.NOTIFY.code(), r.unpackByteEnum(DataType.COMMAND));
    return NotifyPush.decode(r);
  }

  /**
   * A cancel naming the monitor's id stops it (no alert however long the requester stays
   * silent); one naming no monitor of the server's goes to the host; a cancel whose value is no
   * string is BAD_PARAM.
   */
  @Test
  void aCancelledHeartbeatMonitorStaysQuiet() {
    start();
    register("testjob", 2);
    WireFormat f = WireFormat.DEFAULT;
    EmbeddedChannel listener = client("testjob", 0, f);
    EmbeddedChannel watched = client("testjob", 1, f);
    sendGolden(listener, 101, "regevents.default", f);
    assertGolden("reply.status", f, listener, 101, "registered");
    sendGolden(watched, 101, "monitor.heartbeat", f); // id HB1
    assertGolden("reply.status", f, watched, 101, "monitoring");
    send(watched, 102, new MonitorRequest(Info.of("pmix.monitor.cancel", "other"),
        Status.SUCCESS, List.of()), f);
    assertEquals(Status.ERR_NOT_SUPPORTED, status(watched, 102, f), "not ours: the host's");
    send(watched, 103, new MonitorRequest(Info.of("pmix.monitor.cancel", true),
        Status.SUCCESS, List.of()), f);
    assertEquals(Status.ERR_BAD_PARAM, status(watched, 103, f));
    send(watched, 104, new MonitorRequest(Info.of("pmix.monitor.cancel", "HB1"),
        Status.SUCCESS, List.of()), f);
    assertEquals(Status.SUCCESS, status(watched, 104, f));
    windows(10);
    assertNull(listener.readOutbound());
  }

  /** A heartbeat monitor without a window is BAD_PARAM; any other monitor is the host's. */
  @Test
  void aHeartbeatMonitorWithoutAWindowIsRefusedAndOtherMonitorsAreTheHosts() {
    start();
    register("testjob", 1);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    send(c, 101, new MonitorRequest(Info.of("pmix.monitor.mbeat", Value.Pointer.INSTANCE),
        Status.SUCCESS, List.of(Info.of("pmix.monitor.id", "x"))), WireFormat.DEFAULT);
    assertEquals(Status.ERR_BAD_PARAM, status(c, 101, WireFormat.DEFAULT));
    send(c, 102, new MonitorRequest(Info.of("pmix.monitor.fmon", "/some/file"),
        Status.MONITOR_FILE_ALERT, List.of()), WireFormat.DEFAULT);
    assertEquals(Status.ERR_NOT_SUPPORTED, status(c, 102, WireFormat.DEFAULT));
  }

  @ParameterizedTest
  @MethodSource("formats")
  void eventPushesAreTheGoldenPushes(WireFormat f) {
    start();
    register("testjob", 2);
    EmbeddedChannel raiser = client("testjob", 0, f);
    EmbeddedChannel listener = client("testjob", 1, f);
    sendGolden(listener, 101, "regevents.default", f);
    assertGolden("reply.status", f, listener, 101, "registered");
    // The host's notification ...
    assertEquals(
        Status.SUCCESS,
        fx.core.notifyLocal(
            Status.of(-5000), Proc.of("fakesrv", 0), DataRange.SESSION.code(),
            List.of(Info.of("my.key", "hello")), null));
    assertGolden("push.notify", f, listener, Tags.NOTIFY, "host event");
    // ... and a peer's (PROC_LOCAL: not the host's business), which the raiser does not get.
    send(raiser, 102, new NotifyRequest(Status.ERR_LOST_CONNECTION, DataRange.PROC_LOCAL,
        List.of()), f);
    assertGolden("reply.status", f, raiser, 102, "notify answered");
    assertGolden("push.notify.no-info", f, listener, Tags.NOTIFY, "rank 0's event");
    assertNull(raiser.readOutbound());
    assertEquals(List.of(), hostCalls);
  }

  // ---- hostile counts ----

  /**
   * An ABORT naming 2^64-1 procs: a count beyond the limits, refused, and the host never asked
   * (read as a signed -1 it was "no procs", which aborts the caller's whole job).
   */
  @Test
  void anAbortWithACountOfTwoToTheSixtyFourMinusOneIsRefusedAndNothingIsAborted() {
    start();
    register("testjob", 2);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    send(c, 101, bytes(WireFormat.DEFAULT, w -> {
      w.packByteEnum(DataType.COMMAND, Command.ABORT.code());
      w.packStatus(Status.of(1));
      w.packString("hostile");
      w.packSize(HUGE_COUNT);
    }));
    assertEquals(Status.ERR_BAD_PARAM, status(c, 101, WireFormat.DEFAULT));
    assertEquals(List.of(), hostCalls);
    // The connection still serves.
    sendGolden(c, 102, "abort", WireFormat.DEFAULT);
    assertEquals(Status.SUCCESS, status(c, 102, WireFormat.DEFAULT));
    assertEquals(List.of("abort testjob:0 42 test abort []"), hostCalls);
  }

  /** The same count where infos or procs are counted: refused, no host call, no collective. */
  @Test
  void hugeCountsInOtherRequestsAreRefusedBeforeAnyHostCall() {
    start();
    register("testjob", 1);
    EmbeddedChannel c = client("testjob", 0, WireFormat.DEFAULT);
    List<Consumer<PmixWriter>> hostile =
        List.of(
            w -> {
              w.packByteEnum(DataType.COMMAND, Command.PUBLISHNB.code());
              w.packUInt32(0);
              w.packSize(HUGE_COUNT);
            },
            w -> {
              w.packByteEnum(DataType.COMMAND, Command.FENCENB.code());
              w.packSize(1);
              w.pack(DataType.PROC, List.of(Proc.wildcard("testjob")));
              w.packSize(HUGE_COUNT);
            },
            w -> {
              w.packByteEnum(DataType.COMMAND, Command.LOG.code());
              w.pack(Value.signed(DataType.TIME, 0));
              w.packSize(HUGE_COUNT);
              w.packSize(0);
            },
            w -> {
              w.packByteEnum(DataType.COMMAND, Command.SPAWNNB.code());
              w.packSize(0);
              w.packSize(HUGE_COUNT);
            },
            w -> {
              w.packByteEnum(DataType.COMMAND, Command.QUERY.code());
              w.packSize(HUGE_COUNT);
            });
    int tag = 101;
    for (Consumer<PmixWriter> body : hostile) {
      send(c, tag, bytes(WireFormat.DEFAULT, body));
      assertEquals(Status.ERR_BAD_PARAM, status(c, tag, WireFormat.DEFAULT), "request " + (tag - 101));
      tag++;
    }
    assertEquals(List.of(), hostCalls);
    assertEquals(0, fx.core.activeFences());
  }
}
