package io.pmix.tool;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.internal.wire.Command;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.testing.ScriptedServer;
import io.pmix.common.testing.TeardownContract;
import io.pmix.tool.internal.ToolHolder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PMIxTool against a scripted server: the connect request for every identity and launcher flag,
 * the ways of finding a server, and every operation's request and reply.
 */
class ToolFakeServerTest {
  private static final String HOST = "testhost";

  @TempDir Path tmp;
  private ScriptedServer server;
  private Map<String, String> env;

  @BeforeEach
  void start() {
    server = new ScriptedServer();
    env = new HashMap<>();
    env.put("PMIX_HOSTNAME", HOST);
    env.put("PMIX_SYSTEM_TMPDIR", tmp.toString());
  }

  @AfterEach
  void stop() {
    while (ToolHolder.peek() != null) {
      PMIxTool.finalize();
    }
    server.close();
    TeardownContract.assertNothingRemains(ToolHolder.holder());
  }

  @CanIgnoreReturnValue
  private Proc init(Info... directives) {
    return ToolHolder.init(env, List.of(directives)).me();
  }

  @Test
  void aToolWithoutIdentityGetsOneAssigned() {
    Proc me = init(Info.of("pmix.srvr.uri", server.uri()));
    assertEquals(Proc.of("fake-tool-1", 0), me);
    assertEquals(me, PMIxTool.myProc());
    assertEquals(Proc.of(ScriptedServer.NSPACE, 0), PMIxTool.server().orElseThrow());
    ConnectRequest req = server.connects.get(0);
    assertEquals(ConnectorKind.TOOL_NEEDS_ID, req.kind());
    int[] ids = LocalProcess.effectiveIds();
    assertEquals(ids[0], req.euid().getAsInt());
    assertEquals(ids[1], req.egid().getAsInt());
    assertEquals("native", req.psecModule());
    assertEquals("v41", req.bfropsModule());
    assertEquals("hash", req.gdsModule());
    assertFalse(req.padPresent(), "a Java connector sends no pad byte");
    // The info blob: SIZE n then n infos, ending with pmix.ppid and pmix.cmd.line.
    PmixReader blob = new PmixReader(io.netty.buffer.Unpooled.wrappedBuffer(req.infoBlob()));
    long n = blob.unpackSize();
    List<Info> infos = blob.unpackInfos((int) n);
    assertEquals("pmix.ppid", infos.get(infos.size() - 2).key());
    assertEquals(ProcessHandle.current().pid(), infos.get(infos.size() - 2).value().asLong());
    assertEquals("pmix.cmd.line", infos.get(infos.size() - 1).key());
    PMIxTool.finalize();
    // REQ first, FINALIZE last, both with pindex 0 (a self-started tool).
    assertEquals(Command.REQ.code(), server.commands().get(0));
    assertEquals(Command.FINALIZE.code(), server.commands().get(server.commands().size() - 1));
    assertTrue(server.frames.stream().allMatch(f -> f.pindex() == 0));
    assertEquals(101, server.frames.get(0).tag());
  }

  @Test
  void identityAndLauncherFlags() {
    init(
        Info.of("pmix.srvr.uri", server.uri()),
        Info.of("pmix.tool.nspace", "mytool"),
        Info.of("pmix.tool.rank", Value.uint32(7)));
    assertEquals(Proc.of("mytool", 7), PMIxTool.myProc());
    PMIxTool.finalize();
    init(Info.of("pmix.srvr.uri", server.uri()), Info.of("pmix.tool.launcher", true));
    PMIxTool.finalize();
    init(
        Info.of("pmix.srvr.uri", server.uri()),
        Info.of("pmix.tool.launcher", true),
        Info.of("pmix.tool.nspace", "mylauncher"),
        Info.of("pmix.tool.rank", Value.rank(3)));
    PMIxTool.finalize();
    env.put("PMIX_NAMESPACE", "testns");
    env.put("PMIX_RANK", "0");
    env.put("PMIX_SERVER_URI41", server.uri());
    // Found through the environment of a launching server (route 6): flag 5, pindex -1.
    int before = server.frames.size();
    Proc me = init();
    assertEquals(Proc.of("testns", 0), me);
    PMIxTool.finalize();
    init(Info.of("pmix.tool.launcher", true));
    PMIxTool.finalize();
    List<ScriptedServer.Received> launched = server.frames.subList(before, server.frames.size());
    assertEquals(4, launched.size(), "REQ and FINALIZE twice");
    assertTrue(launched.stream().allMatch(f -> f.pindex() == -1), launched.toString());
    List<ConnectorKind> kinds = server.connects.stream().map(ConnectRequest::kind).toList();
    assertEquals(
        List.of(
            ConnectorKind.TOOL_GIVEN_ID,
            ConnectorKind.LAUNCHER_NEEDS_ID,
            ConnectorKind.LAUNCHER_GIVEN_ID,
            ConnectorKind.TOOL_CLIENT,
            ConnectorKind.LAUNCHER_CLIENT),
        kinds);
    assertEquals("mytool", server.connects.get(0).nspace().orElseThrow());
    assertEquals(7, server.connects.get(0).rank().getAsInt());
    assertEquals(3, server.connects.get(2).rank().getAsInt());
    assertEquals("testns", server.connects.get(3).nspace().orElseThrow());
  }

