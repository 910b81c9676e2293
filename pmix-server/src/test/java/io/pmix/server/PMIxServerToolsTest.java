package io.pmix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tool support through the public API: rendezvous files across the life cycle, new setters. */
class PMIxServerToolsTest {
  @TempDir Path tmp;

  private ServerOptions.Builder opts() {
    return ServerOptions.builder().hostname("vm").tmpdir(tmp.resolve("s")).systemTmpdir(tmp);
  }

  @Test
  void rendezvousFilesLiveExactlyAsLongAsTheServer() throws Exception {
    PMIxServer s = PMIxServer.init(new HostModule() {}, opts().toolSupport(true).build());
    List<Path> files = s.rendezvousFiles();
    try {
      assertEquals(2, files.size());
      for (Path f : files) {
        assertEquals(s.uri(), Files.readAllLines(f, StandardCharsets.US_ASCII).get(0));
      }
    } finally {
      s.close();
    }
    for (Path f : files) {
      assertFalse(Files.exists(f));
    }
    assertFalse(Files.exists(tmp.resolve("s")), "the session tmpdir the server created is gone");
  }

  @Test
  void withoutToolSupportNoFileIsWritten() throws Exception {
    // Hash only: the shared-memory stores are files too (DstoreServerIT checks their lifetime).
    try (PMIxServer s = PMIxServer.init(new HostModule() {}, opts().gds("hash").build())) {
      assertTrue(s.rendezvousFiles().isEmpty());
      assertFalse(Files.exists(tmp.resolve("s")));
    }
  }

  @Test
  void aSecondSystemServerFailsToStartAndLeavesNothing() throws Exception {
    try (PMIxServer first =
        PMIxServer.init(new HostModule() {}, opts().systemSupport(true).build())) {
      assertEquals(List.of(tmp.resolve("pmix.sys.vm")), first.rendezvousFiles());
      PMIxServer second = PMIxServer.create(new HostModule() {}, opts().systemSupport(true).build());
      PmixException e = assertThrows(PmixException.class, second::start);
      assertEquals(Status.ERR_INIT, e.status());
      second.close();
      assertTrue(Files.readString(tmp.resolve("pmix.sys.vm")).startsWith(first.uri()));
    }
    assertFalse(Files.exists(tmp.resolve("pmix.sys.vm")));
  }

  @Test
  void procInfoAndAttributeRegistration() throws Exception {
    try (PMIxServer s = PMIxServer.init(new HostModule() {}, opts().toolSupport(true).build())) {
      assertEquals(Status.OPERATION_SUCCEEDED, s.registerNspace("j", 1, List.of()));
      assertEquals(Status.OPERATION_SUCCEEDED, s.registerClient(Proc.of("j", 0), 0, 0));
      assertEquals(Status.OPERATION_SUCCEEDED, s.setProcInfo(Proc.of("j", 0), 1234, "/bin/a"));
      assertEquals(Status.ERR_NOT_FOUND, s.setProcInfo(Proc.of("j", 1), 1234, "/bin/a"));
      assertThrows(IllegalArgumentException.class, () -> s.setProcInfo(Proc.of("j", 0), 0, null));
      Value.RegAttr ok = new Value.RegAttr("A", "a.key", DataType.BOOL.code(), List.of("short"));
      assertEquals(Status.OPERATION_SUCCEEDED, s.registerAttributes("PMIx_Publish", List.of(ok)));
      Value.RegAttr tooLong =
          new Value.RegAttr("A", "a.key", DataType.BOOL.code(), List.of("x".repeat(51)));
      assertThrows(
          IllegalArgumentException.class,
          () -> s.registerAttributes("PMIx_Publish", List.of(tooLong)));
    }
  }
}
