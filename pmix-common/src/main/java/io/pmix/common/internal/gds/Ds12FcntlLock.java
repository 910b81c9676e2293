package io.pmix.common.internal.gds;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * ds12's reader lock in libpmix builds without process-shared rwlocks ({@code
 * --disable-dstore-pthlck}): a POSIX record lock on the whole of the empty file {@code
 * dstore_sm.lock}, shared ({@code F_RDLCK}) for readers, exclusive for the server (docs/gds.md
 * section 4). {@link FileChannel#lock} speaks exactly that on Linux.
 *
 * <p>POSIX record locks belong to the process and closing any descriptor of the file drops them
 * all, so this process opens each lock file once and its threads take turns on it: one shared
 * descriptor per file, reference counted, closed when its last user closes. Thread-safe.
 */
final class Ds12FcntlLock implements ReaderLock {
  private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /** One lock file as this process holds it. */
  private static final class Shared {
    final Path path;
    final FileChannel channel;
    final ReentrantLock jvmLock = new ReentrantLock();

    @GuardedBy("Ds12FcntlLock.class")
    int users;

    Shared(Path path, FileChannel channel) {
      this.path = path;
      this.channel = channel;
    }
  }

  @GuardedBy("Ds12FcntlLock.class")
  private static final Map<Path, Shared> OPEN = new HashMap<>();

  private final Shared shared;
  private @Nullable FileLock held;
  private boolean closed;

  private Ds12FcntlLock(Shared shared) {
    this.shared = shared;
  }

  /** The lock of file {@code lockFile}, opened read-only as libpmix's clients open it. */
  static Ds12FcntlLock open(Path lockFile) {
    Path key = lockFile.toAbsolutePath().normalize();
    synchronized (Ds12FcntlLock.class) {
      Shared s = OPEN.get(key);
      if (s == null) {
        try {
          s = new Shared(key, FileChannel.open(key, StandardOpenOption.READ));
        } catch (IOException e) {
          throw new PmixException(Status.ERR_NOT_AVAILABLE, "cannot open " + key + ": " + e, e);
        }
        OPEN.put(key, s);
      }
      s.users++;
      return new Ds12FcntlLock(s);
    }
  }

  @Override
  public void lock(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      if (!shared.jvmLock.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new PmixException(Status.ERR_TIMEOUT, shared.path + ": busy in this process");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PmixException(Status.ERR_TIMEOUT, shared.path + ": interrupted", e);
    }
    try {
      long backoff = TimeUnit.MICROSECONDS.toNanos(20);
      while (true) {
        // F_SETLK of F_RDLCK on the whole file (a length of Long.MAX_VALUE is sent as 0).
        FileLock l = shared.channel.tryLock(0, Long.MAX_VALUE, true);
        if (l != null) {
          held = l;
          return;
        }
        if (System.nanoTime() - deadline >= 0) {
          throw new PmixException(Status.ERR_TIMEOUT, shared.path + ": not granted in time");
        }
        // The writer holds it for one store at a time: poll with a short, growing pause.
        LockSupport.parkNanos(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS);
      }
    } catch (IOException e) {
      shared.jvmLock.unlock();
      throw new PmixException(Status.ERR_INIT, "cannot lock " + shared.path + ": " + e, e);
    } catch (RuntimeException e) {
      shared.jvmLock.unlock();
      throw e;
    }
  }

  @Override
  public void unlock() {
    FileLock l = held;
    held = null;
    try {
      if (l != null) {
        l.release();
      }
    } catch (IOException e) {
      throw new PmixException(Status.ERR_INIT, "cannot unlock " + shared.path + ": " + e, e);
    } finally {
      shared.jvmLock.unlock();
    }
  }

  @Override
  public void close() {
    synchronized (Ds12FcntlLock.class) {
      if (closed) {
        return;
      }
      closed = true;
      if (--shared.users == 0) {
        OPEN.remove(shared.path);
        try {
          shared.channel.close();
        } catch (IOException e) {
          // Nothing was held (callers close only unlocked locks): the descriptor is gone anyway.
        }
      }
    }
  }
}
