package io.pmix.testkit.soak;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeoutException;

/**
 * One rank of bin/soak's Java phase: {@code --cycles N} times in this JVM, {@code PMIx.init}, read
 * the job size, put this cycle's number under {@code soak.<rank>} (GLOBAL), commit, fence
 * collecting data, get the next rank's key and check it holds this cycle's number (so data of an
 * earlier cycle is detected), {@code PMIx.finalize}. Every init after the first passes a barrier
 * outside PMIx ({@code --barrier-dir}, {@code --barrier-id}; see {@link CycleBarrier}).
 *
 * <p>Prints {@code SOAK java rank=R cycles=N OK} at the end, or {@code SOAK java rank=R cycle=I
 * FAIL <reason>} and exits 1 at the first failure; {@code --progress K} also prints {@code SOAK
 * java rank=R done=I} every K cycles. Exit status 2 for a bad command line.
 */
public final class SoakJavaClient {
  private static final int TIMEOUT_S = 30;

  private SoakJavaClient() {}

  /**
   * Runs the cycles (see the class description).
   *
   * @param args {@code --cycles N --barrier-dir DIR --barrier-id ID [--progress K]}
   */
  public static void main(String[] args) {
    long cycles = -1;
    long progress = 0;
    String dir = null;
    String id = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--cycles" -> cycles = Long.parseLong(args[i + 1]);
        case "--progress" -> progress = Long.parseLong(args[i + 1]);
        case "--barrier-dir" -> dir = args[i + 1];
        case "--barrier-id" -> id = args[i + 1];
        default -> usage();
      }
    }
    if (cycles < 1 || dir == null || id == null || args.length % 2 != 0) {
      usage();
    }
    String rank = System.getenv().getOrDefault("PMIX_RANK", "?");
    CycleBarrier barrier = null;
    long i = 0;
    try {
      for (i = 0; i < cycles; i++) {
        if (barrier != null) {
          barrier.await(TIMEOUT_S * 1000L);
        }
        Proc me = PMIx.init();
        int size = PMIx.get(Proc.wildcard(me.nspace()), Keys.JOB_SIZE.name()).asInt();
        if (barrier == null) {
          barrier =
              new CycleBarrier(
                  Path.of(dir, "soakjava-" + me.nspace() + "-" + id + ".barrier"), size);
        }
        PMIx.put(Scope.GLOBAL, "soak." + me.rank(), Value.of(i));
        PMIx.commit();
        PMIx.fence(Info.of(Keys.COLLECT_DATA.name(), true), timeout());
        int next = (me.rank() + 1) % size;
        long got = PMIx.get(Proc.of(me.nspace(), next), "soak." + next, timeout()).asLong();
        if (got != i) {
          fail(rank, i, "rank " + next + "'s soak." + next + " is " + got + ", want " + i);
        }
        PMIx.finalize();
        if (progress > 0 && (i + 1) % progress == 0) {
          System.out.println("SOAK java rank=" + rank + " done=" + (i + 1));
        }
      }
    } catch (PmixException e) {
      fail(rank, i, e.status().toString() + " " + e.getMessage());
    } catch (IOException | TimeoutException e) {
      fail(rank, i, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      fail(rank, i, e.toString());
    }
    System.out.println("SOAK java rank=" + rank + " cycles=" + cycles + " OK");
    System.exit(0);
  }

  private static Info timeout() {
    return Info.of(Keys.TIMEOUT, Value.of(TIMEOUT_S));
  }

  private static void fail(String rank, long cycle, String why) {
    System.out.println("SOAK java rank=" + rank + " cycle=" + cycle + " FAIL " + why);
    System.exit(1);
  }

  private static void usage() {
    System.err.println(
        "usage: SoakJavaClient --cycles N --barrier-dir DIR --barrier-id ID [--progress K]");
    System.exit(2);
  }
}
