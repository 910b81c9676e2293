package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The data server under load, bounded (issue #18): {@code bin/load-dataserver}'s driver ({@code
 * bin/lib/load_dataserver.py --quick}): one standalone pmix-dataserver (cap 2 MiB per uid), 4
 * rounds of 4 concurrent pmixrun jobs ({@code --dataserver}) of 4 libpmix 4.2.2 ranks publishing
 * 20 keys each and waiting (PMIX_WAIT) for the next job's, one rank of one job per round
 * SIGKILLed at a random moment. Every waiting lookup is answered with exact values or, for a
 * killed job's rank, times out; every reported publication is found, none twice, none left after
 * its unpublish; the data server's fds and threads return to the baseline; a publish above the
 * cap is refused with OUT_OF_RESOURCE, a flood past it evicts the flooder's own items and the
 * heap stays within twice the cap, and comes back within 1 MiB once cleared. The seed is
 * printed. A missing {@code jcmd} skips it, and fails it under CI=true.
 */
@ExtendWith(PmixTestExtension.class)
class LoadDataServerIT {
  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void publishersAndWaitingLookupsSurviveKilledClientsWithinTheCap()
      throws IOException, InterruptedException {
    Path client = CCompiler.compile(Path.of("src/main/c/ds_load.c")); // no toolchain: skip/fail
    Path out = DriverScript.outDir("load-dataserver-it");
    List<String> cmd = DriverScript.quickCommand("load_dataserver.py", out, client);
    DriverScript.Result r =
        DriverScript.run("load-dataserver", cmd, out, Duration.ofMinutes(4), Map.of());
    String text = r.text();
    assertTrue(text.contains("load-dataserver: seed "), text);
    assertTrue(text.contains("BIG OUT-OF-RESOURCE -29"), text);
    assertTrue(
        text.contains("load-dataserver: no key lost or duplicated, every waiting lookup answered"),
        text);
    assertEquals(0, r.exit(), text);
  }
}
