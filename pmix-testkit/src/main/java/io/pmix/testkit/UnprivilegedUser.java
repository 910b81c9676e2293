package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs to run a job as an unprivileged user, as every user of a real cluster runs
 * one: {@code nobody} (uid and gid 65534), reached from root through {@code setpriv}, with a HOME
 * and a TMPDIR of its own and copies of the programs it runs in a directory any user may read
 * (this JVM's class path comes partly from root's Maven repository, which others may not read).
 * Everything lives in one directory under the given parent, removed by {@link #close}.
 */
public final class UnprivilegedUser implements AutoCloseable {
  /** nobody's uid and gid. */
  public static final int ID = 65534;

  private final Path area;
  private final Path home;
  private final Path tmp;
  private final Path lib;
  private List<String> classPath = List.of();

  private UnprivilegedUser(Path area) throws IOException {
    this.area = area;
    open(area);
    this.home = Files.createDirectories(area.resolve("home"));
    this.tmp = Files.createDirectories(home.resolve("tmp"));
    for (Path d : List.of(home, tmp)) {
      open(d);
      Files.setAttribute(d, "unix:uid", ID);
      Files.setAttribute(d, "unix:gid", ID);
    }
    this.lib = Files.createDirectories(area.resolve("lib"));
    open(lib);
  }

  /**
   * A fresh area under {@code parent} (which any user must be able to pass through). Switching
   * users needs root: otherwise the test fails under CI and is skipped elsewhere.
   */
  public static UnprivilegedUser under(Path parent) throws IOException {
    int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    if (uid != 0) {
      String why = "switching to another user needs root";
      if (PmixTestExtension.interopRequired()) {
        fail(why);
      }
      Assumptions.abort(why);
    }
    Files.createDirectories(parent);
    return new UnprivilegedUser(Files.createTempDirectory(parent, "user-"));
  }

  /** The user's home directory (its HOME). */
  public Path home() {
    return home;
  }

  /** The user's TMPDIR. */
  public Path tmp() {
    return tmp;
  }

  /** What runs a command as the user: {@code setpriv} to uid and gid 65534, no other groups. */
  public List<String> wrapper() {
    return List.of("setpriv", "--reuid=" + ID, "--regid=" + ID, "--clear-groups", "--");
  }

  /** HOME and TMPDIR of the user, for the environment of what {@link #wrapper} starts. */
  public Map<String, String> environment() {
    return Map.of("HOME", home.toString(), "TMPDIR", tmp.toString());
  }

  /** A copy of {@code file} in the area, readable (and, if it was, executable) by all. */
  public Path copy(Path file) throws IOException {
    Path to = area.resolve(file.getFileName());
    Files.copy(file, to);
    open(to);
    return to;
  }

  /** A file of the area holding {@code text}, readable by all. */
  public Path write(String name, String text) throws IOException {
    Path to = area.resolve(name);
    Files.writeString(to, text);
    open(to);
    return to;
  }

  /**
   * The command of a Java program as the user may run it: this JVM's java with the flags of
   * {@code JavaDemoClient.command} and no perf data, and a copy of this JVM's class path in the
   * area (made at the first call).
   */
  public List<String> java(String mainClass, String... args) throws IOException {
    if (classPath.isEmpty()) {
      List<String> cp = new ArrayList<>();
      int i = 0;
      for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
        Path from = Path.of(entry);
        if (Files.exists(from)) {
          Path to = lib.resolve((i++) + "-" + from.getFileName());
          copyTree(from, to);
          cp.add(to.toString());
        }
      }
      classPath = List.copyOf(cp);
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // No perf data: the JVM would leave /tmp/hsperfdata_nobody behind, whatever TMPDIR says.
    cmd.addAll(
        List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-cp"));
    cmd.add(String.join(File.pathSeparator, classPath));
    cmd.add(mainClass);
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** Removes the area and everything the user left in it. */
  @Override
  public void close() throws IOException {
    try (Stream<Path> s = Files.walk(area)) {
      for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(q);
      }
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path q : s.toList()) {
        Path target = to.resolve(from.relativize(q).toString());
        if (Files.isDirectory(q)) {
          Files.createDirectories(target);
        } else {
          Files.copy(q, target);
        }
        open(target);
      }
    }
  }

  /** Readable by all; directories and executables searchable or runnable by all too. */
  private static void open(Path p) throws IOException {
    Set<PosixFilePermission> perms = new HashSet<>(Files.getPosixFilePermissions(p));
    perms.add(PosixFilePermission.GROUP_READ);
    perms.add(PosixFilePermission.OTHERS_READ);
    if (Files.isDirectory(p) || perms.contains(PosixFilePermission.OWNER_EXECUTE)) {
      perms.add(PosixFilePermission.GROUP_EXECUTE);
      perms.add(PosixFilePermission.OTHERS_EXECUTE);
    }
    Files.setPosixFilePermissions(p, perms);
  }
}
