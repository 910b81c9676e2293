package io.pmix.testkit;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;

/**
 * A PMIx client in Java (pmix-client) for the fixture's tests: init, job size, put, commit, fence
 * with data collection, a get of every peer's value, finalize; prints {@code ok} at the end and
 * exits 1 on any mismatch.
 */
public final class JavaClientMain {
  private JavaClientMain() {}

  public static void main(String[] args) {
    Proc me = PMIx.init();
    long size = PMIx.get(Proc.wildcard(me.nspace()), Keys.JOB_SIZE.name()).asLong();
    System.out.println("rank " + me.rank() + " of " + size + " in " + me.nspace());
    PMIx.put(Scope.GLOBAL, "java.key", Value.of("java-" + me.rank()));
    PMIx.commit();
    PMIx.fence(Info.of(Keys.COLLECT_DATA.name(), true));
    for (int r = 0; r < size; r++) {
      String v = PMIx.get(Proc.of(me.nspace(), r), "java.key").asString();
      if (!v.equals("java-" + r)) {
        System.out.println("rank " + r + " has " + v);
        System.exit(1);
      }
    }
    PMIx.finalize();
    System.out.println("ok");
    System.exit(0);
  }
}
