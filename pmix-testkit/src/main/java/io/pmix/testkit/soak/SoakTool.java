package io.pmix.testkit.soak;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.tool.PMIxTool;
import java.util.List;
import java.util.Optional;

/**
 * bin/soak's tool phase: {@code --cycles N} times in this JVM, {@code PMIxTool.init} attaching to
 * the server with pid {@code --pid P} (its rendezvous file, as {@code pps --pid} finds it), check
 * the server's name from the handshake and that a namespace query over this cycle's connection
 * lists {@code --nspace NS} (the running job), then {@code PMIxTool.finalize}.
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
   * @param args {@code --cycles N --pid P --nspace NS [--progress K]}
   */
  public static void main(String[] args) {
    long cycles = -1;
    long progress = 0;
    int pid = -1;
    String nspace = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--cycles" -> cycles = Long.parseLong(args[i + 1]);
        case "--progress" -> progress = Long.parseLong(args[i + 1]);
        case "--pid" -> pid = Integer.parseInt(args[i + 1]);
        case "--nspace" -> nspace = args[i + 1];
        default -> usage();
      }
    }
    if (cycles < 1 || pid < 1 || nspace == null || args.length % 2 != 0) {
      usage();
    }
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

  private static void fail(long cycle, String why) {
    System.out.println("SOAK tool cycle=" + cycle + " FAIL " + why);
    System.exit(1);
  }

  private static void usage() {
    System.err.println("usage: SoakTool --cycles N --pid P --nspace NS [--progress K]");
    System.exit(2);
  }
}
