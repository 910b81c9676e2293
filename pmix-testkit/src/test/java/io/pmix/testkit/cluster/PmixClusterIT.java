package io.pmix.testkit.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.common.base.Splitter;
import io.pmix.common.Proc;
import io.pmix.common.testing.CPrograms;
import io.pmix.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Unmodified libpmix 4.2.2 clients ({@code pmix_client_check}) in jobs spread over the nodes of a
 * {@link PmixCluster}: 2 nodes with ranks in blocks, 3 nodes with ranks dealt round robin, 4 ranks
 * per node. In each cluster a first job exchanges its data with a collecting fence, a second one
 * fences without collection so that every remote get goes through direct modex; every rank gets
 * every rank's keys, including those of ranks on other nodes.
 */
class PmixClusterIT {
  private static final Duration WAIT = Timing.seconds(60);
  private static final Duration LATE_START = Duration.ofMillis(1500);

  @TempDir Path tmp;

  private Path clientCheck;

  @BeforeEach
  void compile() {
    clientCheck = CPrograms.compile("src/main/c/pmix_client_check.c");
  }

  static Stream<Arguments> layouts() {
    Function<String, ClusterJob> blocks = ns -> ClusterJob.blocks(ns, 2, 4);
    Function<String, ClusterJob> cyclic = ns -> ClusterJob.cyclic(ns, 3, 12);
    return Stream.of(Arguments.of(2, blocks), Arguments.of(3, cyclic));
  }

  @ParameterizedTest(name = "{0} nodes")
  @MethodSource("layouts")
  void collectingFenceThenDirectModex(int nodes, Function<String, ClusterJob> layout)
      throws Exception {
    try (PmixCluster cluster = PmixCluster.builder().nodes(nodes).directory(tmp).start()) {
      // Job 1: the fence collects every rank's REMOTE/GLOBAL data, so no remote get needs the
      // host afterwards.
      ClusterJob collected = layout.apply("collect" + nodes);
      cluster.register(collected);
      long getsBefore = getnbs(cluster);
      Map<Integer, List<String>> out =
          run(
              cluster,
              collected,
              "--init", "--get-job-keys", "--put", "--commit", "--fence-collect", "--get-peers",
              "--fence", "--finalize");
      for (int r = 0; r < collected.size(); r++) {
        assertSteps(
            collected, r, out.get(r), "init", "get-job-keys", "put", "commit", "fence-collect",
            "get-peers", "fence", "finalize");
        assertTrue(line(out.get(r), "fence-collect").contains("collect=1"), out.get(r).toString());
        // What each node's server derived from the maps for its own processes.
        ClusterNode node = cluster.nodeOf(collected, r);
        String keys = line(out.get(r), "get-job-keys");
        String peers =
            collected.ranksOn(node.index()).stream().map(String::valueOf)
                .collect(Collectors.joining(","));
        for (String want :
            List.of(
                "pmix.hname@self=STRING:" + node.hostname(),
                "pmix.nodeid@self=UINT32:" + node.index(),
                "pmix.num.nodes@wild=UINT32:" + nodes,
                "pmix.lpeers@wild=STRING:" + peers,
                "pmix.local.size@wild=UINT32:4")) {
          assertTrue(keys.contains(want + " "), "rank " + r + " lacks " + want + ": " + keys);
        }
      }
      for (ClusterNode node : cluster.nodes()) {
        ClusterHost host = node.host();
        assertEquals(
            List.of(), procsOf(host.dmodexRequested(), collected), "dmodex on " + node);
        // Both fences crossed the nodes through the host, each once per node.
        assertEquals(
            List.of(List.of(Proc.wildcard(collected.nspace())),
                List.of(Proc.wildcard(collected.nspace()))),
            host.fences().stream()
                .filter(f -> f.get(0).nspace().equals(collected.nspace()))
                .toList(),
            "fences on " + node);
      }
      // Each server stored the other nodes' data the fence brought in its ds21/ds12 stores: the
      // C clients (on ds21) read every peer locally (40 GETNBs with 2 nodes, 108 with 3, when
      // the fence's data was not stored). What remains is one GETNB per rank, from
      // --get-job-keys: the optional pmix.node.size (rank WILDCARD), observed asked of the server
      // by every rank, not a peer's key.
      long gets = getnbs(cluster) - getsBefore;
      assertTrue(gets <= collected.size(), "GETNB requests after the collecting fence: " + gets);
      cluster.deregister(collected);

      // Job 2: no data collected; a remote get makes the server ask its host, which fetches the
      // data from the node that hosts the rank. --strict-scope also checks that LOCAL keys of
      // remote ranks and REMOTE keys of local ones are not found.
      ClusterJob direct = layout.apply("direct" + nodes);
      cluster.register(direct);
      out =
          run(
              cluster,
              direct,
              "--init", "--put", "--commit", "--fence", "--get-peers", "--fence", "--finalize",
              "--strict-scope");
      for (int r = 0; r < direct.size(); r++) {
        assertSteps(
            direct, r, out.get(r), "init", "put", "commit", "fence", "get-peers", "fence",
            "finalize");
      }
      for (ClusterNode node : cluster.nodes()) {
        ClusterHost host = node.host();
        Set<Integer> local = new TreeSet<>(direct.ranksOn(node.index()));
        Set<Integer> remote = new TreeSet<>();
        for (int r = 0; r < direct.size(); r++) {
          if (!local.contains(r)) {
            remote.add(r);
          }
        }
        // This node's server asked for every remote rank, and only for those ...
        assertEquals(remote, ranks(procsOf(host.dmodexRequested(), direct)), "asked by " + node);
        // ... and this node's host served every local rank to the other nodes.
        assertEquals(local, ranks(procsOf(host.dmodexServed(), direct)), "served by " + node);
      }
      cluster.deregister(direct);
    }
  }

