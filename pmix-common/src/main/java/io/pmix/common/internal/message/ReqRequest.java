package io.pmix.common.internal.message;

import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;

/**
 * REQ (0): the job-data request a connector sends right after its handshake; no fields
 * (docs/commands.md §3.1). Answered by a {@link ReqReply}.
 */
public record ReqRequest() implements Request {
  /** The one REQ. */
  public static final ReqRequest INSTANCE = new ReqRequest();

  @Override
  public Command command() {
    return Command.REQ;
  }

  @Override
  public void encodeFields(PmixWriter w) {}

  /** Reads the (empty) fields after the COMMAND unit: nothing is read. */
  public static ReqRequest decode(PmixReader r) {
    return INSTANCE;
  }
}
