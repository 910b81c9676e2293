package io.pmix.testkit;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import java.util.List;

/**
 * A rank that calls PMIx_Connect with its own job and a namespace {@code args[0]} that its
 * launcher does not run, bounded by a 20 s pmix.timeout, and prints {@code CONNECT <status>}.
 */
public final class ConnectForeignMain {
  private ConnectForeignMain() {}

  /** Runs it. */
  public static void main(String[] args) {
    Proc me = PMIx.init();
    String status = "SUCCESS";
    try {
      PMIx.connect(
          List.of(Proc.wildcard(me.nspace()), Proc.wildcard(args[0])),
          Info.of(Keys.TIMEOUT, Value.of(20)));
    } catch (PmixException e) {
      status = e.status().toString();
    }
    System.out.println("CONNECT " + status);
    PMIx.finalize();
  }
}
