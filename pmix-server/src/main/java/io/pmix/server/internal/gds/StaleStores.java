package io.pmix.server.internal.gds;

import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.gds.DstoreWriter;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Removes the store directories of servers that are provably dead: a server killed with SIGKILL
 * leaves its {@code pmix_dstor_<module>_<pid>} behind (libpmix never removes them). A directory
 * goes only when it is this user's and the pid in its name is not alive, or is alive but started
 * well after the directory was last changed (the pid was reused: not the server that made it). A
 * live server's directory is never touched: its pid is alive and started before it. Stateless.
 */
public final class StaleStores {
  private static final System.Logger LOG = LazyLogger.of(StaleStores.class);

  /** The prefix of every store directory (libpmix's and ours). */
  static final String PREFIX = "pmix_dstor_";

  private static final Pattern NAME = Pattern.compile("pmix_dstor_ds(?:21|12)_(\\d+)(?:\\.\\d+)?");

  /**
   * Start times from /proc are only as exact as the boot time (whole seconds): a process counts
   * as started after a directory only by more than this.
   */
  private static final Duration MARGIN = Duration.ofSeconds(5);

  private StaleStores() {}

  /** Removes the stale store directories directly in {@code base}; returns how many. */
  public static int clean(Path base) throws IOException {
    int removed = 0;
    long self = ProcessHandle.current().pid();
    String me = System.getProperty("user.name");
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(base, PREFIX + "*")) {
      for (Path p : ds) {
        Matcher m = NAME.matcher(p.getFileName().toString());
        if (!m.matches() || !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        long pid;
        try {
          pid = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
          continue;
        }
        if (pid == self || !Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName().equals(me)) {
          continue;
        }
        Instant changed =
            Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                .lastModifiedTime()
                .toInstant();
        if (provablyDead(pid, changed)) {
          LOG.log(Level.INFO, "removing {0}: its server (pid {1}) is gone", p, pid);
          DstoreWriter.deleteTree(p);
          removed++;
        }
      }
    }
    return removed;
  }

  /** Whether no live process {@code pid} can have made a directory last changed at {@code t}. */
  public static boolean provablyDead(long pid, Instant changed) {
    Optional<ProcessHandle> h = ProcessHandle.of(pid);
    if (h.isEmpty() || !h.get().isAlive()) {
      return true;
    }
    Optional<Instant> start = h.get().info().startInstant();
    return start.isPresent() && start.get().isAfter(changed.plus(MARGIN));
  }
}
