package io.pmix.tool.internal;

import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableMap;
import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Key;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The attributes this tool library itself honours, per API function, as a {@code
 * pmix.qry.attrs} query qualified by {@code pmix.tool.fns} asks for them. The answer is made
 * here, without a message: the library knows what it implements and the server does not.
 * (Attributes of server and host functions are the server's to answer.)
 */
final class ToolAttributes {
  private record Attr(String macro, Key key, String description) {}

  /** A constant table, built once: not per-cycle state. */
  private static final ImmutableMap<String, List<Attr>> BY_FUNCTION = table();

  private static ImmutableMap<String, List<Attr>> table() {
    Map<String, List<Attr>> m = new LinkedHashMap<>();
    m.put(
        "PMIx_tool_init",
        List.of(
            new Attr("PMIX_SERVER_URI", Keys.SERVER_URI, "connect to the server at this URI"),
            new Attr("PMIX_TCP_URI", Keys.TCP_URI, "same as PMIX_SERVER_URI"),
            new Attr(
                "PMIX_TOOL_ATTACHMENT_FILE", Keys.TOOL_ATTACHMENT_FILE, "read the URI from a file"),
            new Attr(
                "PMIX_CONNECT_TO_SYSTEM", Keys.CONNECT_TO_SYSTEM, "connect to the system server"),
            new Attr(
                "PMIX_CONNECT_SYSTEM_FIRST",
                Keys.CONNECT_SYSTEM_FIRST,
                "try the system server first"),
            new Attr("PMIX_SERVER_PIDINFO", Keys.SERVER_PIDINFO, "the server with this pid"),
            new Attr("PMIX_SERVER_NSPACE", Keys.SERVER_NSPACE, "the server with this namespace"),
            new Attr("PMIX_TOOL_NSPACE", Keys.TOOL_NSPACE, "the tool's own namespace"),
            new Attr("PMIX_TOOL_RANK", Keys.TOOL_RANK, "the tool's own rank"),
            new Attr("PMIX_LAUNCHER", Keys.LAUNCHER, "connect as a launcher"),
            new Attr(
                "PMIX_TOOL_DO_NOT_CONNECT", Keys.TOOL_DO_NOT_CONNECT, "do not connect at all"),
            new Attr(
                "PMIX_TOOL_CONNECT_OPTIONAL",
                Keys.TOOL_CONNECT_OPTIONAL,
                "run unconnected if no server is reachable"),
            new Attr(
                "PMIX_CONNECT_MAX_RETRIES", Keys.CONNECT_MAX_RETRIES, "connect retries per server"),
            new Attr(
                "PMIX_CONNECT_RETRY_DELAY",
                Keys.CONNECT_RETRY_DELAY,
                "seconds between connect retries"),
            new Attr("PMIX_SYSTEM_TMPDIR", Keys.SYSTEM_TMPDIR, "root of the rendezvous search"),
            new Attr("PMIX_SERVER_TMPDIR", Keys.SERVER_TMPDIR, "another search root")));
    m.put("PMIx_tool_finalize", List.of());
    m.put(
        "PMIx_Query_info",
        List.of(
            new Attr(
                "PMIX_QUERY_ATTRIBUTE_SUPPORT",
                Keys.QUERY_ATTRIBUTE_SUPPORT,
                "with PMIX_TOOL_FUNCTIONS: answered by the library")));
    m.put(
        "PMIx_Get",
        List.of(
            new Attr("PMIX_OPTIONAL", Keys.OPTIONAL, "look only in the local cache"),
            new Attr("PMIX_IMMEDIATE", Keys.IMMEDIATE, "the server answers at once"),
            new Attr("PMIX_TIMEOUT", Keys.TIMEOUT, "passed to the server")));
    m.put("PMIx_Register_event_handler", List.of());
    m.put("PMIx_Notify_event", List.of());
    m.put("PMIx_Spawn", List.of());
    m.put("PMIx_Job_control", List.of());
    m.put("PMIx_IOF_pull", List.of());
    m.put("PMIx_IOF_deregister", List.of());
    m.put("PMIx_IOF_push", List.of());
    m.put("PMIx_Log", List.of());
    return ImmutableMap.copyOf(m);
  }

  private ToolAttributes() {}

  /** Whether a query asks for tool-function attributes only, so it is answered here. */
  static boolean answersLocally(Value.Query q) {
    if (!q.keys().equals(List.of(Keys.QUERY_ATTRIBUTE_SUPPORT.name()))) {
      return false;
    }
    boolean tool = false;
    for (Info i : q.qualifiers()) {
      if (i.key().equals(Keys.TOOL_FUNCTIONS.name())) {
        tool = true;
      } else if (i.key().endsWith(".fns")) {
        return false;
      }
    }
    return tool;
  }

  /**
   * The answer: one {@code pmix.qry.attrs} info whose value is an array of infos, one per
   * function named in the {@code pmix.tool.fns} qualifier (a comma list; empty or {@code all} for
   * every function), each an array of {@code REGATTR}. Unknown functions get an empty array.
   */
  static Info answer(Value.Query q) {
    String wanted = "";
    for (Info i : q.qualifiers()) {
      if (i.key().equals(Keys.TOOL_FUNCTIONS.name()) && i.value() instanceof Value.Str s) {
        wanted = s.value() == null ? "" : s.value().trim();
      }
    }
    List<String> functions = new ArrayList<>();
    if (wanted.isEmpty() || wanted.equals("all")) {
      functions.addAll(BY_FUNCTION.keySet());
    } else {
      for (String f : Splitter.on(',').trimResults().omitEmptyStrings().split(wanted)) {
        functions.add(f);
      }
    }
    List<Info> perFunction = new ArrayList<>();
    for (String f : functions) {
      List<Value> attrs = new ArrayList<>();
      for (Attr a : BY_FUNCTION.getOrDefault(f, List.of())) {
        attrs.add(
            new Value.RegAttr(
                a.macro(), a.key().name(), a.key().type().code(), List.of(a.description())));
      }
      perFunction.add(Info.of(f, DataArray.of(DataType.REGATTR, attrs)));
    }
    return Info.of(Keys.QUERY_ATTRIBUTE_SUPPORT.name(), DataArray.ofInfos(perFunction));
  }
}
