package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.pmix.common.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * OpenPMIx's own C tools (../shared/peers) against {@code bin/pmixrun --tool-support}, each also
 * run against its reference, the same version's {@code simptest} or its own server:
 *
 * <ul>
 *   <li>{@code pps --pid} and {@code simptool} of 5.0.11, 6.1.0 and master (the latter two
 *       announce bfrops {@code v61}) attach to a running job found by their search of TMPDIR:
 *       {@code pps} lists the job; {@code simptool} queries the keys "foobar" and "spastic" (and
 *       {@code pmix.srvr.uri}), which pmixrun answers NOT_FOUND as it does any query with nothing
 *       it can answer, and finalizes. The reference, PRRTE 3.0.14's prterun, answers 5.0.11's
 *       NOT_SUPPORTED (an unrecognised key ends its query), refuses the v61 tools (-25) and then
 *       dies of a segfault.
 *   <li>{@code simptool} launched as a rank (a tool with its launcher's client identity), as
 *       OpenPMIx runs it under {@code simptest -e simptool}: the same cycle as under simptest,
 *       whose stub query handler answers every key with its index (5.0.11's simptool then
 *       complains of 3 results for its 2 queries).
 *   <li>master's {@code simptoolcycle}: its client phase ({@code --tool-child client}: 50 cycles of
 *       {@code PMIx_tool_init}/{@code PMIx_tool_finalize} with a rank's identity) as a rank, with
 *       at most one finalized tool peer left in the server, what the program itself checks of its
 *       own server (which passes both phases). Its pure phase connects to a scheduler
 *       ({@code PMIX_CONNECT_TO_SCHEDULER}), which pmixrun is not.
 * </ul>
 */
@ExtendWith(PmixTestExtension.class)
class PeerToolsIT {
  private static final Duration LIMIT = Duration.ofSeconds(90);
  private static final Path WORK =
      Path.of(System.getProperty("basedir", ".")).resolve("target/peer-tools-it");

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"v5.0.11", "v6.1.0", "master"})
  @Timeout(150)
  void toolsAttach(String version, @TempDir Path tmp) throws Exception {
    Path pps = Peers.program(version, "pps");
    Path simptool = Peers.program(version, "simptool");
    Path libs = Peers.libraryPath(version);
    Path stop = tmp.resolve("stop");
    try (PmixRunProcess p =
        PmixRunProcess.start(List.of(), Map.of("TMPDIR", tmp.toString()), "--tool-support",
            "-n", "1", "--timeout", "80", "--", "sh", "-c",
            "while [ ! -e " + stop + " ]; do sleep 0.1; done")) {
      awaitRendezvous(tmp, p.process.pid());
      String ppsOut = tool(tmp, libs, "pps", pps.toString(), "--pid",
          Long.toString(p.process.pid()));
      assertTrue(ppsOut.contains("jrun-") && ppsOut.contains("@1"), ppsOut);
      String simpOut = tool(tmp, libs, "simptool", simptool.toString());
      assertTrue(simpOut.contains("PMIx_Query_info failed: -46"), simpOut);
      assertTrue(simpOut.contains("PMIx_Finalize successfully completed"), simpOut);
      Files.createFile(stop);
      p.await(LIMIT);
      assertEquals(0, p.exit(), p::describe);
    }

    // The reference: the same simptool attached to PRRTE 3.0.14's prterun (on 5.0.11).
    Path ref = tmp.resolve("prterun");
    Files.createDirectories(ref);
    Path refStop = ref.resolve("stop");
    ProcessBuilder pb =
        new ProcessBuilder(Peers.mendedProgram("prrte-3.0.14", "prterun").toString(),
            "--allow-run-as-root", "-n", "1", "sh", "-c",
            // Ends with its directory too: a prterun that segfaulted leaves it an orphan, and the
            // stop file may be gone (the test's tmp removed) before its next look.
            "while [ ! -e " + refStop + " ] && [ -d " + ref + " ]; do sleep 0.1; done")
            .redirectErrorStream(true)
            .redirectOutput(ref.resolve("prterun.out").toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("PRTE_"));
    pb.environment().put("TMPDIR", ref.toString());
    pb.environment().put("LD_LIBRARY_PATH", Peers.ompiLibraryPath());
    pb.environment().put("PRTE_PREFIX", Peers.dir().resolve("prrte-3.0.14").toString());
    Process prterun = pb.start();
    List<ProcessHandle> job = List.of();
    try {
      awaitRendezvous(ref, prterun.pid());
      job = prterun.descendants().toList(); // while they are still its descendants
      ToolRun r = runTool(ref, libs, "simptool", simptool.toString());
      if (version.equals("v5.0.11")) {
        // An unrecognised key ends PRRTE's query: NOT_SUPPORTED for the whole of it.
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("PMIx_Query_info failed: -47"), r.out());
        assertTrue(r.out().contains("PMIx_Finalize successfully completed"), r.out());
      } else {
        // PRRTE 3.0.14's libpmix 5.0.11 knows no bfrops v61: the tool is refused.
        assertTrue(r.out().contains("PMIx_tool_init failed: -25"), r.out());
      }
      Files.createFile(refStop);
      assertTrue(prterun.waitFor(Timing.scaled(LIMIT).toMillis(), TimeUnit.MILLISECONDS),
          "prterun did not end");
      // A reference defect (libpmix-facts.md §4): refusing a v61 tool, prterun segfaults.
      assertEquals(version.equals("v5.0.11") ? 0 : 139, prterun.exitValue(),
          Files.readString(ref.resolve("prterun.out"), UTF_8));
    } finally {
      prterun.descendants().forEach(ProcessHandle::destroyForcibly);
      job.forEach(ProcessHandle::destroyForcibly);
      prterun.destroyForcibly();
    }
  }

  /** Waits for the tool rendezvous file of the server of process {@code pid} under {@code tmp}. */
  private static void awaitRendezvous(Path tmp, long pid) {
    String suffix = ".tool." + pid;
    Await.condition("the rendezvous file of " + pid + " under " + tmp,
        () -> {
          try (Stream<Path> s = Files.walk(tmp)) {
            return s.anyMatch(f -> f.getFileName().toString().endsWith(suffix));
          } catch (IOException | UncheckedIOException e) {
            return false; // a directory went while we looked
          }
        },
        Timing.scaled(Duration.ofSeconds(60)));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"v5.0.11", "v6.1.0", "master"})
  @Timeout(150)
  void simptoolAsARankAsUnderSimptest(String version) throws Exception {
    Path simptool = Peers.program(version, "simptool");
    Path libs = Peers.libraryPath(version);
    Peers.Run ref =
        Peers.run(List.of(Peers.program(version, "simptest").toString(), "-n", "1", "-e",
                simptool.toString()),
            Map.of("LD_LIBRARY_PATH", libs.toString()), WORK, LIMIT);
    assertEquals(0, ref.exit(), ref.out());
    assertTrue(ref.out().contains("Tool ns foobar rank 0: Running"), ref.out());
    assertTrue(ref.out().contains(version.equals("v5.0.11")
        ? "PMIx_Query_info returned incorrect results: 3" : "Client received result"), ref.out());
    assertTrue(ref.out().contains("rank 0:PMIx_Finalize successfully completed"), ref.out());

    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "--tool-support", "-n", "1", "--timeout", "80", "-x",
            "LD_LIBRARY_PATH=" + libs, "--", simptool.toString());
    assertEquals(0, p.exit(), p::describe);
    String out = p.stdout() + p.stderr();
    assertTrue(out.matches("(?s).*Tool ns jrun-\\S+@1 rank 0: Running.*"), p::describe);
    assertTrue(out.contains("PMIx_Query_info failed: -46"), p::describe);
    assertTrue(out.contains("rank 0:PMIx_Finalize successfully completed"), p::describe);
  }

  @Test
  @Timeout(150)
  void simptoolcycleClientPhase() throws Exception {
    Path cycle = Peers.program("master", "simptoolcycle");
    Path libs = Peers.libraryPath("master");
    Peers.Run ref =
        Peers.run(List.of(cycle.toString(), "50"), Map.of("LD_LIBRARY_PATH", libs.toString()),
            WORK, LIMIT);
    assertEquals(0, ref.exit(), ref.out());
    assertTrue(ref.out().contains("client phase: 50 cycles, live server peers = 0"), ref.out());
    assertTrue(ref.out().contains("server-side tool init/finalize cycling: PASS"), ref.out());

    PmixRunProcess p =
        PmixRunProcess.run(LIMIT, "--tool-support", "--report-state", "state.json", "-n", "1",
            "--timeout", "80", "-x", "LD_LIBRARY_PATH=" + libs, "--", cycle.toString(),
            "--tool-child", "client", "50");
    assertEquals(0, p.exit(), p::describe);
    assertTrue(p.stdout().contains("client child: cycle 40"), p::describe);
    // Every cycle's tool has the rank's identity: one peer, not one per cycle.
    JsonNode peers = p.report("state.json").path("beforeDeregister").path("peers");
    assertTrue(peers.size() <= 1, () -> peers + "\n" + p.describe());
  }

  /** Runs a peer tool as {@link #runTool} does; its output, after exit status 0. */
  private static String tool(Path tmp, Path libs, String name, String... cmd) throws Exception {
    ToolRun r = runTool(tmp, libs, name, cmd);
    assertEquals(0, r.exit(), () -> name + ": " + r.out());
    return r.out();
  }

  /** A tool's exit status and output (stdout and stderr). */
  private record ToolRun(int exit, String out) {}

  /** Runs a peer tool with the peers' libraries and only TMPDIR to find its server. */
  private static ToolRun runTool(Path tmp, Path libs, String name, String... cmd)
      throws Exception {
    Path out = tmp.resolve(name + ".out");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
    pb.environment().remove("TEMP");
    pb.environment().remove("TMP");
    pb.environment().put("TMPDIR", tmp.toString());
    pb.environment().put("LD_LIBRARY_PATH", libs.toString());
    Process t = pb.start();
    if (!t.waitFor(Timing.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)) {
      t.destroyForcibly();
      throw new AssertionError(name + " hung: " + Files.readString(out, UTF_8));
    }
    return new ToolRun(t.exitValue(), Files.readString(out, UTF_8));
  }
}
