package io.pmix.testkit.slurm;

import io.pmix.client.PMIx;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.Role;
import io.pmix.common.testing.ProcessResources;
import io.pmix.common.testing.TeardownContract;
import java.util.List;

/**
 * A Java client that cycles init/finalize under a real PMIx server (a task of an {@code srun}
 * step, {@link SrunIT}), each cycle on the shared-memory store the server offers: init, the job
 * size from the store, a put, commit and collecting fence, its own key, finalize. After a few
 * warm-up cycles it takes the process's threads, descriptors and the store's mappings ({@code
 * pmix_dstor_} in {@code /proc/self/maps}) as the baseline; every hundred cycles and at the end
 * nothing may exceed it, and no library thread may be alive between cycles; at the end every
 * cycle's state and everything it owned (its store reader included) must be unreachable. Every
 * cycle must read through {@code args[1]} (ds21) and, while it runs, have the store mapped.
 *
 * <p>Prints {@code CYCLES OK n=<cycles> ms=<elapsed> ...} and exits 0, or {@code CYCLES FAIL
 * <why>} and exits 1.
 */
public final class CyclingClientMain {
  private static final int WARMUP = 5;
  private static final String SEGMENTS = "pmix_dstor_";

  private CyclingClientMain() {}

  public static void main(String[] args) {
    int cycles = Integer.parseInt(args[0]);
    String gds = args[1];
    try {
      for (int i = 0; i < WARMUP; i++) {
        var unused = cycle(i, gds, null);
      }
      ProcessResources.Snapshot baseline = ProcessResources.snapshot();
      List<String> maps = ProcessResources.mappings(SEGMENTS);
      ProcessResources.Reachability refs = new ProcessResources.Reachability();
      int live = 0;
      long t0 = System.nanoTime();
      for (int i = 1; i <= cycles; i++) {
        live = Math.max(live, cycle(i, gds, refs));
        if (i % 100 == 0) {
          ProcessResources.assertNoFdsBeyond(baseline.fds());
          ProcessResources.assertNoMappingsBeyond(maps, SEGMENTS);
          check(TeardownContract.libraryThreads(Role.CLIENT).isEmpty(), "threads after " + i);
        }
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      ProcessResources.assertNoThreadsBeyond(baseline.threads());
      ProcessResources.assertNoFdsBeyond(baseline.fds());
      ProcessResources.assertNoMappingsBeyond(maps, SEGMENTS);
      refs.assertAllCleared();
      System.out.println(
          "CYCLES OK n=" + cycles + " ms=" + ms + " gds=" + gds + " maps.live=" + live
              + " maps.between=" + maps.size() + " fds=" + baseline.fds().size()
              + " threads=" + baseline.threads().size());
      System.exit(0);
    } catch (RuntimeException | AssertionError e) {
      System.out.println("CYCLES FAIL " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  /** One cycle; returns how many store mappings it had while initialized. */
  private static int cycle(int i, String gds, ProcessResources.Reachability refs) {
    Proc me = PMIx.init();
    ClientState state = ClientHolder.require();
    if (refs != null) {
      refs.track("cycle " + i + " state", state);
      state.resources().forEach((k, v) -> refs.track("cycle " + i + " " + k, v));
      check(state.resources().containsKey("gdsModule"), "no store reader among the resources");
    }
    String chosen = state.gdsModule();
    check(chosen.equals(gds), "cycle " + i + " reads through " + chosen + ", not " + gds);
    int size = PMIx.get(Proc.wildcard(me.nspace()), "pmix.job.size").asInt();
    check(size >= 1, "job size " + size);
    PMIx.put(Scope.GLOBAL, "cycle.key", Value.of("cycle-" + i));
    PMIx.commit();
    PMIx.fence(Info.of("pmix.collect", true));
    check(PMIx.get(me, "cycle.key").asString().equals("cycle-" + i), "own key");
    int mapped = ProcessResources.mappings(SEGMENTS).size();
    check(mapped > 0, "cycle " + i + " has no store mapped");
    PMIx.finalize();
    check(ClientHolder.isEmpty(), "holder not empty after cycle " + i);
    return mapped;
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }
}
