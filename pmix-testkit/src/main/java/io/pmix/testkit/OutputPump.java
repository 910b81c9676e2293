package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Drains one output stream of a child on its own thread: keeps a copy (up to a limit) and, when
 * given a target, forwards it, either as raw bytes or line by line behind a tag such as {@code
 * [job,3]<stdout>: }. Writes to a shared target are serialized on the target, so tagged lines of
 * different children never interleave within a line.
 */
final class OutputPump {
  /** The most bytes kept per stream; more are counted but dropped. */
  static final int CAPTURE_LIMIT = 16 << 20;

  private final InputStream in;
  private final @Nullable OutputStream target;
  private final byte @Nullable [] tag;
  private final boolean capture;
  private final @Nullable OutputStream file;
  private final Thread thread;

  @GuardedBy("this")
  private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

  @GuardedBy("this")
  private long dropped;

  /** The pending partial line (tagged mode only); used by the pump thread alone. */
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  /**
   * @param in the child's stream (closed by the pump at its end)
   * @param target where to forward, or null; writes synchronize on it
   * @param tag the prefix of every forwarded line, or null to forward bytes as they come
   * @param capture whether to keep a copy
   * @param name the thread's name
   */
  OutputPump(
      InputStream in,
      @Nullable OutputStream target,
      @Nullable String tag,
      boolean capture,
      String name) {
    this(in, target, tag, capture, null, name);
  }

  /**
   * As above, also writing every byte, untagged, to {@code file} (this pump's alone; closed at
   * the stream's end), as Open MPI's {@code --output-filename} does.
   */
  OutputPump(
      InputStream in,
      @Nullable OutputStream target,
      @Nullable String tag,
      boolean capture,
      @Nullable OutputStream file,
      String name) {
    this.in = in;
    this.target = target;
    this.tag = tag == null ? null : tag.getBytes(UTF_8);
    this.capture = capture;
    this.file = file;
    this.thread = new Thread(this::run, name);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  private void run() {
    byte[] buf = new byte[8192];
    boolean fileOk = file != null;
    try (InputStream s = in) {
      for (int n; (n = s.read(buf)) >= 0; ) {
        if (capture) {
          keep(buf, n);
        }
        if (fileOk) {
          fileOk = toFile(buf, n);
        }
        if (target != null) {
          forward(buf, n);
        }
      }
    } catch (IOException e) {
      // The child is gone and its pipe with it: what arrived has been handled.
    }
    if (file != null) {
      try {
        file.close();
      } catch (IOException e) {
        // A full disk, say: the file has what could be written.
      }
    }
    if (target != null && tag != null && line.size() > 0) {
      line.write('\n');
      emitLine();
    }
  }

  /** Writes to the file; false (stop writing) if it fails, as a full disk would. */
  private boolean toFile(byte[] buf, int n) {
    OutputStream f = file;
    if (f == null) {
      return false;
    }
    try {
      f.write(buf, 0, n);
      f.flush();
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private synchronized void keep(byte[] buf, int n) {
    int room = CAPTURE_LIMIT - copy.size();
    int k = Math.min(room, n);
    copy.write(buf, 0, k);
    dropped += n - k;
  }

  private void forward(byte[] buf, int n) {
    OutputStream t = target;
    if (t == null) {
      return;
    }
    if (tag == null) {
      synchronized (t) {
        try {
          t.write(buf, 0, n);
          t.flush();
        } catch (IOException e) {
          // Our own stdout went away (a closed pipe): nothing to forward to.
        }
      }
      return;
    }
    int start = 0;
    for (int i = 0; i < n; i++) {
      if (buf[i] == '\n') {
        line.write(buf, start, i + 1 - start);
        emitLine();
        start = i + 1;
      }
    }
    line.write(buf, start, n - start);
  }

  private void emitLine() {
    OutputStream t = target;
    byte[] prefix = tag;
    if (t == null || prefix == null) {
      return;
    }
    // One write of tag and line: System.out flushes at every write (autoflush), and a launcher
    // above us (a nested pmixrun's mpirun) forwards each write as it comes, interleaving others'
    // output between a tag and its line.
    byte[] whole = new byte[prefix.length + line.size()];
    System.arraycopy(prefix, 0, whole, 0, prefix.length);
    byte[] body = line.toByteArray();
    System.arraycopy(body, 0, whole, prefix.length, body.length);
    synchronized (t) {
      try {
        t.write(whole);
        t.flush();
      } catch (IOException e) {
        // As above.
      }
    }
    line.reset();
  }

  /** Waits up to {@code millis} for the stream to end; true if it has. */
  @CanIgnoreReturnValue
  boolean join(long millis) throws InterruptedException {
    thread.join(Math.max(1, millis));
    return !thread.isAlive();
  }

  /** What was kept so far, decoded as UTF-8, with a note if bytes were dropped. */
  synchronized String text() {
    String s = copy.toString(UTF_8);
    return dropped == 0 ? s : s + "\n[pmix-testkit: " + dropped + " more bytes dropped]\n";
  }

  static long millisUntil(long deadlineNanos) {
    return TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
  }
}
