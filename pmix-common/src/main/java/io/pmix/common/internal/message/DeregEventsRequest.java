package io.pmix.common.internal.message;

import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;

/**
 * DEREGEVENTS (14): one STATUS unit per code nobody listens to any more, until the end
 * (docs/commands.md §3.8). There is no reply: the client posts no receive for it.
 *
 * @param codes the codes; {@link #DEFAULT_HANDLER} stands for the default handler
 */
public record DeregEventsRequest(List<Status> codes) implements Request {
  /** The code meaning "the default handler" ({@code PMIX_MAX_ERR_CONSTANT}, INT_MIN). */
  public static final Status DEFAULT_HANDLER = Status.of(Integer.MIN_VALUE);

  /** Copies the codes. */
  public DeregEventsRequest {
    codes = List.copyOf(codes);
  }

  @Override
  public Command command() {
    return Command.DEREGEVENTS;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    for (Status s : codes) {
      w.packStatus(s);
    }
  }

  /** Reads the codes after the COMMAND unit. */
  public static DeregEventsRequest decode(PmixReader r) {
    return Units.decoding(
        "DEREGEVENTS",
        () -> {
          List<Status> codes = new ArrayList<>();
          while (r.hasRemaining()) {
            codes.add(r.unpackStatus());
          }
          return new DeregEventsRequest(codes);
        });
  }
}
