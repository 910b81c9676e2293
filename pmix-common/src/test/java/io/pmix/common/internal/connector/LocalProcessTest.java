package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.security.auth.module.UnixSystem;
import io.pmix.common.internal.PmixNativeLibrary;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The facts about this process a connector announces, read from Linux's /proc: they are what the
 * JDK's own (slower to start) APIs say.
 */
class LocalProcessTest {
  /**
   * Once pmix-java's native library is loaded the ids come from geteuid/getegid, before from
   * /proc/self/status: both give the same (the test JVM is no setuid program, so also the JDK's).
   */
  @Test
  void theNativeIdsAreThoseOfProc() {
    assertTrue(PmixNativeLibrary.load(), PmixNativeLibrary::failure);
    assertTrue(PmixNativeLibrary.loaded());
    int[] fromProc = LocalProcess.effectiveIdsFromProc();
    assertArrayEquals(fromProc, LocalProcess.effectiveIds());
    UnixSystem u = new UnixSystem();
    assertArrayEquals(new int[] {(int) u.getUid(), (int) u.getGid()}, fromProc);
  }

  @Test
  void thePidAndExecutableAreWhatProcessHandleSays() {
    assertEquals(ProcessHandle.current().pid(), LocalProcess.pid());
    assertEquals(ProcessHandle.current().info().command(), LocalProcess.executable());
  }

  @Test
  void theEffectiveIdsAreTheJdksOutsideSetuidPrograms() {
    UnixSystem u = new UnixSystem();
    assertArrayEquals(
        new int[] {(int) u.getUid(), (int) u.getGid()}, LocalProcess.effectiveIds());
  }

  @Test
  void theHostNameIsGethostnamesWithoutItsDomain() throws Exception {
    // hostname(1) prints what gethostname(2) returns, as C's PMIx reads it.
    Process p = new ProcessBuilder("hostname").redirectErrorStream(true).start();
    String h = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertEquals(0, p.waitFor(), h);
    int dot = h.indexOf('.');
    String expected = dot > 0 && !Character.isDigit(h.charAt(0)) ? h.substring(0, dot) : h;
    assertEquals(expected, LocalProcess.localHostname());
  }
}
