package io.pmix.testkit;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import java.util.List;

/**
 * The Java twin of {@code src/test/c/log_client.c} for PmixRunLogIT, with pmix-client: logs to
 * stderr, to stdout, and to a required syslog, and prints each answer as {@code LOG <rank>
 * <channel> <status>}.
 */
public final class LogMain {
  private LogMain() {}

  public static void main(String[] args) {
    Proc me = PMIx.init();
    log(me, Info.of(Keys.LOG_STDERR, Value.of("java stderr from rank " + me.rank())), "stderr");
    log(me, Info.of(Keys.LOG_STDOUT, Value.of("java stdout from rank " + me.rank())), "stdout");
    log(me, Info.required(Keys.LOG_SYSLOG.name(), Value.of("java syslog")), "!syslog");
    PMIx.fence();
    PMIx.finalize();
  }

  private static void log(Proc me, Info entry, String name) {
    int status = 0;
    try {
      PMIx.log(List.of(entry));
    } catch (PmixException e) {
      status = e.status().code();
    }
    System.out.println("LOG " + me.rank() + " " + name + " " + status);
    System.out.flush();
  }
}
