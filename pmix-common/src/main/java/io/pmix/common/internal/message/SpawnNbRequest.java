package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;

/**
 * SPAWNNB (9): SIZE ninfo, [INFO[ninfo]] job info, SIZE napps, [APP[napps]] (docs/commands.md §4;
 * capture in §9.10). The sender fills in what C fills in (working directory, argv[0]) before.
 * Answered by a {@link SpawnNbReply}.
 *
 * @param jobInfo the job-level directives
 * @param apps the applications
 */
public record SpawnNbRequest(List<Info> jobInfo, List<Value.App> apps) implements Request {
  /** Copies the lists. */
  public SpawnNbRequest {
    jobInfo = List.copyOf(jobInfo);
    apps = List.copyOf(apps);
  }

  @Override
  public Command command() {
    return Command.SPAWNNB;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeInfos(w, jobInfo);
    w.packSize(apps.size());
    if (!apps.isEmpty()) {
      w.pack(DataType.APP, apps);
    }
  }

  /** Reads the fields after the COMMAND unit. */
  public static SpawnNbRequest decode(PmixReader r) {
    return Units.decoding(
        "SPAWNNB",
        () -> {
          List<Info> jobInfo = Units.readInfos(r);
          int n = Units.readCount(r);
          List<Value.App> apps = new ArrayList<>();
          if (n != 0) {
            for (Value v : r.unpack(DataType.APP, n)) {
              apps.add((Value.App) v);
            }
          }
          return new SpawnNbRequest(jobInfo, apps);
        });
  }
}
