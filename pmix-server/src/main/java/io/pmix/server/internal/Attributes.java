package io.pmix.server.internal;

import com.google.common.base.CharMatcher;
import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.pmix.common.DataType;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The attribute registrations ({@code pmix_regattr_t}) the server reports when a tool asks which
 * functions and attributes the host environment supports ({@code PMIX_QUERY_ATTRIBUTE_SUPPORT},
 * what {@code pattrs --host} and {@code --host-fns} print). Immutable tables.
 *
 * <p>Description lines are at most {@value #DESCRIPTION_WIDTH} characters: the 4.2.2 {@code
 * pattrs} copies each line into a fixed 141-byte line buffer at column 86 without a bound, so a
 * longer line overruns its stack. Every attribute has at least one line (it dereferences the
 * first).
 */
final class Attributes {
  static final int DESCRIPTION_WIDTH = 50;

  private Attributes() {}

  /** A registration, its description wrapped to {@value #DESCRIPTION_WIDTH} columns. */
  static Value.RegAttr attr(String name, String key, DataType type, String description) {
    return new Value.RegAttr(name, key, type.code(), wrap(description));
  }

  static List<String> wrap(String text) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    for (String word : Splitter.on(CharMatcher.whitespace()).omitEmptyStrings().split(text)) {
      String w = word.length() > DESCRIPTION_WIDTH ? word.substring(0, DESCRIPTION_WIDTH) : word;
      if (line.length() > 0 && line.length() + 1 + w.length() > DESCRIPTION_WIDTH) {
        lines.add(line.toString());
        line.setLength(0);
      }
      line.append(line.length() == 0 ? "" : " ").append(w);
    }
    if (line.length() > 0 || lines.isEmpty()) {
      lines.add(line.toString());
    }
    return ImmutableList.copyOf(lines);
  }

  private static final Value.RegAttr RANGE =
      attr("PMIX_RANGE", "pmix.range", DataType.DATA_RANGE, "Range of the data or event");
  private static final Value.RegAttr PERSISTENCE =
      attr(
          "PMIX_PERSISTENCE",
          "pmix.persist",
          DataType.PERSIST,
          "How long published data is to be kept");
  private static final Value.RegAttr TIMEOUT =
      attr(
          "PMIX_TIMEOUT",
          "pmix.timeout",
          DataType.INT,
          "Seconds to wait for the operation to complete");
  private static final Value.RegAttr WAIT =
      attr(
          "PMIX_WAIT",
          "pmix.wait",
          DataType.INT,
          "Wait until this many of the keys (0: all) are published");
  private static final Value.RegAttr REPLACE =
      attr(
          "PRTE_PUBLISH_REPLACE",
          "prte.pub.replace",
          DataType.BOOL,
          "Replace the caller's own prior publication of these keys instead of failing with"
              + " PMIX_ERR_DUPLICATE_KEY");
  private static final Value.RegAttr COLLECT =
      attr(
          "PMIX_COLLECT_DATA",
          "pmix.collect",
          DataType.BOOL,
          "Collect the data committed by the participants");
  private static final Value.RegAttr IMMEDIATE =
      attr(
          "PMIX_IMMEDIATE",
          "pmix.immediate",
          DataType.BOOL,
          "Answer at once from the data the server holds");

  private static final List<Value.RegAttr> QUERY_KEYS =
      ImmutableList.of(
          attr(
              "PMIX_QUERY_NAMESPACES",
              "pmix.qry.ns",
              DataType.STRING,
              "Comma-separated list of the active namespaces"),
          attr(
              "PMIX_QUERY_NAMESPACE_INFO",
              "pmix.qry.nsinfo",
              DataType.DATA_ARRAY,
              "Namespace, command line, size and ranks of each job"),
          attr(
              "PMIX_QUERY_PROC_TABLE",
              "pmix.qry.ptable",
              DataType.DATA_ARRAY,
              "pmix_proc_info_t of every process of a job (PMIX_NSPACE qualifier)"),
          attr(
              "PMIX_QUERY_LOCAL_PROC_TABLE",
              "pmix.qry.lptable",
              DataType.DATA_ARRAY,
              "pmix_proc_info_t of the job's processes on this node (PMIX_NSPACE qualifier)"),
          attr(
              "PMIX_JOB_SIZE",
              "pmix.job.size",
              DataType.UINT32,
              "Number of processes of a job (PMIX_NSPACE qualifier)"),
          attr(
              "PMIX_QUERY_ATTRIBUTE_SUPPORT",
              "pmix.qry.attrs",
              DataType.DATA_ARRAY,
              "Functions and attributes the host environment supports"));

  /** Client API functions the server serves whatever the host implements. */
  static final List<String> ALWAYS_SERVED =
      ImmutableList.of(
          "PMIx_Init",
          "PMIx_Finalize",
          "PMIx_Get",
          "PMIx_Get_nb",
          "PMIx_Put",
          "PMIx_Commit",
          "PMIx_Fence",
          "PMIx_Fence_nb",
          "PMIx_Query_info",
          "PMIx_Query_info_nb",
          "PMIx_Register_event_handler",
          "PMIx_Deregister_event_handler",
          "PMIx_Notify_event",
          "PMIx_tool_init",
          "PMIx_tool_finalize");

  /** Client API functions served only when the host implements the named {@code HostModule} method. */
  static final Map<String, List<String>> HOST_DEPENDENT =
      ImmutableMap.<String, List<String>>builder()
          .put("abort", List.of("PMIx_Abort"))
          .put("publish", List.of("PMIx_Publish", "PMIx_Publish_nb"))
          .put("lookup", List.of("PMIx_Lookup", "PMIx_Lookup_nb"))
          .put("unpublish", List.of("PMIx_Unpublish", "PMIx_Unpublish_nb"))
          .put("spawn", List.of("PMIx_Spawn", "PMIx_Spawn_nb"))
          .put("log", List.of("PMIx_Log", "PMIx_Log_nb"))
          .buildOrThrow();

  /** The attributes reported for each function the environment serves, unless the host says. */
  static final Map<String, List<Value.RegAttr>> HOST_DEFAULTS =
      ImmutableMap.<String, List<Value.RegAttr>>builder()
          .put("PMIx_Get", List.of(TIMEOUT, IMMEDIATE))
          .put("PMIx_Get_nb", List.of(TIMEOUT, IMMEDIATE))
          .put("PMIx_Fence", List.of(COLLECT, TIMEOUT))
          .put("PMIx_Fence_nb", List.of(COLLECT, TIMEOUT))
          .put("PMIx_Query_info", QUERY_KEYS)
          .put("PMIx_Query_info_nb", QUERY_KEYS)
          .put("PMIx_Publish", List.of(RANGE, PERSISTENCE, TIMEOUT, REPLACE))
          .put("PMIx_Publish_nb", List.of(RANGE, PERSISTENCE, TIMEOUT, REPLACE))
          .put("PMIx_Lookup", List.of(RANGE, WAIT, TIMEOUT))
          .put("PMIx_Lookup_nb", List.of(RANGE, WAIT, TIMEOUT))
          .put("PMIx_Unpublish", List.of(RANGE, TIMEOUT))
          .put("PMIx_Unpublish_nb", List.of(RANGE, TIMEOUT))
          .buildOrThrow();

  /** This server library's own functions and the attributes it honours. */
  static final Map<String, List<Value.RegAttr>> SERVER_FUNCTIONS =
      ImmutableMap.<String, List<Value.RegAttr>>builder()
          .put(
              "PMIx_server_init",
              List.of(
                  attr(
                      "PMIX_SERVER_TOOL_SUPPORT",
                      "pmix.srvr.tool",
                      DataType.BOOL,
                      "Accept tools and write their rendezvous files"),
                  attr(
                      "PMIX_SERVER_SYSTEM_SUPPORT",
                      "pmix.srvr.sys",
                      DataType.BOOL,
                      "Act as the system server (pmix.sys.<host>)"),
                  attr(
                      "PMIX_SERVER_SESSION_SUPPORT",
                      "pmix.srvr.sess",
                      DataType.BOOL,
                      "Write the session-level pmix.<host>.tool file"),
                  attr(
                      "PMIX_SERVER_NSPACE",
                      "pmix.srv.nspace",
                      DataType.STRING,
                      "Namespace of the server"),
                  attr("PMIX_SERVER_RANK", "pmix.srv.rank", DataType.PROC_RANK, "Rank of the server"),
                  attr(
                      "PMIX_SERVER_TMPDIR",
                      "pmix.srvr.tmpdir",
                      DataType.STRING,
                      "Session temporary directory"),
                  attr(
                      "PMIX_SYSTEM_TMPDIR",
                      "pmix.sys.tmpdir",
                      DataType.STRING,
                      "System temporary directory"),
                  attr("PMIX_HOSTNAME", "pmix.hname", DataType.STRING, "Name of this node")))
          .put("PMIx_server_finalize", List.of())
          .put("PMIx_server_register_nspace", List.of())
          .put("PMIx_server_deregister_nspace", List.of())
          .put("PMIx_server_register_client", List.of())
          .put("PMIx_server_deregister_client", List.of())
          .put("PMIx_server_setup_fork", List.of())
          .put("PMIx_Register_attributes", List.of())
          .buildOrThrow();
}
