package io.pmix.testkit.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.internal.LinkerPaths;
import io.pmix.testkit.internal.MpiLinkage.Answer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MpiLinkage} answers what {@code ldd} shows (the rule pmixrun applied to ldd's output
 * before), for the machine's own programs and for libraries built here that reach a libmpi only
 * through another library, through {@code DT_RPATH}, {@code DT_RUNPATH} with {@code $ORIGIN}, and
 * {@code LD_LIBRARY_PATH}.
 */
@Timeout(180)
class MpiLinkageTest {
  @Test
  void theMachinesProgramsGetLddsAnswer() throws Exception {
    List<Path> programs = new ArrayList<>();
    try (Stream<Path> s = Files.list(Path.of("/usr/bin"))) {
      for (Path p : s.sorted().toList()) {
        if (Files.isRegularFile(p) && Files.isExecutable(p) && isElf(p)) {
          programs.add(p);
        }
      }
    }
    // Every 8th program keeps the test short; Open MPI's own tools load libmpi.
    List<Path> sample = new ArrayList<>();
    for (int i = 0; i < programs.size(); i += 8) {
      sample.add(programs.get(i));
    }
    for (String mpi : List.of("/usr/bin/ompi_info", "/usr/bin/oshmem_info")) {
      if (Files.isRegularFile(Path.of(mpi))) {
        sample.add(Path.of(mpi));
      }
    }
    int known = 0;
    int mpi = 0;
    for (Path p : sample) {
      Answer a = MpiLinkage.of(p, null);
      if (a == Answer.UNKNOWN) {
        continue;
      }
      known++;
      boolean ldd = lddSaysMpi(p, null);
      assertEquals(ldd, a == Answer.MPI, p::toString);
      mpi += ldd ? 1 : 0;
    }
    assertTrue(known >= sample.size() * 9 / 10, known + " of " + sample.size() + " decided");
    assertEquals(MpiLinkage.Answer.NOT_MPI, MpiLinkage.of(Path.of("/bin/true"), null));
    assertTrue(mpi > 0 || !Files.exists(Path.of("/usr/bin/ompi_info")), "no MPI program seen");
  }

  @Test
  void aLibmpiReachedThroughOtherLibrariesAndSearchPathsIsFound(@TempDir Path dir)
      throws Exception {
    Path fake = Files.createDirectories(dir.resolve("fake"));
    Path mid = Files.createDirectories(dir.resolve("mid"));
    Path src = dir.resolve("x.c");
    Files.writeString(src, "int x(void) { return 1; }\n");
    Path main = dir.resolve("main.c");
    Files.writeString(main, "int mid(void);\nint main(void) { return mid() - 1; }\n");
    Path midSrc = dir.resolve("mid.c");
    Files.writeString(midSrc, "int x(void);\nint mid(void) { return x(); }\n");
    // A library whose soname says libmpi, as ldd's rule reads it.
    gcc("-shared", "-fPIC", "-Wl,-soname,libmpi.so.99", "-o", fake.resolve("libmpi.so.99"), src);
    // libmid needs it, found through its RUNPATH relative to itself.
    gcc("-shared", "-fPIC", "-Wl,-soname,libmid.so", "-Wl,--no-as-needed",
        "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../fake", "-o", mid.resolve("libmid.so"), midSrc,
        fake.resolve("libmpi.so.99"));
    // The program needs libmid only: through an RPATH, through LD_LIBRARY_PATH, or not found.
    Path withRpath = dir.resolve("with-rpath");
    gcc("-Wl,--no-as-needed", "-Wl,--disable-new-dtags", "-Wl,-rpath," + mid, "-o", withRpath,
        main, mid.resolve("libmid.so"));
    Path bare = dir.resolve("bare");
    gcc("-Wl,--no-as-needed", "-o", bare, main, mid.resolve("libmid.so"));
    Path plainSrc = dir.resolve("plain.c");
    Files.writeString(plainSrc, "int main(void) { return 0; }\n");
    Path plain = dir.resolve("plain");
    gcc("-o", plain, plainSrc);

    assertEquals(Answer.MPI, MpiLinkage.of(withRpath, null));
    assertEquals(lddSaysMpi(withRpath, null), true);
    assertEquals(Answer.MPI, MpiLinkage.of(bare, mid.toString()));
    assertEquals(lddSaysMpi(bare, mid.toString()), true);
    assertEquals(Answer.UNKNOWN, MpiLinkage.of(bare, null), "libmid.so is not found: ask ldd");
    assertEquals(Answer.NOT_MPI, MpiLinkage.of(plain, null));
    assertEquals(lddSaysMpi(plain, null), false);
    // Not an ELF file: a script, as ldd says, is no dynamic executable.
    Path script = dir.resolve("script.sh");
    Files.writeString(script, "#!/bin/sh\n");
    assertEquals(Answer.NOT_MPI, MpiLinkage.of(script, null));
  }

  @Test
  void theLinkersDirectoriesIncludeTheMultiarchOnes() {
    String triplet = LinkerPaths.triplet();
    List<String> dirs = LinkerPaths.platformPath(Path.of("/"), triplet);
    if (triplet != null && Files.isDirectory(Path.of("/usr/lib", triplet))) {
      assertTrue(dirs.contains("/usr/lib/" + triplet), dirs::toString);
    }
  }

  /** pmixrun's rule on ldd's output, run with {@code LD_LIBRARY_PATH} set to {@code libPath}. */
  private static boolean lddSaysMpi(Path exe, String libPath) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("ldd", exe.toString()).redirectErrorStream(true);
    if (libPath == null) {
      pb.environment().remove("LD_LIBRARY_PATH");
    } else {
      pb.environment().put("LD_LIBRARY_PATH", libPath);
    }
    Process p = pb.start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return out.lines().anyMatch(l -> l.trim().toLowerCase(Locale.ROOT).startsWith("libmpi.so")
        || l.contains("/libmpi.so"));
  }

  private static void gcc(Object... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("gcc");
    for (Object a : args) {
      cmd.add(a.toString());
    }
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), () -> cmd + "\n" + out);
  }

  private static boolean isElf(Path p) {
    try (InputStream in = Files.newInputStream(p)) {
      byte[] m = in.readNBytes(4);
      return m.length == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
    } catch (IOException e) {
      return false;
    }
  }
}
