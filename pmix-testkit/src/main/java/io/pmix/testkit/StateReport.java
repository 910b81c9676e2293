package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pmix.server.ServerSnapshot;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The state report of a job ({@code pmixrun --report-state FILE}): how the job ended, and the
 * server's snapshot taken after every process ended but before the job was deregistered ({@code
 * beforeDeregister}) and after deregistration ({@code afterDeregister}), as JSON; and the same
 * report as readable tables ({@code bin/pmix-state FILE...} runs {@link #main}).
 *
 * <pre>
 * { "job": { "nspace", "nprocs", "status", "exitCodes": [..], "elapsedMillis", "timedOut",
 *            "stopReason", "abort": { "rank", "status", "statusName", "message", "targets" } },
 *   "beforeDeregister": SNAPSHOT, "afterDeregister": SNAPSHOT }
 * </pre>
 *
 * where SNAPSHOT is {@link ServerSnapshot#toJson()}: {@code {"peers": [{"index", "nspace",
 * "rank", "role", "state"}], "namespaces": [{"nspace", "nlocalprocs", "nfinalized",
 * "localAppFiniFired", "ranks": [{"rank", "procCount", "peerIndex"}]}], "stores": [{"module",
 * "directory", "retired", "namespaces": [..]}]}}, or {@code null} when the server could not give
 * one (it was shut down).
 */
public final class StateReport {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private StateReport() {}

