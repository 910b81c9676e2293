package io.pmix.server.internal.events;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * An event with explicit targets ({@code PMIX_RANGE_CUSTOM} and {@code pmix.evrange}) kept for the
 * local targets that had not registered for it when it was raised, as OpenPMIx keeps it in its
 * notification cache. It is delivered when such a target registers for the code and forgotten per
 * target when the target finalizes, dies or is deregistered; it goes when no target is left.
 * Progress thread only.
 */
final class CachedNotification {
  final Status code;
  final Proc source;
  /** The {@code pmix_data_range_t} code, carried to the target as it was given. */
  final int range;
  final List<Info> info;
  /** The targets still waiting for it. */
  final Set<Proc> pending = new LinkedHashSet<>();

  CachedNotification(Status code, Proc source, int range, List<Info> info) {
    this.code = code;
    this.source = source;
    this.range = range;
    this.info = List.copyOf(info);
  }
}
