package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The launcher's log channels ({@code PMIx_Log}): {@code pmix.log.stdout} and {@code
 * pmix.log.stderr} entries are written to the launcher's own stdout and stderr, as PRRTE 3.0.14's
 * (libpmix's {@code plog/stdfd}) does: the text as given, no prefix (with {@code --tag-output}, the
 * source's tag, as its own output gets). Unlike PRRTE, the string's NUL terminator is not written,
 * a text without a final newline gets one (the next line would start inside it), and each entry
 * is written once (PRRTE writes it twice: docs/libpmix-facts.md).
 *
 * <ul>
 *   <li>{@code pmix.log.once}: only the first entry (the caller's order is its preference) is
 *       written.
 *   <li>{@code pmix.log.agg} (default true) with {@code pmix.log.key} and {@code pmix.log.val}
 *       (Open MPI 5's show-help file and topic): a message of a (key, val) already shown is not
 *       shown again but counted; {@link #close} prints {@code N more processes have sent help
 *       message KEY / VAL} as libpmix 5's show-help aggregation does.
 *   <li>Any other channel (syslog, email, the global data store, job records...) is not served:
 *       skipped, unless flagged required ({@link Info#isRequired()}), which refuses the whole
 *       request with {@code PMIX_ERR_NOT_SUPPORTED} before anything is written (PRRTE answers
 *       success and drops it). A request of which no entry could be written is {@code
 *       PMIX_ERR_NOT_SUPPORTED} too, so the caller knows its text went nowhere (Open MPI then
 *       prints it itself).
 *   <li>An stdout/stderr entry that is not a string: {@code PMIX_ERR_BAD_PARAM}.
 * </ul>
 *
 * <p>Thread-safe; writes are serialized on the target stream, as the output pumps' are, so a
 * logged text never lands inside a forwarded line.
 */
final class LogChannels {
  private final OutputStream stdout;
  private final OutputStream stderr;
  private final boolean tag;

  /** Duplicates of each shown (key, val) since it was shown, in first-shown order. */
  @GuardedBy("this")
  private final Map<List<String>, Integer> shown = new LinkedHashMap<>();

  /**
   * @param tag whether each line is prefixed by the source's tag {@code [nspace,rank]<stderr>: }
   */
  LogChannels(OutputStream stdout, OutputStream stderr, boolean tag) {
    this.stdout = requireNonNull(stdout, "stdout");
    this.stderr = requireNonNull(stderr, "stderr");
    this.tag = tag;
  }

  /** One log request of {@code source}; completes when written, or fails with its status. */
  CompletionStage<Void> log(Proc source, List<Info> data, List<Info> directives) {
    if (data.isEmpty()) {
      return failed(Status.ERR_BAD_PARAM, "nothing to log");
    }
    boolean once = false;
    boolean agg = true;
    String key = null;
    String val = null;
    for (Info d : directives) {
      String k = d.key();
      if (k.equals(Keys.LOG_ONCE.name())) {
        once = isTrue(d.value());
      } else if (k.equals(Keys.LOG_AGG.name())) {
        agg = isTrue(d.value());
      } else if (k.equals(Keys.LOG_KEY.name())) {
        key = string(d.value());
      } else if (k.equals(Keys.LOG_VAL.name())) {
        val = string(d.value());
      }
    }
    List<Info> served = new ArrayList<>();
    for (Info i : data) {
      boolean std = i.key().equals(Keys.LOG_STDOUT.name()) || i.key().equals(Keys.LOG_STDERR.name());
      if (std) {
        if (string(i.value()) == null) {
          return failed(Status.ERR_BAD_PARAM, i.key() + " takes a string, not " + i.value());
        }
        served.add(i);
      } else if (i.isRequired()) {
        return failed(
            Status.ERR_NOT_SUPPORTED,
            "this launcher logs to stdout and stderr only, not to the required " + i.key());
      }
    }
    if (served.isEmpty()) {
      return failed(
          Status.ERR_NOT_SUPPORTED,
          "this launcher logs to stdout and stderr only, not to " + keys(data));
    }
    if (agg && key != null && val != null && !firstShown(key, val)) {
      return CompletableFuture.completedFuture(null); // counted; the summary tells
    }
    for (Info i : once ? served.subList(0, 1) : served) {
      boolean out = i.key().equals(Keys.LOG_STDOUT.name());
      String text = requireNonNull(string(i.value()));
      write(out ? stdout : stderr, prefix(source, out), text);
    }
    return CompletableFuture.completedFuture(null);
  }

  /** Prints the counts of the aggregated duplicates not yet told. */
  void close() {
    List<String> lines = new ArrayList<>();
    synchronized (this) {
      for (Map.Entry<List<String>, Integer> e : shown.entrySet()) {
        int n = e.getValue();
        if (n > 0) {
          lines.add(n + " more process" + (n > 1 ? "es have" : " has") + " sent help message "
              + e.getKey().get(0) + " / " + e.getKey().get(1));
          e.setValue(0);
        }
      }
    }
    for (String l : lines) {
      write(stderr, null, l);
    }
  }

  /** Whether this is the first message of (key, val); else counts it. */
  private synchronized boolean firstShown(String key, String val) {
    List<String> k = List.of(key, val);
    Integer n = shown.get(k);
    if (n == null) {
      shown.put(k, 0);
      return true;
    }
    shown.put(k, n + 1);
    return false;
  }

  private @Nullable String prefix(Proc source, boolean out) {
    return tag ? "[" + source.nspace() + "," + source.rank() + "]" + (out ? "<stdout>: " : "<stderr>: ")
        : null;
  }

  private static void write(OutputStream target, @Nullable String prefix, String text) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    String body = text.endsWith("\n") ? text : text + "\n";
    if (prefix == null) {
      b.writeBytes(body.getBytes(UTF_8));
    } else {
      for (String line : body.split("(?<=\n)", -1)) {
        if (line.isEmpty()) {
          continue; // after the final newline
        }
        b.writeBytes(prefix.getBytes(UTF_8));
        b.writeBytes(line.getBytes(UTF_8));
      }
    }
    synchronized (target) {
      try {
        b.writeTo(target);
        target.flush();
      } catch (IOException e) {
        // The launcher's own output is gone: nothing else to tell it with.
      }
    }
  }

  private static @Nullable String string(Value v) {
    return v instanceof Value.Str s ? s.value() : null;
  }

  private static boolean isTrue(Value v) {
    // C's PMIX_INFO_TRUE: a true BOOL, or a flag given without a value.
    return v instanceof Value.Undef || (v instanceof Value.Bool b && b.value());
  }

  private static String keys(List<Info> data) {
    List<String> l = new ArrayList<>();
    for (Info i : data) {
      l.add(i.key());
    }
    return String.join(", ", l);
  }

  private static CompletionStage<Void> failed(Status s, String why) {
    return CompletableFuture.failedFuture(new PmixException(s, why));
  }
}
