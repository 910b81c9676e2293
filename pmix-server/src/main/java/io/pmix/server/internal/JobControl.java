package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.JobControlRequest;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.server.HostModule;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.PeerLifecycle;
import io.pmix.server.internal.lifecycle.Registry;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * JOB_CONTROL (docs/commands.md §4): the post-termination cleanup directives ({@code
 * pmix.reg.cleanup}, {@code pmix.reg.cleanupdir}, {@code pmix.clnup.recurse}, {@code
 * pmix.clnup.ignore}, {@code pmix.clnup.lvtop}) are served here, as libpmix's server serves them:
 * the paths join the epilog of each target (a rank's, or a namespace's for a WILDCARD target or
 * no target at all) and are removed when the host deregisters it. Everything else goes to the
 * host's {@link HostModule#jobControl} with every directive; a request of cleanup directives only
 * is answered SUCCESS without the host. Progress thread only; the removal runs on the host
 * executor with the other epilogs.
 */
final class JobControl {
  private static final System.Logger LOG = LazyLogger.of(JobControl.class);

  /** A directory to remove, with the flags that came with it. */
  private static final class Dir {
    final String path;
    boolean recurse;
    boolean leaveTop;

    Dir(String path, boolean recurse, boolean leaveTop) {
      this.path = path;
      this.recurse = recurse;
      this.leaveTop = leaveTop;
    }
  }

  /**
   * One target's cleanup ({@code pmix_epilog_t}): filled on the progress thread, run once on the
   * host executor after the target's deregistration, when nothing adds to it any more.
   */
  private static final class Epilog implements Runnable {
    final List<String> files = new ArrayList<>();
    final Map<String, Dir> dirs = new LinkedHashMap<>();
    final List<String> ignores = new ArrayList<>();

    @Override
    public synchronized void run() {
      // Files first, then directories; an entry may be a comma-separated list, as in C.
      for (String entry : files) {
        for (String f : entry.split(",", -1)) {
          deleteQuietly(Path.of(f));
        }
      }
      for (Dir d : dirs.values()) {
        for (String p : d.path.split(",", -1)) {
          Path top = Path.of(p);
          if (Files.isDirectory(top)) {
            destroy(top, top, d);
          }
        }
      }
    }

