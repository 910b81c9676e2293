package io.pmix.common.internal.connector;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading tool rendezvous files (docs/transport.md §3.4). */
class RendezvousFileTest {
  @TempDir Path dir;

  @Test
  void theFiveLinesOfA422Server() throws Exception {
    Path p = dir.resolve("pmix.vm.tool.9990");
    Files.writeString(
        p,
        "pmix-server.9990;tcp4://127.0.0.1:47993\n4.2.2rc2\n9990\n0:0\nTue Dec  1 19:02:31 2026\n\n",
        UTF_8);
    RendezvousFile f = RendezvousFile.read(p);
    assertEquals("pmix-server.9990;tcp4://127.0.0.1:47993", f.uri());
    assertEquals("4.2.2rc2", f.version().orElseThrow());
    assertEquals(9990, f.pid().getAsLong());
    ServerAddress a = f.address("v41");
    assertEquals("pmix-server", a.serverNspace());
    assertEquals(47993, a.port());
  }

  @Test
  void onlyTheUriIsRequiredAndNoFinalNewlineIsNeeded() throws Exception {
    Path p = dir.resolve("attach");
    Files.writeString(p, "s.0;tcp4://127.0.0.1:4711", UTF_8);
    RendezvousFile f = RendezvousFile.read(p);
    assertEquals(4711, f.address("v41").port());
    assertTrue(f.version().isEmpty());
    Files.writeString(p, "s.0;tcp4://127.0.0.1:4711\nv4.2.2\n", UTF_8);
    assertEquals("4.2.2", RendezvousFile.read(p).version().orElseThrow());
  }

  @Test
  void aFileLargerThan64KiBIsRefusedAndOneOfExactlyThatSizeRead() throws Exception {
    String uri = "s.0;tcp4://127.0.0.1:4711\n";
    Path fits = dir.resolve("fits");
    Files.writeString(fits, uri + "x".repeat(64 * 1024 - uri.length()), UTF_8);
    assertEquals(4711, RendezvousFile.read(fits).address("v41").port());
    Path large = dir.resolve("large");
    Files.writeString(large, uri + "x".repeat(64 * 1024 - uri.length() + 1), UTF_8);
    PmixException e = assertThrows(PmixException.class, () -> RendezvousFile.read(large));
    assertEquals(Status.ERR_BAD_PARAM, e.status());
    assertTrue(e.getMessage().contains("too large"), e.getMessage());
  }

  @Test
  void missingEmptyAndMalformedFiles() throws Exception {
    PmixException missing =
        assertThrows(PmixException.class, () -> RendezvousFile.read(dir.resolve("nope")));
    assertEquals(Status.ERR_NOT_FOUND, missing.status());
    Path empty = Files.createFile(dir.resolve("empty"));
    assertEquals(
        Status.ERR_BAD_PARAM,
        assertThrows(PmixException.class, () -> RendezvousFile.read(empty)).status());
    Path bad = dir.resolve("bad");
    Files.writeString(bad, "tcp4://localhost\n", UTF_8);
    assertEquals(
        Status.ERR_BAD_PARAM,
        assertThrows(PmixException.class, () -> RendezvousFile.read(bad)).status());
  }

  @Test
  void names() {
    assertEquals("pmix.vm.tool.42", RendezvousFile.pidFileName("vm", 42));
    assertEquals("pmix.vm.tool.srv", RendezvousFile.nspaceFileName("vm", "srv"));
    assertEquals("pmix.vm.tool", RendezvousFile.toolPrefix("vm"));
    assertEquals("pmix.sys.vm", RendezvousFile.systemFileName("vm"));
  }
}
