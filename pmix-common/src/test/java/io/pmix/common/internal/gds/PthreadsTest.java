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

  private static Instant soon() {
    return Instant.now().plusMillis(100);
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
    Instant d = soon();
    assertEquals(0, p.mutexTimedLock(m.at, d.getEpochSecond(), d.getNano()));
    assertEquals(
        ETIMEDOUT,
        onOtherThread(
            () -> {
              Instant t = soon();
              return p.mutexTimedLock(m.at, t.getEpochSecond(), t.getNano());
            }));
    assertEquals(0, p.mutexUnlock(m.at));

    // A thread that ends holding the robust mutex: the next locker is told, and repairs it.
    assertEquals(
        0,
        onOtherThread(
            () -> {
              Instant t = soon();
              return p.mutexTimedLock(m.at, t.getEpochSecond(), t.getNano());
            }));
    d = soon();
    assertEquals(EOWNERDEAD, p.mutexTimedLock(m.at, d.getEpochSecond(), d.getNano()));
    assertEquals(0, p.mutexConsistent(m.at));
    assertEquals(0, p.mutexUnlock(m.at));
    d = soon();
    assertEquals(0, p.mutexTimedLock(m.at, d.getEpochSecond(), d.getNano()));
    assertEquals(0, p.mutexUnlock(m.at));
  }

  @ParameterizedTest
  @ValueSource(strings = {"jni", "jna"})
  void readLocksAreSharedAndExcludeTheWriter(String name) throws Exception {
    Pthreads p = impl(name);
    Lock l = new Lock(p);
    assertEquals(0, p.rwlockInit(l.at));
    Instant d = soon();
    assertEquals(0, p.rwlockTimedReadLock(l.at, d.getEpochSecond(), d.getNano()));
    IntSupplier read =
        () -> {
          Instant t = soon();
          return p.rwlockTimedReadLock(l.at, t.getEpochSecond(), t.getNano());
        };
    IntSupplier write =
        () -> {
          Instant t = soon();
          return p.rwlockTimedWriteLock(l.at, t.getEpochSecond(), t.getNano());
        };
    // A second reader on another thread (which then ends: its read lock stays counted).
    assertEquals(0, onOtherThread(read));
    assertEquals(ETIMEDOUT, onOtherThread(write));
    assertEquals(0, p.rwlockUnlock(l.at));
    assertEquals(0, p.rwlockUnlock(l.at)); // the other thread's, released for it
    assertEquals(0, onOtherThread(write));
    assertEquals(ETIMEDOUT, onOtherThread(read));
  }

  @Test
  void aMutexTakenThroughOneIsHeldForTheOther() throws Exception {
    Pthreads jni = Pthreads.jni();
    Pthreads jna = Pthreads.jna();
    Lock m = new Lock(jni);
    assertEquals(m.at, jna.address(m.memory) + 64);
    assertEquals(0, jni.mutexInit(m.at, false));
    Instant d = soon();
    assertEquals(0, jni.mutexTimedLock(m.at, d.getEpochSecond(), d.getNano()));
    assertEquals(
        ETIMEDOUT,
        onOtherThread(
            () -> {
              Instant t = soon();
              return jna.mutexTimedLock(m.at, t.getEpochSecond(), t.getNano());
            }));
    assertEquals(0, jni.mutexUnlock(m.at));
    assertEquals(
        0,
        onOtherThread(
            () -> {
              Instant t = soon();
              int rc = jna.mutexTimedLock(m.at, t.getEpochSecond(), t.getNano());
              return rc != 0 ? rc : jna.mutexUnlock(m.at);
            }));
  }
}