    /** {@code dirpath_destroy}: files go, subdirectories only when recursing, then empty dirs. */
    private void destroy(Path dir, Path top, Dir d) {
      if (ignores.contains(dir.toString())) {
        return;
      }
      try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
        for (Path e : s) {
          if (ignores.contains(e.toString())) {
            continue;
          }
          if (Files.isDirectory(e, LinkOption.NOFOLLOW_LINKS)) {
            if (d.recurse) {
              destroy(e, top, d);
            }
          } else {
            deleteQuietly(e);
          }
        }
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "cleanup of {0}: {1}", dir, e.toString());
        return;
      }
      if (dir.equals(top) && d.leaveTop) {
        return;
      }
      try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
        if (s.iterator().hasNext()) {
          return;
        }
      } catch (IOException e) {
        return;
      }
      deleteQuietly(dir);
    }

    private static void deleteQuietly(Path p) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException | RuntimeException e) {
        LOG.log(Level.DEBUG, "cleanup of {0}: {1}", p, e.toString());
      }
    }
  }

  /** What the cleanup directives of one request ask. */
  private record Request(
      List<String> files, List<String> dirs, List<String> ignores, boolean recurse,
      boolean leaveTop, int count) {}

  private final Registry registry;
  private final PeerLifecycle lifecycle;
  private final HostModule host;
  private final HostCalls hostCalls;
  /**
   * The epilogs registered so far, by target (rank, or namespace at WILDCARD); concurrent because
   * an epilog removes itself from the host executor once it has run.
   */
  private final Map<Proc, Epilog> epilogs = new ConcurrentHashMap<>();

  JobControl(Registry registry, PeerLifecycle lifecycle, HostModule host, HostCalls hostCalls) {
    this.registry = requireNonNull(registry, "registry");
    this.lifecycle = requireNonNull(lifecycle, "lifecycle");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
  }

  /** JOB_CONTROL: the targets (none: the caller's job) and the directives. */
  void handle(Peer peer, int tag, JobControlRequest q) {
    Request c;
    try {
      c = cleanupOf(q.directives());
    } catch (IllegalArgumentException e) {
      Replies.status(peer, tag, Status.ERR_BAD_PARAM);
      return;
    }
    if (c.count() > 0) {
      Status st = register(peer, q.targets(), c);
      if (!st.isSuccess()) {
        Replies.status(peer, tag, st);
        return;
      }
      if (c.count() == q.directives().size()) {
        Replies.status(peer, tag, Status.SUCCESS); // C: OPERATION_SUCCEEDED, sent as SUCCESS
        return;
      }
    }
    Proc requester = peer.proc();
    List<Proc> targets = q.targets();
    List<Info> directives = q.directives();
    hostCalls.call(
        () -> host.jobControl(requester, targets, directives),
        (info, failure) -> {
          if (failure != null) {
            Replies.status(peer, tag, failure);
          } else {
            List<Info> answer = info == null ? List.of() : info;
            Replies.send(peer, tag, () -> new QueryReply(Status.SUCCESS, answer));
          }
        });
  }

  /**
   * The cleanup directives among {@code directives}; a path that is no non-null STRING is an
   * {@link IllegalArgumentException} (C: BAD_PARAM).
   */
  private static Request cleanupOf(List<Info> directives) {
    List<String> files = new ArrayList<>();
    List<String> dirs = new ArrayList<>();
    List<String> ignores = new ArrayList<>();
    boolean recurse = false;
    boolean leaveTop = false;
    int count = 0;
    for (Info i : directives) {
      String k = i.key();
      if (k.equals(Keys.REGISTER_CLEANUP.name())) {
        files.add(path(i.value()));
      } else if (k.equals(Keys.REGISTER_CLEANUP_DIR.name())) {
        dirs.add(path(i.value()));
      } else if (k.equals(Keys.CLEANUP_IGNORE.name())) {
        ignores.add(path(i.value()));
      } else if (k.equals(Keys.CLEANUP_RECURSIVE.name())) {
        recurse = Requests.isTrue(i.value());
      } else if (k.equals(Keys.CLEANUP_LEAVE_TOPDIR.name())) {
        leaveTop = Requests.isTrue(i.value());
      } else {
        continue;
      }
      count++;
    }
    return new Request(files, dirs, ignores, recurse, leaveTop, count);
  }

  private static String path(Value v) {
    if (v instanceof Value.Str s && s.type() == DataType.STRING && s.value() != null) {
      return s.value();
    }
    throw new IllegalArgumentException("a cleanup path must be a STRING");
  }

  /**
   * Adds the request's paths to each target's epilog, with C's rules: ignores first; a path
   * already listed is not listed twice (a directory listed again gains the new flags it did not
   * have); a path to remove that is ignored is CONFLICTING_CLEANUP_DIRECTIVES. A rank that is no
   * registered local client has no epilog here and is skipped, as in C.
   */
  private Status register(Peer peer, List<Proc> targets, Request c) {
    List<Proc> where = new ArrayList<>();
    if (targets.isEmpty()) {
      where.add(Proc.wildcard(peer.proc().nspace()));
    } else {
      for (Proc t : targets) {
        Namespace ns = registry.namespace(t.nspace());
        if (t.rank() == Proc.RANK_WILDCARD ? ns != null : ns != null && ns.hasRank(t.rank())) {
          where.add(t);
        }
      }
    }
    List<Epilog> chosen = new ArrayList<>();
    for (Proc p : where) {
      Epilog e = epilogs.get(p);
      if (e == null) {
        Epilog fresh = new Epilog();
        Proc key = p;
        // Forgotten once it has run, so a later registration of the target starts afresh.
        Status st =
            lifecycle.registerEpilog(
                p,
                () -> {
                  fresh.run();
                  epilogs.remove(key, fresh);
                });
        if (!st.isSuccess()) {
          continue;
        }
        epilogs.put(p, fresh);
        e = fresh;
      }
      chosen.add(e);
    }
    for (Epilog e : chosen) {
      synchronized (e) {
        for (String ig : c.ignores()) {
          if (!e.ignores.contains(ig)) {
            e.ignores.add(ig);
          }
        }
        for (String d : c.dirs()) {
          Dir old = e.dirs.get(d);
          if (old != null) {
            old.recurse |= c.recurse();
            old.leaveTop |= c.leaveTop();
          } else if (e.ignores.contains(d)) {
            return Status.ERR_CONFLICTING_CLEANUP_DIRECTIVES;
          } else {
            e.dirs.put(d, new Dir(d, c.recurse(), c.leaveTop()));
          }
        }
        for (String f : c.files()) {
          if (e.files.contains(f)) {
            continue;
          }
          if (e.ignores.contains(f)) {
            return Status.ERR_CONFLICTING_CLEANUP_DIRECTIVES;
          }
          e.files.add(f);
        }
      }
    }
    return Status.SUCCESS;
  }
}