  /** The report of {@code result} as a JSON tree. */
  static ObjectNode toJson(JobResult result) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode job = root.putObject("job");
    job.put("nspace", result.nspace());
    job.put("nprocs", result.nprocs());
    job.put("status", result.status());
    ArrayNode codes = job.putArray("exitCodes");
    result.exitCodes().forEach(codes::add);
    job.put("elapsedMillis", result.elapsed().toMillis());
    job.put("timedOut", result.timedOut());
    job.put("stopReason", result.stopReason().orElse(null));
    if (result.abort().isPresent()) {
      JobResult.Abort a = result.abort().get();
      ObjectNode an = job.putObject("abort");
      an.put("rank", a.rank());
      an.put("status", a.status().code());
      an.put("statusName", a.status().name());
      an.put("message", a.message());
      ArrayNode t = an.putArray("targets");
      a.targets().forEach(t::add);
    } else {
      job.putNull("abort");
    }
    root.set("beforeDeregister", snapshot(result.snapshotBeforeDeregister().orElse(null)));
    root.set("afterDeregister", snapshot(result.snapshotAfterDeregister().orElse(null)));
    return root;
  }

  /** A snapshot as JSON ({@code null} for none), in the server's own layout. */
  static JsonNode snapshot(@Nullable ServerSnapshot s) {
    if (s == null) {
      return JSON.nullNode();
    }
    try {
      return JSON.readTree(s.toJson());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("the server wrote invalid JSON: " + s.toJson(), e);
    }
  }

  /** Writes the report of {@code result} to {@code file} (replacing it whole). */
  static void write(Path file, JobResult result) throws IOException {
    Path abs = file.toAbsolutePath();
    Path dir = abs.getParent();
    Path tmp = Files.createTempFile(dir, abs.getFileName().toString(), ".tmp");
    try {
      Files.writeString(tmp, JSON.writeValueAsString(toJson(result)) + "\n", UTF_8);
      Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** Reads a report. */
  static JsonNode read(Path file) throws IOException {
    try {
      return JSON.readTree(Files.readString(file, UTF_8));
    } catch (JsonProcessingException e) {
      throw new IOException(file + " is not a state report: " + e.getOriginalMessage(), e);
    }
  }

  /** A report as readable tables. */
  static String table(JsonNode report) {
    StringBuilder b = new StringBuilder();
    JsonNode job = report.path("job");
    b.append("job ").append(job.path("nspace").asText("?")).append(": ")
        .append(job.path("nprocs").asInt()).append(" processes, exit status ")
        .append(job.path("status").asInt()).append(", ")
        .append(job.path("elapsedMillis").asLong()).append(" ms\n");
    List<String> codes = new ArrayList<>();
    job.path("exitCodes").forEach(c -> codes.add(c.asText()));
    b.append("  exit codes by rank: ").append(String.join(" ", codes)).append('\n');
    JsonNode abort = job.path("abort");
    if (abort.isObject()) {
      b.append("  aborted by rank ").append(abort.path("rank").asInt()).append(" with status ")
          .append(abort.path("status").asInt()).append(" (")
          .append(abort.path("statusName").asText()).append("): ")
          .append(abort.path("message").asText("")).append('\n');
    }
    if (job.path("timedOut").asBoolean()) {
      b.append("  timed out\n");
    }
    if (job.hasNonNull("stopReason")) {
      b.append("  stopped: ").append(job.path("stopReason").asText()).append('\n');
    }
    snapshotTables(b, "server state after the processes ended, before deregistration",
        report.path("beforeDeregister"));
    snapshotTables(b, "server state after deregistration", report.path("afterDeregister"));
    return b.toString();
  }

  private static void snapshotTables(StringBuilder b, String title, JsonNode s) {
    b.append('\n').append(title).append('\n');
    if (!s.isObject()) {
      b.append("  (no snapshot: the server was not running)\n");
      return;
    }
    List<List<String>> peers = new ArrayList<>();
    peers.add(List.of("index", "nspace", "rank", "role", "state"));
    for (JsonNode p : s.path("peers")) {
      peers.add(List.of(p.path("index").asText(), p.path("nspace").asText(),
          p.path("rank").asText(), p.path("role").asText(), p.path("state").asText()));
    }
    b.append("  peers");
    if (peers.size() == 1) {
      b.append(": none\n");
    } else {
      b.append('\n');
      grid(b, peers);
    }
    List<List<String>> nss = new ArrayList<>();
    nss.add(List.of("nspace", "nlocalprocs", "nfinalized", "localAppFiniFired", "ranks"));
    Map<String, List<List<String>>> ranks = new TreeMap<>();
    for (JsonNode n : s.path("namespaces")) {
      nss.add(List.of(n.path("nspace").asText(), n.path("nlocalprocs").asText(),
          n.path("nfinalized").asText(), n.path("localAppFiniFired").asText(),
          Integer.toString(n.path("ranks").size())));
      List<List<String>> rows = new ArrayList<>();
      rows.add(List.of("rank", "procCount", "peerIndex"));
      for (JsonNode r : n.path("ranks")) {
        rows.add(List.of(r.path("rank").asText(), r.path("procCount").asText(),
            r.path("peerIndex").asText()));
      }
      ranks.put(n.path("nspace").asText(), rows);
    }
    b.append("  namespaces");
    if (nss.size() == 1) {
      b.append(": none\n");
    } else {
      b.append('\n');
      grid(b, nss);
      for (Map.Entry<String, List<List<String>>> e : ranks.entrySet()) {
        if (e.getValue().size() > 1) {
          b.append("  ranks of ").append(e.getKey()).append('\n');
          grid(b, e.getValue());
        }
      }
    }
    // Only a server that writes shared-memory stores lists any.
    List<List<String>> stores = new ArrayList<>();
    stores.add(List.of("module", "retired", "namespaces", "directory"));
    for (JsonNode st : s.path("stores")) {
      List<String> names = new ArrayList<>();
      for (JsonNode n : st.path("namespaces")) {
        names.add(n.asText());
      }
      stores.add(List.of(st.path("module").asText(), st.path("retired").asText(),
          names.isEmpty() ? "-" : String.join(",", names), st.path("directory").asText()));
    }
    if (stores.size() > 1) {
      b.append("  shared-memory stores\n");
      grid(b, stores);
    }
  }

  private static void grid(StringBuilder b, List<List<String>> rows) {
    int cols = rows.get(0).size();
    int[] w = new int[cols];
    for (List<String> r : rows) {
      for (int c = 0; c < cols; c++) {
        w[c] = Math.max(w[c], r.get(c).length());
      }
    }
    for (List<String> r : rows) {
      StringBuilder line = new StringBuilder("    ");
      for (int c = 0; c < cols; c++) {
        line.append(r.get(c));
        if (c < cols - 1) {
          line.append(" ".repeat(w[c] - r.get(c).length() + 2));
        }
      }
      b.append(line.toString().stripTrailing()).append('\n');
    }
  }

  /**
   * Prints state reports as tables: {@code bin/pmix-state FILE.json...}. Exit status 0, 1 if a
   * file cannot be read, 2 without arguments.
   */
  public static void main(String[] args) {
    PrintStream out = System.out;
    if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
      System.err.println("usage: pmix-state REPORT.json...   (written by pmixrun --report-state)");
      System.exit(args.length == 0 ? 2 : 0);
    }
    int status = 0;
    for (int i = 0; i < args.length; i++) {
      try {
        if (i > 0) {
          out.println();
        }
        out.print(table(read(Path.of(args[i]))));
      } catch (IOException e) {
        System.err.println("pmix-state: " + args[i] + ": " + e.getMessage());
        status = 1;
      }
    }
    out.flush();
    System.exit(status);
  }
}
