package io.pmix.dataserver;

import static io.pmix.dataserver.Futures.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** bin/pmix-dataserver's command line. */
class DataServerMainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private DataServer.Launch launch(Map<String, String> env, String... args) {
    return DataServer.launch(
        args,
        env,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void optionsSetTheParametersAndTheAddressIsPrinted() {
    DataServer.Launch l =
        launch(
            Map.of("PMIX_MCA_prte_data_server_timeout", "60"),
            "--port", "0", "--max-size", "4096");
    DataServer s = l.server();
    assertNotNull(s, err.toString(StandardCharsets.UTF_8));
    try {
      String printed = out.toString(StandardCharsets.UTF_8);
      assertTrue(printed.startsWith("pmix-dataserver listening on 127.0.0.1:" + s.port()), printed);
      DataStoreOptions o = get(s.inspect(DataStore::options));
      assertEquals(Duration.ofSeconds(60), o.idleTimeout(), "from the environment");
      assertEquals(4096, o.maxBytesPerUid(), "from the option");
    } finally {
      s.close();
    }
  }

  @Test
  void optionsWinOverTheEnvironment() {
    DataServer.Launch l =
        launch(Map.of("PMIX_MCA_prte_data_server_timeout", "60"), "--timeout", "0");
    DataServer s = l.server();
    assertNotNull(s);
    try {
      assertEquals(Duration.ZERO, get(s.inspect(DataStore::options)).idleTimeout());
    } finally {
      s.close();
    }
  }

  @Test
  void usageErrorsExitWithTwo() {
    for (String[] bad :
        new String[][] {
          {"--port"}, {"--port", "x"}, {"--timeout", "-1"}, {"--max-size", "big"}, {"--frobnicate", "1"}
        }) {
      DataServer.Launch l = launch(Map.of(), bad);
      assertNull(l.server());
      assertEquals(2, l.exitCode(), String.join(" ", bad));
    }
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: pmix-dataserver"));
    DataServer.Launch env = launch(Map.of("PMIX_MCA_prte_data_server_max_size", "lots"));
    assertEquals(2, env.exitCode());
  }

  @Test
  void helpExitsWithZero() {
    DataServer.Launch l = launch(Map.of(), "--help");
    assertNull(l.server());
    assertEquals(0, l.exitCode());
    assertTrue(out.toString(StandardCharsets.UTF_8).contains("--max-size"));
  }
}
