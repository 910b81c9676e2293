package io.pmix.server.internal;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.server.ServerOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tool rendezvous files (docs/transport.md §3.4): names, content line by line, modes, one
 * directory per server so that servers of one host (even of one process, even with the default
 * namespace) never overwrite each other, the exclusive system file, and removal of exactly what
 * was created.
 */
class RendezvousTest {
  private static final String URI_A = "pmix-server.4711;tcp4://127.0.0.1:40001";
  private static final String URI_B = "pmix-server.4711;tcp4://127.0.0.1:40002";
  private static final long PID = ProcessHandle.current().pid();

  @TempDir Path tmp;

  private ServerOptions.Builder opts() {
    return ServerOptions.builder().hostname("vm").tmpdir(tmp).systemTmpdir(tmp);
  }

  @Test
  void toolFilesByPidAndNamespaceWithTheContent422Writes() throws IOException {
    try (Rendezvous r =
        Rendezvous.publish(opts().toolSupport(true).build(), URI_A, "4.2.2", PID, 4660, 22136)) {
      List<Path> files = r.files();
      assertEquals(2, files.size());
      Path dir = files.get(0).getParent();
      assertEquals(tmp, dir.getParent());
      assertTrue(dir.getFileName().toString().startsWith("pmix-java-" + PID + "-"));
      assertEquals("pmix.vm.tool." + PID, files.get(0).getFileName().toString());
      assertEquals("pmix.vm.tool.pmix-server", files.get(1).getFileName().toString());
      for (Path f : files) {
        String content = Files.readString(f, US_ASCII);
        // Five lines, each ending in a newline, then an empty line.
        assertTrue(
            Pattern.matches(
                    Pattern.quote(URI_A + "\n4.2.2\n" + PID + "\n4660:22136\n")
                        + "[A-Z][a-z]{2} [A-Z][a-z]{2} [ 123][0-9] \\d\\d:\\d\\d:\\d\\d \\d{4}\n\n",
                    content),
            content);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
      }
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    }
    try (var s = Files.list(tmp)) {
      assertEquals(0, s.count(), "everything created was removed");
    }
    assertTrue(Files.isDirectory(tmp), "a directory the server did not create stays");
  }

  @Test
  void twoServersOfOneProcessWithTheDefaultNamespaceDoNotCollide() throws IOException {
    ServerOptions o = opts().toolSupport(true).build();
    Rendezvous a = Rendezvous.publish(o, URI_A, "4.2.2", PID, 0, 0);
    try (Rendezvous b = Rendezvous.publish(o, URI_B, "4.2.2", PID, 0, 0)) {
      assertEquals(a.files().get(1).getFileName(), b.files().get(1).getFileName());
      assertNotEquals(a.files().get(1), b.files().get(1));
      a.close();
      // Closing one leaves the other's files alone.
      for (Path f : b.files()) {
        assertTrue(Files.readString(f, US_ASCII).startsWith(URI_B));
      }
    }
  }

  @Test
  void sessionAndSystemFiles() throws IOException {
    try (Rendezvous r =
        Rendezvous.publish(
            opts().sessionSupport(true).systemSupport(true).build(), URI_A, "4.2.2", PID, 0, 0)) {
      List<Path> files = r.files();
      assertEquals(2, files.size());
      assertEquals("pmix.vm.tool", files.get(0).getFileName().toString());
      assertEquals(tmp.resolve("pmix.sys.vm"), files.get(1));
      // A second system server on this host is refused while the first lives (same pid here).
      PmixException e =
          assertThrows(
              PmixException.class,
              () -> Rendezvous.publish(opts().systemSupport(true).build(), URI_B, "4.2.2", PID, 0, 0));
      assertEquals(Status.ERR_INIT, e.status());
      assertTrue(Files.readString(files.get(1), US_ASCII).startsWith(URI_A));
    }
    assertFalse(Files.exists(tmp.resolve("pmix.sys.vm")));
  }

  @Test
  void aStaleSystemFileIsReplaced() throws IOException {
    Process p = new ProcessBuilder("true").start();
    long dead = p.pid();
    try {
      p.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Files.writeString(tmp.resolve("pmix.sys.vm"), "old;tcp4://127.0.0.1:1\n4.2.2\n" + dead + "\n0:0\nx\n\n");
    try (Rendezvous r =
        Rendezvous.publish(opts().systemSupport(true).build(), URI_A, "4.2.2", PID, 0, 0)) {
      assertTrue(Files.readString(r.files().get(0), US_ASCII).startsWith(URI_A));
    }
  }

  @Test
  void missingTmpdirsAreCreatedAndRemovedButForeignFilesAreKept() throws IOException {
    Path deep = tmp.resolve("a/b");
    ServerOptions o =
        ServerOptions.builder().hostname("vm").tmpdir(deep).systemTmpdir(deep).toolSupport(true).build();
    Rendezvous r = Rendezvous.publish(o, URI_A, "4.2.2", PID, 0, 0);
    Path own = r.files().get(0).getParent();
    assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(deep)));
    r.close();
    assertFalse(Files.exists(tmp.resolve("a")), "created directories are removed when empty");

    Rendezvous r2 = Rendezvous.publish(o, URI_A, "4.2.2", PID, 0, 0);
    Path own2 = r2.files().get(0).getParent();
    Path foreign = deep.resolve("someone-else.txt");
    Files.writeString(foreign, "keep me");
    r2.close();
    assertTrue(Files.exists(foreign));
    assertFalse(Files.exists(own2));
    assertFalse(Files.exists(own));
  }

  @Test
  void aFileTakenOverByAnotherServerIsLeftAlone() throws IOException {
    Rendezvous r =
        Rendezvous.publish(opts().toolSupport(true).build(), URI_A, "4.2.2", PID, 0, 0);
    Path f = r.files().get(0);
    Files.writeString(f, URI_B + "\n4.2.2\n1\n0:0\nx\n\n");
    r.close();
    assertTrue(Files.exists(f));
  }
}
