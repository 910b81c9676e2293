package io.pmix.server.internal.events;

import io.pmix.common.Proc;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The I/O-forwarding requests of connected peers ({@code pmix_iof_req_t} list). Client-scoped
 * state (docs/lifecycle.md §6.2.4, §6.2.7): a request goes when its requester finalizes, closes
 * or is released, and a source goes when its namespace is deregistered. Progress thread only.
 */
public final class IofRegistry {
  private final List<IofRequest> requests = new ArrayList<>();

  /** An empty registry. */
  public IofRegistry() {}

  /** Records a request of a connected, unfinalized peer; anyone else's is ignored. */
  public void add(Peer requester, List<Proc> sources, int channels) {
    if (requester.active()) {
      requests.add(new IofRequest(requester, sources, channels));
    }
  }

  /** Drops the peer's requests (its cycle ended). */
  public void forget(Peer requester) {
    // A loop, not removeIf with a lambda: this runs at every finalize (docs/architecture.md,
    // "First requests").
    for (Iterator<IofRequest> it = requests.iterator(); it.hasNext(); ) {
      if (it.next().requester == requester) {
        it.remove();
      }
    }
  }

  /** Drops every source in {@code ns}, every request left without one, and {@code ns}'s own. */
  public void namespaceGone(Namespace ns) {
    // Loops, as in forget: this runs at every job's end, on the progress thread.
    for (Iterator<IofRequest> it = requests.iterator(); it.hasNext(); ) {
      IofRequest r = it.next();
      for (Iterator<Proc> src = r.sources.iterator(); src.hasNext(); ) {
        if (src.next().nspace().equals(ns.name())) {
          src.remove();
        }
      }
      if (r.sources.isEmpty() || r.requester.ns() == ns) {
        it.remove();
      }
    }
  }

  /** Each (requester, source) pair, in request order. */
  public void forEachSource(BiConsumer<Peer, Proc> action) {
    for (IofRequest r : requests) {
      for (Proc src : r.sources) {
        action.accept(r.requester, src);
      }
    }
  }
}