  @Test
  void queriesAnsweredByTheServerAndByTheLibrary() {
    init(Info.of("pmix.srvr.uri", server.uri()));
    assertEquals(List.of(ScriptedServer.JOB, "other"), PMIxTool.queryNamespaces());
    List<Value.ProcInfo> table = PMIxTool.queryProcTable(ScriptedServer.JOB);
    assertEquals(2, table.size());
    assertEquals(Proc.of(ScriptedServer.JOB, 1), table.get(1).proc());
    assertEquals("node1", table.get(1).hostname());
    assertEquals("/bin/app", table.get(1).executableName());
    assertEquals(1001, table.get(1).pid());
    int sent = server.frames.size();
    List<Info> attrs =
        PMIxTool.query(
            List.of(
                new Value.Query(
                    List.of("pmix.qry.attrs"),
                    List.of(Info.of("pmix.tool.fns", "PMIx_tool_init,PMIx_Get")))));
    assertEquals(sent, server.frames.size(), "tool-function attributes are answered locally");
    DataArray perFunction = (DataArray) attrs.get(0).value();
    Info init = (Info) perFunction.items().get(0);
    assertEquals("PMIx_tool_init", init.key());
    List<String> keys = new ArrayList<>();
    for (Value v : ((DataArray) init.value()).items()) {
      keys.add(((Value.RegAttr) v).string());
    }
    assertTrue(keys.contains("pmix.srvr.pidinfo"), keys.toString());
    PmixException x =
        assertThrows(
            PmixException.class,
            () -> PMIxTool.query(List.of(new Value.Query(List.of("no.such.key"), List.of()))));
    assertEquals(Status.ERR_NOT_FOUND, x.status());
  }

  @Test
  void getSpawnJobControlAndLog() {
    init(Info.of("pmix.srvr.uri", server.uri()));
    Proc job = Proc.wildcard(ScriptedServer.JOB);
    assertEquals(3, PMIxTool.get(job, "pmix.job.size").asInt());
    int sent = server.frames.size();
    assertEquals(3, PMIxTool.get(job, "pmix.job.size").asInt());
    assertEquals(sent, server.frames.size(), "the second get is answered from the cache");
    String ns =
        PMIxTool.spawn(
            List.of(new Value.App("/bin/true", List.of(), List.of(), null, 2, List.of())));
    assertEquals("spawned-1", ns);
    sent = server.frames.size();
    assertEquals(2, PMIxTool.get(Proc.wildcard(ns), "pmix.job.size").asInt());
    assertEquals(sent, server.frames.size(), "the spawn reply's job data is cached");
    List<Info> ack = PMIxTool.jobControl(List.of(job), Info.of("pmix.jctrl.kill", true));
    assertEquals("fake.jctrl.ack", ack.get(0).key());
    PMIxTool.log(List.of(Info.of("pmix.log.stderr", "from the tool\n")));
  }

  @Test
  void eventsFromTheServerAndLocalOnes() throws Exception {
    init(Info.of("pmix.srvr.uri", server.uri()));
    CompletableFuture<Event> pushed = new CompletableFuture<>();
    long id = PMIxTool.registerEventHandler(List.of(ScriptedServer.PUSHED_EVENT), pushed::complete);
    Event e = pushed.get(10, TimeUnit.SECONDS);
    assertEquals(Proc.of(ScriptedServer.NSPACE, 0), e.source());
    assertEquals("hello", e.find("my.key").orElseThrow().value().asString());
    assertEquals(DataRange.SESSION, e.range().orElseThrow());
    CompletableFuture<Event> local = new CompletableFuture<>();
    var unused = PMIxTool.registerEventHandler(List.of(Status.of(-4242)), local::complete);
    PMIxTool.notifyEvent(Status.of(-4242), DataRange.SESSION, Info.of("x", "y"));
    assertEquals(PMIxTool.myProc(), local.get(10, TimeUnit.SECONDS).source());
    PMIxTool.deregisterEventHandler(id);
    assertThrows(PmixException.class, () -> PMIxTool.deregisterEventHandler(id));
  }

