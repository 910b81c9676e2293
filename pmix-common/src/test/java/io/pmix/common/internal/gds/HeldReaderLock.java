package io.pmix.common.internal.gds;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A store reader that takes its lock and keeps it until closed, as a client stopped in the middle
 * of a read would (or, for ds12, one that died there: its rwlock is never given back): the
 * server's store writes must wait for it without stalling anything else. (In this package because
 * a reader's lock is internal to the client's store code.)
 */
public final class HeldReaderLock implements AutoCloseable {
  private final ReaderLock lock;
  private boolean held;

  private HeldReaderLock(ReaderLock lock) {
    this.lock = lock;
  }

  /** Claims a reader slot in {@code nspace}'s lock segment of the ds21 store {@code dir}, locks it. */
  public static HeldReaderLock take(Path dir, String nspace) {
    return hold(Ds21Lock.attach(new DirectorySegments(dir), nspace));
  }

  /** Takes the rwlock of the ds12 store {@code dir} (libpmix's pthread build) for reading. */
  public static HeldReaderLock takeDs12(Path dir) {
    return hold(new Ds12RwLock(new DirectorySegments(dir).open("dstore_sm.lock", true)));
  }

  private static HeldReaderLock hold(ReaderLock l) {
    try {
      l.lock(Duration.ofSeconds(30));
    } catch (RuntimeException e) {
      l.close();
      throw e;
    }
    HeldReaderLock h = new HeldReaderLock(l);
    h.held = true;
    return h;
  }

  /** Releases the lock (on the thread that took it: a mutex belongs to its thread). */
  @Override
  public void close() {
    if (held) {
      held = false;
      lock.unlock();
    }
    lock.close();
  }
}
