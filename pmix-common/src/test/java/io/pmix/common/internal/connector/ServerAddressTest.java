package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.PmixException;
import org.junit.jupiter.api.Test;

/** Server URIs (docs/transport.md §3.2) and the security module a connector offers (§8.1). */
class ServerAddressTest {
  @Test
  void securityModeChoosesByPriorityNotOrder() {
    assertEquals("native", LocalProcess.chooseSecurity(null));
    assertEquals("native", LocalProcess.chooseSecurity("none,native"));
    assertEquals("none", LocalProcess.chooseSecurity("none"));
    assertThrows(PmixException.class, () -> LocalProcess.chooseSecurity("munge"));
  }

  @Test
  void uriShapes() {
    ServerAddress a = ServerAddress.parse("my.ns.5;tcp4://10.0.0.1:1234", "v41");
    assertEquals("my.ns", a.serverNspace());
    assertEquals(5, a.serverRank());
    ServerAddress b = ServerAddress.parse("s.0;tcp6://[::1]:45000", "v41");
    assertEquals("::1", b.host());
    assertEquals(45000, b.port());
    assertThrows(PmixException.class, () -> ServerAddress.parse("s.0;tcp://1.2.3.4:5", "v41"));
    assertThrows(PmixException.class, () -> ServerAddress.parse("s.0;tcp4://1.2.3.4", "v41"));
    assertThrows(PmixException.class, () -> ServerAddress.parse("s;tcp4://1.2.3.4:5", "v41"));
  }
}