  @Test
  void forwardedOutputDeregistrationAndStdin() throws Exception {
    init(Info.of("pmix.srvr.uri", server.uri()));
    CompletableFuture<IofOutput> out = new CompletableFuture<>();
    long id =
        PMIxTool.iofPull(
            List.of(Proc.wildcard(ScriptedServer.JOB)),
            EnumSet.of(IofChannel.STDOUT, IofChannel.STDERR),
            out::complete);
    IofOutput o = out.get(10, TimeUnit.SECONDS);
    assertEquals(Proc.of(ScriptedServer.JOB, 0), o.source());
    assertEquals(EnumSet.of(IofChannel.STDOUT), o.channels());
    assertEquals("hello out\n", o.text());
    PMIxTool.iofDeregister(id);
    assertThrows(PmixException.class, () -> PMIxTool.iofDeregister(id));
    PMIxTool.iofPush(List.of(Proc.of(ScriptedServer.JOB, 0)), "input\n".getBytes(UTF_8));
    PMIxTool.iofPush(List.of(Proc.of(ScriptedServer.JOB, 0)), null);
    assertThrows(
        IllegalArgumentException.class,
        () -> PMIxTool.iofPull(List.of(Proc.of("x", 0)), EnumSet.of(IofChannel.STDIN), x -> {}));
  }

  @Test
  void rendezvousFilesByPidNamespaceFileSystemAndSearch() throws Exception {
    long pid = 424242;
    Path nested = tmp.resolve("session").resolve("pmix-java-1");
    server.writeRendezvous(nested, "pmix." + HOST + ".tool." + pid);
    server.writeRendezvous(nested, "pmix." + HOST + ".tool." + ScriptedServer.NSPACE);
    Path attach = server.writeRendezvous(tmp.resolve("elsewhere"), "attach.txt");
    server.writeRendezvous(tmp, "pmix.sys." + HOST);
    // A file for another pid with a matching prefix must not be taken (C matches by prefix).
    try (ScriptedServer other = new ScriptedServer(1)) {
      other.writeRendezvous(nested, "pmix." + HOST + ".tool." + pid + "1");
      init(Info.of("pmix.srvr.pidinfo", Value.pid((int) pid)));
      assertEquals(Proc.of(ScriptedServer.NSPACE, 0), PMIxTool.server().orElseThrow());
      PMIxTool.finalize();
    }
    init(Info.of("pmix.srv.nspace", ScriptedServer.NSPACE));
    PMIxTool.finalize();
    init(Info.of("pmix.tool.attach", attach.toString()));
    PMIxTool.finalize();
    init(Info.of("pmix.srvr.uri", "file:" + attach));
    PMIxTool.finalize();
    init(Info.of("pmix.cnct.sys", true));
    PMIxTool.finalize();
    init();
    PMIxTool.finalize();
    assertEquals(6, server.connects.size());
    PmixException none =
        assertThrows(PmixException.class, () -> init(Info.of("pmix.srvr.pidinfo", Value.pid(7))));
    assertEquals(Status.ERR_UNREACH, none.status());
  }

  @Test
  void theFirstLiveServerFoundWinsAndStaleFilesAreSkipped() throws Exception {
    // A stale file nearer the root, naming a port nobody listens on.
    Files.writeString(
        tmp.resolve("pmix." + HOST + ".tool.1"), "dead.0;tcp4://127.0.0.1:1\n4.2.2\n1\n0:0\n\n");
    // A server that refuses by closing, also nearer the root than the good one.
    try (ScriptedServer refusing = new ScriptedServer(5)) {
      refusing.refuse = true;
      refusing.writeRendezvous(tmp.resolve("a"), "pmix." + HOST + ".tool.3");
      server.writeRendezvous(tmp.resolve("b").resolve("c"), "pmix." + HOST + ".tool.2");
      init();
      assertTrue(PMIxTool.isConnected());
      assertEquals(0, PMIxTool.server().orElseThrow().rank());
      assertEquals(1, refusing.connects.size(), "the refusing server was tried first");
      assertEquals(1, server.connects.size());
      assertTrue(PMIxTool.queryNamespaces().contains(ScriptedServer.JOB));
    }
  }

