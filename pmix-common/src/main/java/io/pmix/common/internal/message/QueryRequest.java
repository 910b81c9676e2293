package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;

/**
 * QUERY (15): SIZE nqueries, [QUERY[nqueries]] as one unit (docs/commands.md §3.9). Answered by a
 * {@link QueryReply}.
 *
 * @param queries the queries
 */
public record QueryRequest(List<Value.Query> queries) implements Request {
  /** Copies the queries. */
  public QueryRequest {
    queries = List.copyOf(queries);
  }

  @Override
  public Command command() {
    return Command.QUERY;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packSize(queries.size());
    if (!queries.isEmpty()) {
      w.pack(DataType.QUERY, queries);
    }
  }

  /** Reads the queries after the COMMAND unit. */
  public static QueryRequest decode(PmixReader r) {
    return Units.decoding(
        "QUERY",
        () -> {
          int n = Units.readCount(r);
          List<Value.Query> queries = new ArrayList<>();
          if (n != 0) {
            for (Value v : r.unpack(DataType.QUERY, n)) {
              queries.add((Value.Query) v);
            }
          }
          return new QueryRequest(queries);
        });
  }
}
