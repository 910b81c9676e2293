package io.pmix.tool.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.connector.RendezvousFile;
import io.pmix.common.internal.connector.ServerAddress;
import io.pmix.tool.internal.ToolSettings.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Turns a {@link Target} into the servers to try, reading rendezvous files (docs/transport.md
 * §3.4 and §4.2). Blocking file I/O; stateless.
 *
 * <p>Differences from the 4.2.2 C tool, all deliberate:
 *
 * <ul>
 *   <li>A pid or namespace file is matched by its exact name, not by prefix (C's prefix match lets
 *       pid 12 find the file of pid 123).
 *   <li>Several files for one pid or namespace naming different URIs are refused ({@code
 *       ERR_BAD_PARAM}): the target is ambiguous.
 *   <li>The search without a target returns every server found, nearest the root first, then by
 *       path; the caller takes the first that accepts a connection (C refuses when the files name
 *       different servers). This skips stale files of servers that died without cleaning up.
 *   <li>The search reaches at most {@link #MAX_DEPTH} directories deep, follows no links and skips
 *       what it cannot read.
 * </ul>
 */
public final class ServerLocator {
  /** How deep below a tmpdir a search looks; servers put their files at depth 1 or 2. */
  static final int MAX_DEPTH = 6;

  /**
   * A server to try.
   *
   * @param address where it listens, with the codec to speak to it
   * @param version its version, when a rendezvous file says
   * @param origin how it was found, for messages
   */
  public record Candidate(ServerAddress address, Optional<String> version, String origin) {
    /** Checks for nulls. */
    public Candidate {
      requireNonNull(address, "address");
      requireNonNull(version, "version");
      requireNonNull(origin, "origin");
    }
  }

  private ServerLocator() {}

  /**
   * The servers {@code target} names, in the order to try them.
   *
   * @throws PmixException with {@code ERR_UNREACH} when nothing is found (C reports the same), or
   *     {@code ERR_BAD_PARAM} for a malformed URI or file, or an ambiguous pid or namespace
   */
  public static List<Candidate> locate(Target target, ToolSettings settings) {
    requireNonNull(target, "target");
    requireNonNull(settings, "settings");
    String host = settings.hostname();
    if (target instanceof Target.ByUri u) {
      return List.of(new Candidate(ServerAddress.parse(u.uri(), "v41"), Optional.empty(), "URI"));
    }
    if (target instanceof Target.ByFile f) {
      return List.of(fromFile(RendezvousFile.read(f.file())));
    }
    if (target instanceof Target.SystemServer) {
      Path p = settings.systemTmpdir().resolve(RendezvousFile.systemFileName(host));
      if (!Files.isRegularFile(p)) {
        throw new PmixException(Status.ERR_UNREACH, "no system server: " + p + " does not exist");
      }
      return List.of(fromFile(RendezvousFile.read(p)));
    }
    if (target instanceof Target.LaunchingServer l) {
      return List.of(new Candidate(l.address(), Optional.empty(), "PMIX_SERVER_URI*"));
    }
    if (target instanceof Target.ByPid p) {
      String name = RendezvousFile.pidFileName(host, p.pid());
      return unique(search(settings, new FileName(name, false)), "pid " + p.pid(), settings);
    }
    if (target instanceof Target.ByNspace n) {
      String name = RendezvousFile.nspaceFileName(host, n.nspace());
      return unique(
          search(settings, new FileName(name, false)), "namespace " + n.nspace(), settings);
    }
    String prefix = RendezvousFile.toolPrefix(host);
    List<Candidate> all = readAll(search(settings, new FileName(prefix, true)));
    if (all.isEmpty()) {
      throw new PmixException(
          Status.ERR_UNREACH, "no PMIx server's rendezvous file found below " + roots(settings));
    }
    return all;
  }

  private static Candidate fromFile(RendezvousFile f) {
    return new Candidate(f.address("v41"), f.version(), f.path().toString());
  }

  private static List<Candidate> unique(List<Path> files, String what, ToolSettings settings) {
    List<Candidate> found = readAll(files);
    if (found.isEmpty()) {
      throw new PmixException(
          Status.ERR_UNREACH, "no PMIx server with " + what + " found below " + roots(settings));
    }
    if (found.size() > 1) {
      throw new PmixException(
          Status.ERR_BAD_PARAM,
          "several servers claim " + what + ": " + found.stream().map(Candidate::origin).toList());
    }
    return found;
  }

  /** The files' servers, one candidate per distinct URI, in file order. */
  private static List<Candidate> readAll(List<Path> files) {
    Map<String, Candidate> byUri = new LinkedHashMap<>();
    for (Path p : files) {
      RendezvousFile f;
      try {
        f = RendezvousFile.read(p);
      } catch (PmixException e) {
        // Vanished meanwhile, unreadable, or not a rendezvous file: not a server.
        continue;
      }
      byUri.putIfAbsent(f.uri(), fromFile(f));
    }
    return new ArrayList<>(byUri.values());
  }

  private static List<Path> roots(ToolSettings settings) {
    List<Path> roots = new ArrayList<>();
    Path system = settings.systemTmpdir().toAbsolutePath().normalize();
    roots.add(system);
    Optional<Path> session = settings.sessionTmpdir();
    if (session.isPresent()) {
      Path p = session.get().toAbsolutePath().normalize();
      if (!p.startsWith(system)) {
        roots.add(p);
      }
    }
    return roots;
  }

  // Classes and loops, not lambdas or streams, on the way of a tool's first init: a lambda's
  // first call costs a fresh JVM ~0.1-0.3 ms (docs/architecture.md, "First requests").

  /** A rendezvous file's name: exactly {@code name}, or (prefix) it or it followed by a dot. */
  private static final class FileName implements Predicate<String> {
    private final String name;
    private final boolean prefix;

    FileName(String name, boolean prefix) {
      this.name = name;
      this.prefix = prefix;
    }

    @Override
    public boolean test(String file) {
      return file.equals(name) || (prefix && file.startsWith(name + "."));
    }
  }

  /** Nearest the root first, then by path. */
  private static final class NearestFirst implements Comparator<Path> {
    private final Path root;

    NearestFirst(Path root) {
      this.root = root;
    }

    @Override
    public int compare(Path a, Path b) {
      int c = Integer.compare(root.relativize(a).getNameCount(), root.relativize(b).getNameCount());
      return c != 0 ? c : a.toString().compareTo(b.toString());
    }
  }

  /** Regular files below the roots whose name matches, nearest the root first, then by path. */
  static List<Path> search(ToolSettings settings, Predicate<String> name) {
    List<Path> out = new ArrayList<>();
    for (Path root : roots(settings)) {
      if (!Files.isDirectory(root)) {
        continue;
      }
      List<Path> found = new ArrayList<>();
      walk(root, 0, name, found);
      found.sort(new NearestFirst(root));
      out.addAll(found);
    }
    return out;
  }

  /**
   * Adds the regular files in {@code dir} (at {@code depth} below its root) whose name matches,
   * and those of its subdirectories down to {@link #MAX_DEPTH}, following no link (a link is
   * neither a regular file nor a directory here); an unreadable directory or entry is skipped.
   * The names come from {@code File.list}, not {@code Files.walkFileTree}: the JDK's tree walker
   * and directory streams are ~25 classes a tool's first init would load (3-4 ms of a fresh JVM on
   * the test machine).
   */
  private static void walk(Path dir, int depth, Predicate<String> name, List<Path> found) {
    String[] names = dir.toFile().list();
    if (names == null) {
      return;
    }
    for (String n : names) {
      Path p = dir.resolve(n);
      BasicFileAttributes a;
      try {
        a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      } catch (IOException e) {
        continue;
      }
      if (a.isRegularFile()) {
        if (name.test(n)) {
          found.add(p);
        }
      } else if (a.isDirectory() && depth + 1 < MAX_DEPTH) {
        walk(p, depth + 1, name, found);
      }
    }
  }
}
