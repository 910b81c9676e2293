package io.pmix.common;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * An event delivered to an {@link EventHandler}: what happened, who raised it and what it carries.
 * The client ({@code io.pmix.client.PMIx}) and the tool ({@code io.pmix.tool.PMIxTool}) deliver
 * the same type. Immutable and safe to share.
 *
 * @param status the event code
 * @param source the process that raised it (the server names it in its notification)
 * @param info the data that came with it, including directives the server adds (such as {@code
 *     pmix.srvr.internal.notify})
 * @param range the range it was raised for, when the sender says (4.2.2 servers do; events raised
 *     by the library itself for a lost connection carry none)
 */
public record Event(Status status, Proc source, List<Info> info, Optional<DataRange> range) {
  /** Checks for nulls and copies the list. */
  public Event {
    requireNonNull(status, "status");
    requireNonNull(source, "source");
    info = ImmutableLists.copyOf(info);
    requireNonNull(range, "range");
  }

  /** The value of the info with this key, if the event carries one. */
  public Optional<Info> find(String key) {
    for (Info i : info) {
      if (i.key().equals(key)) {
        return Optional.of(i);
      }
    }
    return Optional.empty();
  }
}
