package io.pmix.tool.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.tool.internal.ToolSettings.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading PMIx_tool_init's directives and environment (docs/transport.md §4.2 and §6.3). */
class ToolSettingsTest {
  private static ToolSettings parse(Map<String, String> env, Info... directives) {
    return ToolSettings.parse(env, List.of(directives));
  }

  @Test
  void identityFlags() {
    Map<String, String> env = new HashMap<>();
    assertEquals(ConnectorKind.TOOL_NEEDS_ID, parse(env).kind());
    assertEquals(
        ConnectorKind.LAUNCHER_NEEDS_ID, parse(env, Info.of("pmix.tool.launcher", true)).kind());
    ToolSettings given =
        parse(env, Info.of("pmix.tool.nspace", "t"), Info.of("pmix.tool.rank", Value.uint32(2)));
    assertEquals(ConnectorKind.TOOL_GIVEN_ID, given.kind());
    assertEquals(Proc.of("t", 2), given.identity().orElseThrow());
    env.put("PMIX_NAMESPACE", "job");
    env.put("PMIX_RANK", "5");
    ToolSettings launched = parse(env);
    assertEquals(ConnectorKind.TOOL_CLIENT, launched.kind());
    assertEquals(Proc.of("job", 5), launched.identity().orElseThrow());
    assertEquals(
        ConnectorKind.LAUNCHER_CLIENT, parse(env, Info.of("pmix.tool.launcher", true)).kind());
    // Attributes win over the environment.
    assertEquals(
        ConnectorKind.LAUNCHER_GIVEN_ID,
        parse(env, Info.of("pmix.tool.launcher", true), Info.of("pmix.tool.nspace", "l")).kind());
    assertThrows(
        IllegalArgumentException.class, () -> parse(Map.of(), Info.of("pmix.tool.rank", Value.uint32(1))));
  }

  @Test
  void targetsInTheOrderOfTheCLibrary() {
    Map<String, String> env = new HashMap<>();
    assertEquals(List.of(new Target.FirstFound()), parse(env).targets());
    assertEquals(
        List.of(new Target.ByUri("s.0;tcp4://127.0.0.1:5")),
        parse(
                env,
                Info.of("pmix.srvr.pidinfo", Value.pid(9)),
                Info.of("pmix.srvr.uri", "s.0;tcp4://127.0.0.1:5"))
            .targets());
    assertEquals(
        List.of(new Target.ByFile(Path.of("/x/y"))),
        parse(env, Info.of("pmix.tcp.uri", "file:/x/y")).targets());
    assertEquals(
        List.of(new Target.SystemServer(), new Target.ByPid(9)),
        parse(env, Info.of("pmix.cnct.sys.first", true), Info.of("pmix.srvr.pidinfo", Value.pid(9)))
            .targets());
    assertEquals(
        List.of(new Target.SystemServer()),
        parse(env, Info.of("pmix.cnct.sys", true), Info.of("pmix.srvr.pidinfo", Value.pid(9)))
            .targets());
    assertEquals(
        List.of(new Target.ByNspace("srv")), parse(env, Info.of("pmix.srv.nspace", "srv")).targets());
    env.put("PMIX_SERVER_URI41", "s.0;tcp4://127.0.0.1:7");
    assertTrue(parse(env).targets().get(0) instanceof Target.LaunchingServer);
    PmixException bad =
        assertThrows(PmixException.class, () -> parse(Map.of(), Info.of("pmix.srvr.pidinfo", "x")));
    assertEquals(Status.ERR_BAD_PARAM, bad.status());
  }

  @Test
  void tmpdirsRetriesAndForwardedDirectives() {
    Map<String, String> env = new HashMap<>();
    env.put("TMPDIR", "/t1");
    assertEquals(Path.of("/t1"), parse(env).systemTmpdir());
    env.put("PMIX_SYSTEM_TMPDIR", "/t2");
    assertEquals(Path.of("/t2"), parse(env).systemTmpdir());
    assertEquals(Path.of("/t3"), parse(env, Info.of("pmix.sys.tmpdir", "/t3")).systemTmpdir());
    assertTrue(parse(env).sessionTmpdir().isEmpty());
    env.put("PMIX_SERVER_TMPDIR", "/s");
    assertEquals(Path.of("/s"), parse(env).sessionTmpdir().orElseThrow());
    assertEquals(Path.of("/tmp"), parse(Map.of()).systemTmpdir());

    ToolSettings s =
        parse(
            env,
            Info.of("pmix.tool.mretries", Value.uint32(2)),
            Info.of("pmix.tool.retry", Value.uint32(1)),
            Info.of("pmix.srvr.pidinfo", Value.pid(3)),
            Info.of("my.attr", "kept"));
    assertEquals(3, s.attempts());
    assertEquals(Duration.ofSeconds(1), s.retryDelay());
    assertTrue(s.retriesGiven());
    assertEquals(List.of(Info.of("my.attr", "kept")), s.connectInfo());
    assertFalse(parse(env).retriesGiven());
    assertTrue(parse(env, Info.of("pmix.tool.nocon", true)).doNotConnect());
    assertTrue(parse(env, Info.of("pmix.tool.conopt", true)).connectOptional());
    assertEquals("none", parse(Map.of("PMIX_SECURITY_MODE", "none")).psecModule());
  }
}
