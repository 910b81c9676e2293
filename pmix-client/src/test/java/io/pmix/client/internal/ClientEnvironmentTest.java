package io.pmix.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.internal.connector.ServerAddress;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.BufferType;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Reading the environment a PMIx server gives its children (docs/transport.md §3.3, §4.1, §8, §9).
 */
class ClientEnvironmentTest {
  private static final String URI = "pmix-server.10685;tcp4://127.0.0.1:45723";

  private static Map<String, String> serverEnv() {
    Map<String, String> env = new HashMap<>();
    env.put("PMIX_NAMESPACE", "testns");
    env.put("PMIX_RANK", "3");
    env.put("PMIX_SERVER_URI41", URI);
    env.put("PMIX_SERVER_URI4", URI);
    env.put("PMIX_SERVER_URI3", URI);
    env.put("PMIX_SECURITY_MODE", "native");
    env.put("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_NON_DESC");
    env.put("PMIX_GDS_MODULE", "ds21,ds12,hash");
    env.put("PMIX_HOSTNAME", "vm");
    env.put("PMIX_VERSION", "4.2.2rc2");
    return env;
  }

  @Test
  void aServersChildConnectsWithV41AndNative() {
    ClientEnvironment e = ClientEnvironment.parse(serverEnv());
    assertEquals(
        new ServerAddress("pmix-server", 10685, "127.0.0.1", 45723, "v41"), e.server().orElseThrow());
    assertEquals("testns", e.nspace().orElseThrow());
    assertEquals(3, e.rank());
    assertEquals("native", e.psecModule());
    assertEquals(BufferType.NON_DESC, e.bufferType());
    assertEquals("vm", e.hostname());
  }

  @Test
  void theUriVariableNameSelectsTheCodec() {
    Map<String, String> env = serverEnv();
    env.remove("PMIX_SERVER_URI41");
    assertEquals("v4", ClientEnvironment.parse(env).server().orElseThrow().bfropsModule());
    env.remove("PMIX_SERVER_URI4");
    PmixException x = assertThrows(PmixException.class, () -> ClientEnvironment.parse(env));
    assertEquals(Status.ERR_NOT_SUPPORTED, x.status());
  }

  @Test
  void noUriMeansSingleton() {
    ClientEnvironment e = ClientEnvironment.parse(Map.of("PMIX_HOSTNAME", "h"));
    assertTrue(e.server().isEmpty());
    assertTrue(e.nspace().isEmpty());
  }

  @Test
  void fullyDescribedAndMissingRank() {
    Map<String, String> env = serverEnv();
    env.put("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_FULLY_DESC");
    assertEquals(BufferType.FULLY_DESC, ClientEnvironment.parse(env).bufferType());
    env.remove("PMIX_RANK");
    PmixException x = assertThrows(PmixException.class, () -> ClientEnvironment.parse(env));
    assertEquals(Status.ERR_DATA_VALUE_NOT_FOUND, x.status());
  }
}