  /**
   * Node 1's ranks start late, so node 0's ranks (which do not fence before their gets) ask for
   * their data before they have connected or committed: the direct-modex requests wait at node 1's
   * server until each target has committed.
   */
  @Test
  void directModexWaitsForTheTargetToCommit() throws Exception {
    try (PmixCluster cluster = PmixCluster.builder().nodes(2).directory(tmp).start()) {
      ClusterJob job = ClusterJob.blocks("early", 2, 4);
      cluster.register(job);
      Map<Integer, List<String>> out =
          run(
              cluster,
              job,
              1,
              "--init", "--put", "--commit", "--get-peers", "--fence", "--finalize");
      for (int r = 0; r < job.size(); r++) {
        assertSteps(job, r, out.get(r), "init", "put", "commit", "get-peers", "fence", "finalize");
      }
      assertEquals(
          new TreeSet<>(job.ranksOn(1)),
          ranks(procsOf(cluster.node(1).host().dmodexServed(), job)));
      assertEquals(
          new TreeSet<>(job.ranksOn(0)),
          ranks(procsOf(cluster.node(0).host().dmodexServed(), job)));
      cluster.deregister(job);
    }
  }

  private static long getnbs(PmixCluster cluster) {
    long n = 0;
    for (ClusterNode node : cluster.nodes()) {
      n += node.server().requestCounts().getOrDefault("GETNB", 0L);
    }
    return n;
  }

  // ---------------------------------------------------------------------------------------------

  /** Every rank ran every step OK, and get-peers saw the right local and remote peers. */
  private static void assertSteps(ClusterJob job, int rank, List<String> out, String... steps) {
    List<String> got =
        out.stream()
            .filter(l -> l.startsWith("STEP "))
            .map(l -> Splitter.on(' ').limit(4).splitToList(l))
            .map(w -> w.get(1) + " " + w.get(2))
            .toList();
    List<String> want = Stream.of(steps).map(s -> s + " OK").toList();
    assertEquals(want, got, "rank " + rank + ":\n" + String.join("\n", out));
    int local = job.ranksOn(job.nodeOf(rank)).size();
    assertTrue(
        line(out, "init").contains("size=" + job.size() + " local=" + local),
        "rank " + rank + ": " + line(out, "init"));
    assertTrue(
        line(out, "get-peers")
            .contains(
                "peers=" + job.size() + " local=" + local + " remote=" + (job.size() - local)),
        "rank " + rank + ": " + line(out, "get-peers"));
  }

