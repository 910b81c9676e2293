package io.pmix.testkit.soak;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A barrier between the ranks of a job outside PMIx, passed before every re-init: a counter in a
 * file under a lock, as pmix_client_check's RE-INIT BARRIER. Without it a fast rank re-inits and
 * enters the next cycle's fence while a slow rank is still finalizing the previous cycle, and the
 * server (like libpmix's) removes the finalizing rank from that fence.
 */
final class CycleBarrier {
  private final Path file;
  private final int size;
  private long round;

  CycleBarrier(Path file, int size) {
    this.file = file;
    this.size = size;
  }

  /** Waits until every rank has arrived at this round; a timeout is an error, never a pass. */
  void await(long timeoutMs) throws IOException, TimeoutException, InterruptedException {
    long target = (round + 1) * size;
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    try (FileChannel ch =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long v = update(ch, 1);
      while (v < target) {
        if (System.nanoTime() > deadline) {
          throw new TimeoutException(
              "barrier " + file + ": count " + v + ", want " + target + " after " + timeoutMs
                  + " ms");
        }
        // Polling a file: the ranks share nothing else outside PMIx.
        Thread.sleep(1);
        v = update(ch, 0);
      }
    }
    round++;
  }

  private static long update(FileChannel ch, int add) throws IOException {
    try (FileLock unused = ch.lock(0, Long.MAX_VALUE, add == 0)) {
      ByteBuffer b = ByteBuffer.allocate(32);
      int n = ch.read(b, 0);
      String text = n > 0 ? new String(b.array(), 0, n, US_ASCII).trim() : "";
      long v = (text.isEmpty() ? 0 : Long.parseLong(text)) + add;
      if (add != 0) {
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((v + "\n").getBytes(US_ASCII)), 0);
      }
      return v;
    }
  }
}
