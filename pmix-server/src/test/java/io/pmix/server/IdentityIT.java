package io.pmix.server;

import static io.pmix.server.Launched.describe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.testing.Await;
import io.pmix.common.testing.CPrograms;
import io.pmix.common.testing.TestTiming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Another user's process claiming a registered rank of a running job (issue #18, identity): it
 * runs as uid 65534 (started by root with {@code setpriv}) with the very environment the server
 * gave that rank, once honestly and once with a forged credential (an {@code LD_PRELOAD} shim
 * makes {@code geteuid}/{@code getegid} answer 0, so libpmix's native credential and identity
 * block both claim root). Both are refused because the kernel's owner of the socket is not the
 * registered uid; nothing of the job changes; the rank's real owner then connects. The same
 * through the tool path (a C tool started with the rank's environment, connect flag 5).
 *
 * <p>libpmix 4.2.2's own server (its TCP listener trusts the claimed credential) admits the
 * forged impostor as rank 0 of root's job; after it refuses the honest impostor, the real owner's
 * PMIx_Init hangs (docs/libpmix-facts.md, "Identity").
 *
 * <p>Each impostor and the control run are told {@code PMIX_MCA_gds=hash}: the shared-memory
 * stores belong to the job's user, and reading them is not what this test is about; the control
 * run (uid 65534 on a rank registered for uid 65534, same program, same settings) shows the
 * refusals come from the identity check and from nothing else.
 */
class IdentityIT {
  private static final Duration WAIT = TestTiming.seconds(60);
  private static final int NOBODY = 65534;
  private static final String JOB = "rootjob";
  private static final String OTHER = "nobodyjob";

  private static Path client;
  private static Path tool;
  private static Path forge;

  @TempDir Path tmp;

  private final RecordingHost host = new RecordingHost();
  private final List<String> refusals = new CopyOnWriteArrayList<>();
  private final Handler refusalLog =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          String m = r.getMessage();
          if (m != null && m.startsWith("refusing") && r.getParameters() != null) {
            refusals.add(String.valueOf(r.getParameters()[r.getParameters().length - 1]));
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
  private final List<Logger> watched =
      List.of(
          Logger.getLogger("io.pmix.server.internal.Admission"),
          Logger.getLogger("io.pmix.server.internal.ToolSupport"));
  private PMIxServer server;

  /** A host that records whom the server told it about. */
  private static final class RecordingHost implements HostModule {
    final List<Proc> connected = new CopyOnWriteArrayList<>();

    @Override
    public CompletionStage<Void> clientConnected(Proc proc, @Nullable Object hostObject) {
      connected.add(proc);
      return CompletableFuture.completedFuture(null);
    }
  }

  @BeforeAll
  static void compile() throws IOException {
    Launched.requireRoot();
    client = CPrograms.compile("src/test/c/server_it_client.c");
    tool = CPrograms.compile("src/test/c/tool_query.c");
    forge = CPrograms.compile("src/test/c/forge_root_ids.c", "-shared", "-fPIC");
    // The dynamic loader maps a preloaded library: another user must be able to read it (it
    // silently ignores one it cannot).
    Files.setPosixFilePermissions(forge, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @BeforeEach
  void start() {
    for (Logger l : watched) {
      l.addHandler(refusalLog);
    }
    server =
        PMIxServer.init(
            host,
            ServerOptions.builder()
                .hostname("itnode")
                .serverNspace("idsrv")
                .tmpdir(tmp)
                .systemTmpdir(tmp)
                .toolSupport(true)
                .build());
    register(JOB, Launched.myUid(), Launched.myGid());
    register(OTHER, NOBODY, NOBODY);
  }

  @AfterEach
  void stop() {
    for (Logger l : watched) {
      l.removeHandler(refusalLog);
    }
    if (server != null) {
      server.close();
      assertTrue(server.isTerminated());
    }
  }

  private void register(String nspace, int uid, int gid) {
    assertEquals(
        Status.OPERATION_SUCCEEDED,
        server.registerNspace(
            nspace,
            1,
            List.of(
                Info.of(Keys.JOB_SIZE, Value.uint32(1)),
                Info.of(Keys.UNIV_SIZE, Value.uint32(1)),
                Info.of(Keys.JOBID, Value.of(nspace)))));
    assertEquals(Status.OPERATION_SUCCEEDED, server.registerClient(Proc.of(nspace, 0), uid, gid));
  }

  /** The environment the server gives rank 0 of {@code nspace}, on the hash store. */
  private Map<String, String> envOf(String nspace) {
    Map<String, String> env = new HashMap<>(server.setupFork(Proc.of(nspace, 0)));
    env.put("PMIX_MCA_gds", "hash");
    return env;
  }

  private record Result(int exit, String output) {}

  /** Waits for {@code p}; its exit status and output, its files removed. */
  private static Result run(Launched p) throws Exception {
    try {
      int exit = p.await(WAIT);
      return new Result(exit, describe(p));
    } finally {
      p.cleanup();
    }
  }

  /** Waits until {@code n} refusals were logged; each must name the kernel's owner as 65534. */
  private void awaitRefusals(int n, String why) {
    Await.condition(n + " refusals", () -> refusals.size() >= n, Duration.ofSeconds(30));
    assertEquals(n, refusals.size(), refusals::toString);
    assertTrue(refusals.get(n - 1).contains(why), refusals::toString);
  }

  private void assertJobUntouched() {
    ServerSnapshot s = server.snapshot();
    ServerSnapshot.NamespaceView ns = s.namespace(JOB).orElseThrow();
    assertEquals(1, ns.nlocalprocs(), s.toJson());
    assertEquals(0, ns.nfinalized(), s.toJson());
    assertEquals(0, ns.ranks().get(0).procCount(), s.toJson());
    assertTrue(s.peers().stream().noneMatch(p -> p.nspace().equals(JOB)), s.toJson());
    assertTrue(host.connected.stream().noneMatch(p -> p.nspace().equals(JOB)), host.connected::toString);
  }

  @Test
  void anotherUsersClientClaimingARankIsRefusedEvenWithAForgedCredential() throws Exception {
    Map<String, String> env = envOf(JOB);
    Result honest = run(Launched.startAs(NOBODY, NOBODY, null, client, env, "init"));
    assertEquals(10, honest.exit(), honest.output()); // step 10: PMIx_Init failed
    awaitRefusals(1, "credential uid/gid 65534/65534 differ from the registration 0/0");

    Result forged = run(Launched.startAs(NOBODY, NOBODY, forge, client, env, "init"));
    assertEquals(10, forged.exit(), forged.output());
    // The forged credential matched the registration: only the kernel's view refused it.
    awaitRefusals(2, "the client's socket belongs to uid 65534, registered uid is 0");
    assertJobUntouched();

    // Control: the same user, program and settings on a rank registered for that user.
    Result control = run(Launched.startAs(NOBODY, NOBODY, null, client, envOf(OTHER), "init"));
    assertEquals(0, control.exit(), control.output());

    // The real owner still gets its rank (after a refusal, libpmix 4.2.2's server hangs it).
    Result owner = run(Launched.start(client, server.setupFork(Proc.of(JOB, 0)), "init"));
    assertEquals(0, owner.exit(), owner.output());
    assertEquals(2, refusals.size(), refusals::toString);
    assertEquals(List.of(Proc.of(OTHER, 0), Proc.of(JOB, 0)), host.connected);
    Await.condition(
        "the owner's finalize counted",
        () -> server.snapshot().namespace(JOB).orElseThrow().nfinalized() == 1,
        Duration.ofSeconds(30));
  }

  @Test
  void anotherUsersToolStartedWithARanksEnvironmentIsRefused() throws Exception {
    Map<String, String> env = envOf(JOB);
    Result honest = run(Launched.startAs(NOBODY, NOBODY, null, tool, env, "ns"));
    assertEquals(1, honest.exit(), honest.output()); // 1: PMIx_tool_init failed
    awaitRefusals(1, "uid/gid 65534/65534 differ from those of " + JOB + ":0 (0/0)");

    Result forged = run(Launched.startAs(NOBODY, NOBODY, forge, tool, env, "ns"));
    assertEquals(1, forged.exit(), forged.output());
    awaitRefusals(2, "the tool's socket belongs to uid 65534, it claims uid 0");
    assertJobUntouched();

    Result control = run(Launched.startAs(NOBODY, NOBODY, null, tool, envOf(OTHER), "ns"));
    assertEquals(0, control.exit(), control.output());
    assertTrue(control.output().contains("me=" + OTHER + ":0\n"), control.output());

    Result owner = run(Launched.start(tool, server.setupFork(Proc.of(JOB, 0)), "ns"));
    assertEquals(0, owner.exit(), owner.output());
    assertTrue(owner.output().contains("me=" + JOB + ":0\n"), owner.output());
    assertEquals(2, refusals.size(), refusals::toString);
  }
}
