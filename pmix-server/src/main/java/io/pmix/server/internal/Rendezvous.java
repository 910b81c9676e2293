package io.pmix.server.internal;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.util.Objects.requireNonNull;

import com.google.common.base.CharMatcher;
import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.LazyLogger;
import io.pmix.server.ServerOptions;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The tool rendezvous files of one server (docs/transport.md §3.4): how tools, launchers and
 * singletons on this host find it. Written at start when the server supports tools, removed at
 * shutdown; only what this object created is ever removed.
 *
 * <p>Layout. The per-pid, per-namespace and session files keep the exact names OpenPMIx uses
 * ({@code pmix.<host>.tool.<pid>}, {@code pmix.<host>.tool.<nspace>}, {@code pmix.<host>.tool})
 * but live in a directory of this server's own, {@code <session tmpdir>/pmix-java-<pid>-<random>}
 * (mode 0700). A C tool searches the whole tree below its system tmpdir for a name prefix, so it
 * finds them there; and two servers of one host never write the same path, even when they share a
 * process (same pid) or the default server namespace, where OpenPMIx 4.2.2 servers overwrite each
 * other's file. A tool that then finds several servers for one pid or namespace refuses to pick
 * one ("too many connections"), which is the honest answer. The system file {@code
 * pmix.sys.<host>} must sit directly in the system tmpdir, so it is created exclusively: a file of
 * a live server is left alone and this server fails to start, a stale one (its pid is gone) is
 * replaced.
 *
 * <p>Content: five lines each ending in {@code \n} — URI, server version, pid, {@code euid:egid},
 * {@code ctime()} text — then an empty line, as 4.2.2 writes them; a 4.2.2 reader drops the last
 * character of every line, so every line must end in a newline. Files are written whole under a
 * temporary name and then renamed or linked into place, so a reader never sees half a file; mode
 * 0600. Missing tmpdirs are created (mode 0755, like OpenPMIx) and removed again at close if
 * they are then empty; a directory this server did not create is never removed.
 *
 * <p>Blocking file I/O: use it off the progress thread. Not thread-safe; {@link #close} is
 * idempotent.
 */
public final class Rendezvous implements AutoCloseable {
  private static final System.Logger LOG = LazyLogger.of(Rendezvous.class);

  private static final Splitter WORDS = Splitter.on(CharMatcher.whitespace()).omitEmptyStrings();

  /** Made when a rendezvous file is first written: java.time's formatting costs a cold start. */
  private static final class Ctime {
    static final DateTimeFormatter FORMAT =
        DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US);
  }
  private static final Set<PosixFilePermission> FILE_MODE =
      PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> CREATED_DIR_MODE =
      PosixFilePermissions.fromString("rwxr-xr-x");

  private final String firstLine;
  /** Files written, each with the content that makes it ours. */
  private final List<Path> files = new ArrayList<>();
  /** Directories created, outermost first. */
  private final List<Path> createdDirs = new ArrayList<>();
  private boolean closed;

  private Rendezvous(String uri) {
    this.firstLine = uri;
  }

  /**
   * Writes the files {@code options} asks for.
   *
   * @param uri the server's URI (line 1)
   * @param version the server's version (line 2)
   * @param pid this process's id (line 3 and the per-pid file name)
   * @param euid the effective uid of this process
   * @param egid the effective gid of this process
   * @return the written files; nothing is written when the options ask for no tool support
   * @throws PmixException with {@code ERR_INIT} when a file cannot be written, or when a live
   *     server holds the system file; whatever was written before is removed again
   */
  public static Rendezvous publish(
      ServerOptions options, String uri, String version, long pid, int euid, int egid) {
    requireNonNull(options, "options");
    Rendezvous r = new Rendezvous(requireNonNull(uri, "uri"));
    String content =
        uri
            + "\n"
            + requireNonNull(version, "version")
            + "\n"
            + pid
            + "\n"
            + Integer.toUnsignedString(euid)
            + ":"
            + Integer.toUnsignedString(egid)
            + "\n"
            + Ctime.FORMAT.format(ZonedDateTime.now(ZoneId.systemDefault()))
            + "\n\n";
    String host = options.hostname();
    try {
      Set<String> names = new LinkedHashSet<>();
      if (options.toolSupport()) {
        names.add("pmix." + host + ".tool." + pid);
        names.add("pmix." + host + ".tool." + options.serverNspace());
      }
      if (options.sessionSupport()) {
        names.add("pmix." + host + ".tool");
      }
      if (!names.isEmpty()) {
        Path session = r.ensureDirectory(options.tmpdir());
        Path own = Files.createTempDirectory(session, "pmix-java-" + pid + "-");
        r.createdDirs.add(own);
        for (String name : names) {
          r.writeOwn(own.resolve(name), content);
        }
      }
      if (options.systemSupport()) {
        Path system = r.ensureDirectory(options.systemTmpdir());
        r.writeExclusive(system.resolve("pmix.sys." + host), content);
      }
    } catch (IOException | RuntimeException e) {
      r.close();
      if (e instanceof PmixException pe) {
        throw pe;
      }
      throw new PmixException(
          Status.ERR_INIT, "cannot write the tool rendezvous files: " + e.getMessage(), e);
    }
    return r;
  }

  /** The files written, in order. */
  public List<Path> files() {
    return ImmutableList.copyOf(files);
  }

  /** The directory holding the per-pid, per-namespace and session files, if any was made. */
  public List<Path> createdDirectories() {
    return ImmutableList.copyOf(createdDirs);
  }

  /** Creates {@code dir} and its missing parents, remembering which ones it created. */
  private Path ensureDirectory(Path dir) throws IOException {
    Path abs = dir.toAbsolutePath().normalize();
    List<Path> missing = new ArrayList<>();
    for (Path p = abs; p != null && !Files.isDirectory(p); p = p.getParent()) {
      missing.add(0, p);
    }
    for (Path p : missing) {
      try {
        Files.createDirectory(p);
        createdDirs.add(p);
        trySetMode(p, CREATED_DIR_MODE);
      } catch (FileAlreadyExistsException e) {
        if (!Files.isDirectory(p)) {
          throw e;
        }
      }
    }
    return abs;
  }

  /** Writes a file in this server's own directory: whole, then renamed into place. */
  private void writeOwn(Path target, String content) throws IOException {
    Path tmp = temp(target, content);
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    files.add(target);
  }

  /** Writes a shared-directory file that must not replace a live server's. */
  private void writeExclusive(Path target, String content) throws IOException {
    Path tmp = temp(target, content);
    try {
      for (int attempt = 0; ; attempt++) {
        try {
          Files.createLink(target, tmp);
          files.add(target);
          return;
        } catch (FileAlreadyExistsException e) {
          if (attempt > 0 || !removeIfStale(target)) {
            throw new PmixException(
                Status.ERR_INIT,
                target + " belongs to another live server" + holder(target), e);
          }
        } catch (UnsupportedOperationException e) {
          // No hard links here: copying refuses an existing target too, just not atomically.
          Files.copy(tmp, target);
          files.add(target);
          return;
        }
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static Path temp(Path target, String content) throws IOException {
    Path tmp = Files.createTempFile(target.getParent(), ".pmix-rndz-", ".tmp");
    try {
      trySetMode(tmp, FILE_MODE);
      Files.writeString(tmp, content, US_ASCII);
      return tmp;
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tmp);
      throw e;
    }
  }

  /** Removes a rendezvous file whose recorded pid (line 3) is no longer running. */
  private static boolean removeIfStale(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, US_ASCII);
      if (lines.size() < 3) {
        return false;
      }
      long pid = Long.parseLong(lines.get(2).trim());
      boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
      if (alive) {
        return false;
      }
      LOG.log(Level.INFO, "replacing stale rendezvous file {0} of dead pid {1}", file, pid);
      Files.delete(file);
      return true;
    } catch (NoSuchFileException e) {
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private static String holder(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, US_ASCII);
      return lines.size() >= 3 ? " (pid " + lines.get(2).trim() + ", " + lines.get(0) + ")" : "";
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  private static void trySetMode(Path p, Set<PosixFilePermission> mode) {
    try {
      Files.setPosixFilePermissions(p, EnumSet.copyOf(mode));
    } catch (IOException | UnsupportedOperationException e) {
      // Not POSIX: the platform default applies.
    }
  }

  /**
   * Removes the files this object wrote (each only if it still names this server on its first
   * line) and then the directories it created, innermost first, each only if empty.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Path f : files) {
      try {
        List<String> lines = Files.readAllLines(f, US_ASCII);
        if (!lines.isEmpty() && lines.get(0).equals(firstLine)) {
          Files.delete(f);
        } else {
          LOG.log(Level.INFO, "{0} now belongs to another server; left in place", f);
        }
      } catch (NoSuchFileException e) {
        // Already gone.
      } catch (IOException e) {
        LOG.log(Level.WARNING, "cannot remove rendezvous file " + f, e);
      }
    }
    for (int i = createdDirs.size() - 1; i >= 0; i--) {
      Path d = createdDirs.get(i);
      try {
        Files.deleteIfExists(d);
      } catch (DirectoryNotEmptyException e) {
        LOG.log(Level.DEBUG, "{0} is not empty; left in place", d);
      } catch (IOException e) {
        LOG.log(Level.WARNING, "cannot remove directory " + d, e);
      }
    }
  }

  /** The effective uid and gid of this process ({@code /proc/self/status}), or -1 each. */
  public static int[] effectiveIds() {
    int[] ids = {-1, -1};
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"), US_ASCII)) {
        if (!line.startsWith("Uid:") && !line.startsWith("Gid:")) {
          continue;
        }
        List<String> f = WORDS.splitToList(line);
        if (f.size() > 2 && f.get(0).equals("Uid:")) {
          ids[0] = Integer.parseUnsignedInt(f.get(2));
        } else if (f.size() > 2 && f.get(0).equals("Gid:")) {
          ids[1] = Integer.parseUnsignedInt(f.get(2));
        }
      }
    } catch (IOException | RuntimeException e) {
      // No procfs: the caller decides.
    }
    return ids;
  }
}
