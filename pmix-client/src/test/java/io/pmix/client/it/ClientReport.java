package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.common.base.Splitter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the ranks of a job running {@link ClientMain} reported: its {@code JCLIENT <rank> <step>
 * OK|FAIL [key=value ...]} lines, whatever server ran the job (libpmix's C host server here, our
 * Java server in pmix-testkit's tests, which use this class from the test-jar).
 */
public final class ClientReport {
  private static final Pattern LINE = Pattern.compile("JCLIENT (\\d+) (\\S+) (OK|FAIL) ?(.*)");

  private final List<String> lines;
  private final Supplier<String> context;

  /**
   * A report over {@code lines} (other lines are ignored); {@code context} describes the run for
   * failure messages.
   */
  public ClientReport(List<String> lines, Supplier<String> context) {
    this.lines = List.copyOf(lines);
    this.context = context;
  }

  /** The detail of rank {@code rank}'s line for {@code step}, asserting that it says OK. */
  public String ok(int rank, String step) {
    for (String l : lines) {
      Matcher m = LINE.matcher(l);
      if (m.matches() && Integer.parseInt(m.group(1)) == rank && m.group(2).equals(step)) {
        assertEquals(
            "OK", m.group(3), () -> "rank " + rank + " step " + step + ": " + context.get());
        return m.group(4);
      }
    }
    throw new AssertionError(
        "no line of rank " + rank + " for step " + step + ": " + context.get());
  }

  /** The key=value pairs of rank {@code rank}'s OK line for {@code step}. */
  public Map<String, String> values(int rank, String step) {
    Map<String, String> out = new TreeMap<>();
    for (String kv : Splitter.on(' ').split(ok(rank, step))) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        out.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return out;
  }
}
