package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * ABORT (1): STATUS status, STRING message, SIZE nprocs, [PROC[nprocs]] (docs/commands.md §3.2).
 * The reply is a status.
 *
 * @param status the exit status asked for
 * @param message why, or null
 * @param procs whom to abort; none means the caller's whole job
 */
public record AbortRequest(Status status, @Nullable String message, List<Proc> procs)
    implements Request {
  /** Checks the status and copies the procs. */
  public AbortRequest {
    requireNonNull(status, "status");
    procs = List.copyOf(procs);
  }

  @Override
  public Command command() {
    return Command.ABORT;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packStatus(status);
    w.packString(message);
    Units.writeProcs(w, procs);
  }

  /** Reads the fields after the COMMAND unit. */
  public static AbortRequest decode(PmixReader r) {
    return Units.decoding(
        "ABORT",
        () -> {
          Status status = r.unpackStatus();
          String msg = r.unpackString();
          return new AbortRequest(status, msg, Units.readProcs(r));
        });
  }
}