  @Test
  void aChangedEnvironmentIsHonouredByTheNextInit() throws Exception {
    Path a = tmp.resolve("a");
    Path b = tmp.resolve("b");
    try (ScriptedServer other = new ScriptedServer(9)) {
      server.writeRendezvous(a, "pmix." + HOST + ".tool.1");
      other.writeRendezvous(b, "pmix." + HOST + ".tool.2");
      env.put("PMIX_SYSTEM_TMPDIR", a.toString());
      init();
      assertEquals(0, PMIxTool.server().orElseThrow().rank());
      assertEquals(a, ToolHolder.require().systemTmpdir().orElseThrow());
      PMIxTool.finalize();
      env.put("PMIX_SYSTEM_TMPDIR", b.toString());
      init();
      assertEquals(9, PMIxTool.server().orElseThrow().rank(), "the old tmpdir choice survived");
      PMIxTool.finalize();
    }
  }

  @Test
  void optionalAndNoConnection() {
    PmixException x =
        assertThrows(
            PmixException.class, () -> init(Info.of("pmix.srvr.uri", "s.0;tcp4://127.0.0.1:1")));
    assertEquals(Status.ERR_UNREACH, x.status());
    TeardownContract.assertNothingRemains(ToolHolder.holder());
    Proc me =
        init(
            Info.of("pmix.srvr.uri", "s.0;tcp4://127.0.0.1:1"),
            Info.of("pmix.tool.conopt", true),
            Info.of("pmix.tool.mretries", Value.uint32(0)));
    assertFalse(PMIxTool.isConnected());
    assertEquals("tool." + HOST + "." + ProcessHandle.current().pid(), me.nspace());
    PmixException u = assertThrows(PmixException.class, PMIxTool::queryNamespaces);
    assertEquals(Status.ERR_UNREACH, u.status());
    PMIxTool.finalize();
    init(Info.of("pmix.tool.nocon", true), Info.of("pmix.tool.nspace", "quiet"));
    assertEquals(Proc.of("quiet", 0), PMIxTool.myProc());
    PMIxTool.finalize();
  }

  @Test
  void losingTheServerFailsPendingWorkAndRaisesAnEvent() throws Exception {
    init(Info.of("pmix.srvr.uri", server.uri()));
    CompletableFuture<Event> lost = new CompletableFuture<>();
    var unused = PMIxTool.registerEventHandler(List.of(Status.ERR_LOST_CONNECTION), lost::complete);
    server.dropConnections();
    assertEquals(Status.ERR_LOST_CONNECTION, lost.get(10, TimeUnit.SECONDS).status());
    ExecutionException x =
        assertThrows(
            ExecutionException.class,
            () -> PMIxTool.queryNamespacesAsync().get(10, TimeUnit.SECONDS));
    assertEquals(Status.ERR_LOST_CONNECTION, ((PmixException) x.getCause()).status());
    PMIxTool.finalize();
  }

  @Test
  void blockingCallsFromCallbacksFailFastAndCallerMistakes() throws Exception {
    assertThrows(IllegalStateException.class, PMIxTool::myProc);
    assertThrows(IllegalStateException.class, () -> PMIxTool.finalize());
    assertThrows(
        IllegalArgumentException.class,
        () -> init(Info.of("pmix.tool.rank", Value.uint32(1))));
    TeardownContract.assertNothingRemains(ToolHolder.holder());
    init(Info.of("pmix.srvr.uri", server.uri()));
    CompletableFuture<Throwable> inHandler = new CompletableFuture<>();
    var unused =
        PMIxTool.registerEventHandler(
            List.of(Status.of(-4243)),
            e -> {
              try {
                var n = PMIxTool.queryNamespaces();
                inHandler.complete(new AssertionError("no exception: " + n));
              } catch (RuntimeException ex) {
                inHandler.complete(ex);
              }
            });
    PMIxTool.notifyEvent(Status.of(-4243), DataRange.PROC_LOCAL);
    assertTrue(inHandler.get(10, TimeUnit.SECONDS) instanceof IllegalStateException);
    assertThrows(IllegalArgumentException.class, () -> PMIxTool.query(List.of()));
    byte[] bytes = {1, 2};
    IofOutput o = new IofOutput(Proc.of("a", 0), EnumSet.of(IofChannel.STDOUT), bytes, List.of());
    bytes[0] = 9;
    assertArrayEquals(new byte[] {1, 2}, o.data(), "IofOutput copies its bytes");
  }
}
