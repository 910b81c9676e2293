package io.pmix.common.internal.message;

import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;

/** FINALIZE (5): no fields; the reply is a status (docs/commands.md §3.6). */
public record FinalizeRequest() implements Request {
  /** The one FINALIZE. */
  public static final FinalizeRequest INSTANCE = new FinalizeRequest();

  @Override
  public Command command() {
    return Command.FINALIZE;
  }

  @Override
  public void encodeFields(PmixWriter w) {}

  /** Reads the (empty) fields after the COMMAND unit: nothing is read. */
  public static FinalizeRequest decode(PmixReader r) {
    return INSTANCE;
  }
}
