package io.pmix.testkit.soak;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.tool.PMIxTool;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * bin/soak's tool phase: {@code --cycles N} times in this JVM, {@code PMIxTool.init} attaching to
 * the server with pid {@code --pid P} (its rendezvous file, as {@code pps --pid} finds it), check
 * the server's name from the handshake and that a namespace query over this cycle's connection
 * lists {@code --nspace NS} (the running job), then {@code PMIxTool.finalize}.
 *
 * <p>With {@code --job-size K -- COMMAND ARGS...} each cycle also spawns a job of K processes of
 * the command through the server ({@code PMIxTool.spawn}) and, still attached, waits until the
 * server no longer lists its namespace (the launcher deregisters a job when its processes have
 * ended; the server sends no job-end event, so the tool asks every 10 ms, at most 60 s): a
 * namespace registered and deregistered per cycle.
 *
 * <p>Prints {@code SOAK tool cycles=N OK} at the end, or {@code SOAK tool cycle=I FAIL <reason>}
 * and exits 1 at the first failure; {@code --progress K} also prints {@code SOAK tool done=I}
 * every K cycles. Exit status 2 for a bad command line.
 */
public final class SoakTool {
  private SoakTool() {}

  /**
   * Runs the cycles (see the class description).
   *
   * @param args {@code --cycles N --pid P --nspace NS [--progress K] [--job-size K -- COMMAND
   *     ARGS...]}
   */
  public static void main(String[] args) {
    long cycles = -1;
    long progress = 0;
    int pid = -1;
    int jobSize = 0;
    String nspace = null;
    List<String> job = new ArrayList<>();
    int i0 = 0;
    for (; i0 < args.length && !args[i0].equals("--"); i0 += 2) {
      if (i0 + 1 >= args.length) {
        usage();
      }
      switch (args[i0]) {
        case "--cycles" -> cycles = Long.parseLong(args[i0 + 1]);
        case "--progress" -> progress = Long.parseLong(args[i0 + 1]);
        case "--pid" -> pid = Integer.parseInt(args[i0 + 1]);
        case "--nspace" -> nspace = args[i0 + 1];
        case "--job-size" -> jobSize = Integer.parseInt(args[i0 + 1]);
        default -> usage();
      }
    }
    for (int j = i0 + 1; j < args.length; j++) {
      job.add(args[j]);
    }
    if (cycles < 1 || pid < 1 || nspace == null || jobSize < 0 || (jobSize > 0) == job.isEmpty()) {
      usage();
    }
    Value.App app =
        job.isEmpty()
            ? null
            : new Value.App(
                job.get(0), job, List.of(), System.getProperty("user.dir"), jobSize, List.of());
    long i = 0;
    try {
      for (i = 0; i < cycles; i++) {
        Proc unusedMe = PMIxTool.init(Info.of(Keys.SERVER_PIDINFO, Value.pid(pid)));
        Optional<Proc> server = PMIxTool.server();
        if (server.isEmpty()) {
          fail(i, "attached, but no server name");
        }
        List<String> names = PMIxTool.queryNamespaces();
        if (!names.contains(nspace)) {
          fail(i, "the server lists " + names + ", not " + nspace);
        }
        if (app != null) {
          awaitGone(i, PMIxTool.spawn(List.of(app)));
        }
        PMIxTool.finalize();
        if (progress > 0 && (i + 1) % progress == 0) {
          System.out.println("SOAK tool done=" + (i + 1));
        }
      }
    } catch (PmixException e) {
      fail(i, e.status().toString() + " " + e.getMessage());
    }
    System.out.println("SOAK tool cycles=" + cycles + " OK");
    System.exit(0);
  }

  private static void awaitGone(long cycle, String job) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (PMIxTool.queryNamespaces().contains(job)) {
      if (System.nanoTime() > deadline) {
        fail(cycle, "spawned job " + job + " still registered after 60 s");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail(cycle, "interrupted");
      }
    }
  }

  private static void fail(long cycle, String why) {
    System.out.println("SOAK tool cycle=" + cycle + " FAIL " + why);
    System.exit(1);
  }

  private static void usage() {
    System.err.println(
        "usage: SoakTool --cycles N --pid P --nspace NS [--progress K]"
            + " [--job-size K -- COMMAND ARGS...]");
    System.exit(2);
  }
}
