package io.pmix.server.internal;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses the node and process maps a host registers ({@code pmix.nmap}, {@code pmix.pmap} and
 * their {@code .raw} forms) in the encodings OpenPMIx 4.2.2 generates (docs/commands.md §6.4):
 * {@code raw:} lists, the native {@code pmix[...]} form, and plain lists. The zlib form is
 * refused with {@code PMIX_ERR_NOT_SUPPORTED}.
 */
final class ProcMaps {
  private ProcMaps() {}

  /** The node names of a node map, in map order. */
  static List<String> parseNodes(String map) {
    String body = strip(map);
    List<String> nodes = new ArrayList<>();
    for (String item : splitTopLevel(body, ',')) {
      if (item.isEmpty()) {
        continue;
      }
      expandNodeItem(item, nodes);
    }
    return nodes;
  }

  /** The ranks on each node of a process map: one list per node, in map order. */
  static List<List<Integer>> parseProcs(String map) {
    String body = strip(map);
    List<List<Integer>> out = new ArrayList<>();
    for (String node : body.split(";", -1)) {
      List<Integer> ranks = new ArrayList<>();
      for (String r : com.google.common.base.Splitter.on(',').omitEmptyStrings().split(node)) {
        String t = r.trim();
        if (t.isEmpty()) {
          continue;
        }
        int dash = t.indexOf('-');
        if (dash > 0) {
          int a = parseInt(t.substring(0, dash), map);
          int b = parseInt(t.substring(dash + 1), map);
          if (b < a || b - a > 10_000_000) {
            throw bad(map);
          }
          for (int i = a; i <= b; i++) {
            ranks.add(i);
          }
        } else {
          ranks.add(parseInt(t, map));
        }
      }
      out.add(ranks);
    }
    return out;
  }

  private static String strip(String map) {
    if (map.startsWith("blob:")) {
      throw new PmixException(Status.ERR_NOT_SUPPORTED, "compressed (zlib) maps are not supported");
    }
    if (map.startsWith("raw:")) {
      return map.substring(4);
    }
    if (map.startsWith("pmix[") && map.endsWith("]")) {
      return map.substring(5, map.length() - 1);
    }
    return map;
  }

  /** Splits at {@code sep} outside brackets. */
  private static List<String> splitTopLevel(String s, char sep) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
      } else if (c == sep && depth == 0) {
        parts.add(s.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(s.substring(start));
    return parts;
  }

  /** {@code prefix[W:ranges]suffix} (native) or a literal name. */
  private static void expandNodeItem(String item, List<String> out) {
    int open = item.indexOf('[');
    if (open < 0) {
      out.add(item);
      return;
    }
    int close = item.indexOf(']', open);
    if (close < 0) {
      throw bad(item);
    }
    String prefix = item.substring(0, open);
    String suffix = item.substring(close + 1);
    String inner = item.substring(open + 1, close);
    int colon = inner.indexOf(':');
    int width = colon > 0 ? parseInt(inner.substring(0, colon), item) : 0;
    String ranges = colon > 0 ? inner.substring(colon + 1) : inner;
    for (String r : com.google.common.base.Splitter.on(',').omitEmptyStrings().split(ranges)) {
      int dash = r.indexOf('-');
      int a = parseInt(dash > 0 ? r.substring(0, dash) : r, item);
      int b = dash > 0 ? parseInt(r.substring(dash + 1), item) : a;
      if (b < a || b - a > 10_000_000) {
        throw bad(item);
      }
      for (int n = a; n <= b; n++) {
        String digits = Integer.toString(n);
        StringBuilder sb = new StringBuilder(prefix);
        for (int k = digits.length(); k < width; k++) {
          sb.append('0');
        }
        out.add(sb.append(digits).append(suffix).toString());
      }
    }
  }

  private static int parseInt(String s, String context) {
    try {
      int v = Integer.parseInt(s.trim());
      if (v < 0) {
        throw bad(context);
      }
      return v;
    } catch (NumberFormatException e) {
      throw new PmixException(Status.ERR_BAD_PARAM, "malformed map: " + context, e);
    }
  }

  private static PmixException bad(String context) {
    return new PmixException(Status.ERR_BAD_PARAM, "malformed map: " + context);
  }
}
