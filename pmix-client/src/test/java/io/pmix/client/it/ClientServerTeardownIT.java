package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.client.PMIx;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientState;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import io.pmix.common.internal.connector.LibraryHolder;
import io.pmix.common.testing.CProcess;
import io.pmix.common.testing.TeardownContract;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared teardown contract for the client connected to the C host server: this JVM takes the
 * place of the job's only rank (whose launched child only sleeps), cycling and nesting inits.
 */
class ClientServerTeardownIT extends TeardownContract<ClientState> {
  private static final Pattern READY =
      Pattern.compile("HOST READY nspace=(\\S+) .* tmpdir=(\\S+) uri=(\\S+) usec=.*");

  private static CProcess server;
  private static Map<String, String> env;

  @BeforeAll
  static void startServer() {
    server =
        CProcess.builder(HostServerRun.hostServer())
            .args("-n", "1", "--timeout", "600", "--", "sleep", "600")
            .name("pmix_host_server")
            .start();
    String line = server.readLine(Duration.ofSeconds(60));
    Matcher m = READY.matcher(line);
    assertTrue(m.matches(), line);
    env = new HashMap<>();
    env.put("PMIX_NAMESPACE", m.group(1));
    env.put("PMIX_RANK", "0");
    env.put("PMIX_SERVER_URI41", m.group(3));
    env.put("PMIX_SECURITY_MODE", "native");
    env.put("PMIX_GDS_MODULE", "hash");
    env.put("PMIX_SERVER_TMPDIR", m.group(2));
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected LibraryHolder<ClientState> holder() {
    return ClientHolder.holder();
  }

  @Override
  protected void init() {
    var unused = ClientHolder.init(env, List.of());
  }

  @Override
  protected void finalizeOnce() {
    PMIx.finalize();
  }

  @Override
  protected void exercise() {
    Proc me = PMIx.myProc();
    assertFalse(PMIx.isSingleton());
    assertEquals(1, PMIx.get(Proc.wildcard(me.nspace()), "pmix.job.size").asInt());
    PMIx.put(Scope.GLOBAL, "contract.key", Value.of(7));
    PMIx.commit();
    PMIx.fence(Info.of("pmix.collect", true));
    assertEquals(Value.of(7), PMIx.get(me, "contract.key"));
    var unused = PMIx.registerEventHandler(List.of(), e -> {});
  }

  @Override
  protected void assertRoleTornDown() {
    assertFalse(PMIx.initialized());
  }
}
