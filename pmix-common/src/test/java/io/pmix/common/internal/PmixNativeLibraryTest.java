package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The library this build made: it loads, and (x86-64) it asks no newer glibc than RHEL 8's, so a
 * jar built on a new distribution still loads on the older ones HPC sites run (pmixjava.c pins
 * the pthread functions' pre-2.34 symbol versions; {@code objdump}, from binutils, which gcc
 * needs anyway, reads what the file requires).
 */
@Timeout(60)
class PmixNativeLibraryTest {
  private static final Pattern GLIBC = Pattern.compile("GLIBC_(\\d+)\\.(\\d+)(?:\\.\\d+)?");

  private static Path built() {
    Path classes = NativeCache.codeSourceOf(PmixNativeLibrary.class);
    assertNotNull(classes);
    assertTrue(Files.isDirectory(classes), "tests run from the class directory: " + classes);
    return classes.resolve(PmixNativeLibrary.entry());
  }

  private static List<String> objdump(String flag, Path lib) throws Exception {
    Process p = new ProcessBuilder("objdump", flag, lib.toString()).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "objdump hung");
    assertEquals(0, p.exitValue(), out);
    return out.lines().toList();
  }

  @Test
  void theBuildsLibraryLoads() {
    assertTrue(Files.isRegularFile(built()), built() + " was not built");
    assertTrue(PmixNativeLibrary.load(), String.valueOf(PmixNativeLibrary.failure()));
    assertNull(PmixNativeLibrary.failure());
  }

  @Test
  void onX8664ItAsksNoGlibcNewerThanRhel8s() throws Exception {
    assumeTrue(System.getProperty("os.arch").equals("amd64"), "the pins are x86-64's");
    Path lib = built();
    List<String> versions = new ArrayList<>();
    for (String line : objdump("-T", lib)) {
      Matcher m = GLIBC.matcher(line);
      if (m.find()) {
        versions.add(m.group());
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        assertTrue(major == 2 && minor <= 28, "needs " + m.group() + ": " + line.strip());
      }
    }
    assertTrue(versions.contains("GLIBC_2.2.5"), "no glibc symbol found: " + versions);
    // Where an older glibc keeps the pthread functions; the pins need it loaded.
    assertTrue(
        objdump("-p", lib).stream().anyMatch(l -> l.contains("NEEDED") && l.contains("libpthread.so.0")),
        "libpthread.so.0 is not among the library's needed ones");
  }
}
