package io.pmix.server.internal;

import io.pmix.common.Proc;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * A GETNB that could not be answered at once: it waits for the target's commit, for the target's
 * namespace to be fully registered, or for the host's direct modex. Progress thread only.
 */
final class PendingGet {
  final Peer requester;
  final int tag;
  final Proc target;
  final @Nullable String key;
  /** Scope code the requester named ({@code pmix.scope}), or 0. */
  final int scope;
  @Nullable ScheduledFuture<?> timer;
  boolean done;

  PendingGet(Peer requester, int tag, Proc target, @Nullable String key, int scope) {
    this.requester = requester;
    this.tag = tag;
    this.target = target;
    this.key = key;
    this.scope = scope;
  }
}
