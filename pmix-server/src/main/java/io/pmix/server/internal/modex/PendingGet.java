package io.pmix.server.internal.modex;

import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.server.internal.lifecycle.Peer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * A request for a process's data that could not be answered at once: a client's GETNB, or the
 * host's direct-modex request ({@code PMIx_server_dmodex_request}). It waits for the target's
 * commit, for the target's namespace to be fully registered, or (GETNB only) for the host's
 * direct modex. Both kinds share the waiting (park, resolve, fail); only where the answer goes
 * differs ({@link Destination}). Progress thread only.
 */
final class PendingGet {
  /** Where the answer goes. */
  sealed interface Destination permits ToClient, ToHost {}

  /** A client's GETNB: the reply frame goes to {@code peer} under {@code tag}, in its format. */
  record ToClient(Peer peer, int tag) implements Destination {}

  /**
   * The host's direct-modex request: the target's data as bare KVAL units in the server's native
   * format (docs/commands.md §7.2) completes {@code result}; a failure completes it with a {@code
   * PmixException} carrying the status.
   */
  record ToHost(CompletableFuture<byte[]> result) implements Destination {}

  final Destination to;
  final Proc target;
  final @Nullable String key;
  /** The scope the requester named ({@code pmix.scope}), or UNDEF. */
  final Scope scope;
  @Nullable ScheduledFuture<?> timer;
  boolean done;

  PendingGet(Destination to, Proc target, @Nullable String key, Scope scope) {
    this.to = to;
    this.target = target;
    this.key = key;
    this.scope = scope;
  }

  /** The client whose GETNB this is, or null for the host's request. */
  @Nullable Peer requester() {
    return to instanceof ToClient c ? c.peer() : null;
  }

  /** The GETNB destination; for the paths only a client's GETNB takes. */
  ToClient client() {
    if (to instanceof ToClient c) {
      return c;
    }
    throw new IllegalStateException("not a client's GETNB: " + target);
  }

  /** Stops its timer, if one runs. */
  void cancelTimer() {
    if (timer != null) {
      boolean unused = timer.cancel(false);
      timer = null;
    }
  }
}
