package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both ways to the pthread calls ({@link JniPthreads}, {@link JnaPthreads}) on process-shared
 * locks in direct memory, as the gds readers and writer use them: granted, refused with {@code
 * ETIMEDOUT} at the deadline while another thread holds them, a robust mutex whose owner died
 * handed over with {@code EOWNERDEAD}, shared read locks; a lock taken through one is held for the
 * other (they operate on the same C object). And this build chooses its own library.
 */
@Timeout(60)
class PthreadsTest {
  private static final int EOWNERDEAD = WriterNatives.EOWNERDEAD;
  private static final int ETIMEDOUT = PosixLocks.ETIMEDOUT;

  private static Pthreads impl(String name) {
    return name.equals("jni") ? Pthreads.jni() : Pthreads.jna();
  }

  private static final class Lock {
    final ByteBuffer memory = ByteBuffer.allocateDirect(256);
    final long at;

    Lock(Pthreads p) {
      at = p.address(memory) + 64;
    }
  }

  /** A timed lock of the mutex at {@code at}, its deadline 100 ms from when it runs. */
  private static IntSupplier lockMutex(Pthreads p, long at) {
    return () -> {
      Instant t = Instant.now().plusMillis(100);
      return p.mutexTimedLock(at, t.getEpochSecond(), t.getNano());
    };
  }

  /** A timed read lock of the rwlock at {@code at}, 100 ms from when it runs. */
  private static IntSupplier readLock(Pthreads p, long at) {
    return () -> {
      Instant t = Instant.now().plusMillis(100);
      return p.rwlockTimedReadLock(at, t.getEpochSecond(), t.getNano());
    };
  }

  /** A timed write lock of the rwlock at {@code at}, 100 ms from when it runs. */
  private static IntSupplier writeLock(Pthreads p, long at) {
    return () -> {
      Instant t = Instant.now().plusMillis(100);
      return p.rwlockTimedWriteLock(at, t.getEpochSecond(), t.getNano());
    };
  }

  /** What {@code call} returns on a thread of its own (which ends when it returns). */
  private static int onOtherThread(IntSupplier call) throws Exception {
    return CompletableFuture.supplyAsync(call::getAsInt, r -> new Thread(r).start())
        .get(30, TimeUnit.SECONDS);
  }

  @Test
  void thisBuildUsesItsOwnLibrary() {
    assertEquals("jni", Pthreads.get().name());
  }

  @ParameterizedTest
  @ValueSource(strings = {"jni", "jna"})
  void aMutexIsGrantedRefusedWhileHeldAndHandedOverWhenItsOwnerDies(String name) throws Exception {
    Pthreads p = impl(name);
    Lock m = new Lock(p);
    assertEquals(0, p.mutexInit(m.at, true));
    assertEquals(0, lockMutex(p, m.at).getAsInt());
    assertEquals(ETIMEDOUT, onOtherThread(lockMutex(p, m.at)));
    assertEquals(0, p.mutexUnlock(m.at));

    // A thread that ends holding the robust mutex: the next locker is told, and repairs it.
    assertEquals(0, onOtherThread(lockMutex(p, m.at)));
    assertEquals(EOWNERDEAD, lockMutex(p, m.at).getAsInt());
    assertEquals(0, p.mutexConsistent(m.at));
    assertEquals(0, p.mutexUnlock(m.at));
    assertEquals(0, lockMutex(p, m.at).getAsInt());
    assertEquals(0, p.mutexUnlock(m.at));
  }

  @ParameterizedTest
  @ValueSource(strings = {"jni", "jna"})
  void readLocksAreSharedAndExcludeTheWriter(String name) throws Exception {
    Pthreads p = impl(name);
    Lock l = new Lock(p);
    assertEquals(0, p.rwlockInit(l.at));
    assertEquals(0, readLock(p, l.at).getAsInt());
    // A second reader on another thread (which then ends: its read lock stays counted).
    assertEquals(0, onOtherThread(readLock(p, l.at)));
    assertEquals(ETIMEDOUT, onOtherThread(writeLock(p, l.at)));
    assertEquals(0, p.rwlockUnlock(l.at));
    assertEquals(0, p.rwlockUnlock(l.at)); // the other thread's, released for it
    assertEquals(0, onOtherThread(writeLock(p, l.at)));
    assertEquals(ETIMEDOUT, onOtherThread(readLock(p, l.at)));
  }

  @Test
  void aMutexTakenThroughOneIsHeldForTheOther() throws Exception {
    Pthreads jni = Pthreads.jni();
    Pthreads jna = Pthreads.jna();
    Lock m = new Lock(jni);
    assertEquals(m.at, jna.address(m.memory) + 64);
    assertEquals(0, jni.mutexInit(m.at, false));
    assertEquals(0, lockMutex(jni, m.at).getAsInt());
    assertEquals(ETIMEDOUT, onOtherThread(lockMutex(jna, m.at)));
    assertEquals(0, jni.mutexUnlock(m.at));
    IntSupplier lockAndUnlock =
        () -> {
          int rc = lockMutex(jna, m.at).getAsInt();
          return rc != 0 ? rc : jna.mutexUnlock(m.at);
        };
    assertEquals(0, onOtherThread(lockAndUnlock));
  }
}