  private static String line(List<String> out, String step) {
    return out.stream().filter(l -> l.startsWith("STEP " + step + " ")).findFirst().orElse("");
  }

  private static List<Proc> procsOf(List<Proc> procs, ClusterJob job) {
    return procs.stream().filter(p -> p.nspace().equals(job.nspace())).toList();
  }

  private static Set<Integer> ranks(List<Proc> procs) {
    return procs.stream().map(Proc::rank).collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * Starts every rank of {@code job} with its node's environment, waits for all and returns each
   * rank's stdout lines; fails with everyone's output if a rank fails or does not finish.
   */
  private Map<Integer, List<String>> run(PmixCluster cluster, ClusterJob job, String... args)
      throws IOException, InterruptedException {
    return run(cluster, job, -1, args);
  }

  /**
   * As {@link #run(PmixCluster, ClusterJob, String...)}, but the ranks of node {@code lateNode}
   * are started {@link #LATE_START} after the others.
   */
  private Map<Integer, List<String>> run(
      PmixCluster cluster, ClusterJob job, int lateNode, String... args)
      throws IOException, InterruptedException {
    Process[] procs = new Process[job.size()];
    try {
      for (boolean late : new boolean[] {false, true}) {
        if (late && lateNode >= 0) {
          Thread.sleep(LATE_START.toMillis());
        }
        for (int r = 0; r < job.size(); r++) {
          if ((job.nodeOf(r) == lateNode) != late) {
            continue;
          }
          List<String> cmd = new ArrayList<>();
          cmd.add(clientCheck.toString());
          cmd.addAll(List.of(args));
          ProcessBuilder pb = new ProcessBuilder(cmd);
          pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_"));
          pb.environment().putAll(cluster.environment(job, r));
          pb.redirectOutput(output(cluster, job, r, "out").toFile());
          pb.redirectError(output(cluster, job, r, "err").toFile());
          procs[r] = pb.start();
        }
      }
      long deadline = System.nanoTime() + WAIT.toNanos();
      Set<Integer> failed = new TreeSet<>();
      for (int r = 0; r < procs.length; r++) {
        long left = Math.max(0, deadline - System.nanoTime());
        if (!procs[r].waitFor(left, TimeUnit.NANOSECONDS) || procs[r].exitValue() != 0) {
          failed.add(r);
        }
      }
      Map<Integer, List<String>> result = new TreeMap<>();
      StringBuilder all = new StringBuilder("ranks " + failed + " of " + job + " failed:\n");
      for (int r = 0; r < procs.length; r++) {
        result.put(r, Files.readAllLines(output(cluster, job, r, "out"), UTF_8));
        all.append("--- rank ").append(r).append(" (").append(procs[r]).append(")\n")
            .append(Files.readString(output(cluster, job, r, "out"), UTF_8))
            .append(Files.readString(output(cluster, job, r, "err"), UTF_8));
      }
      if (!failed.isEmpty()) {
        fail(all.toString());
      }
      return result;
    } finally {
      for (Process p : procs) {
        if (p != null) {
          p.destroyForcibly();
        }
      }
    }
  }

  /** Where rank {@code rank}'s stdout ("out") or stderr ("err") goes: its node's tmpdir. */
  private static Path output(PmixCluster cluster, ClusterJob job, int rank, String stream) {
    return cluster.nodeOf(job, rank).tmpdir().resolve(job.nspace() + "." + rank + "." + stream);
  }
}
