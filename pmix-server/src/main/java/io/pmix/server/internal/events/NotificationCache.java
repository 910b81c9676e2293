package io.pmix.server.internal.events;

import io.pmix.common.Proc;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Targeted events kept for registered local targets that had not registered for their code yet
 * (OpenPMIx's notification cache), oldest first and at most {@link #MAX} of them. A target is
 * forgotten when it finalizes, dies or is deregistered (docs/lifecycle.md §6.2.4: cached
 * notifications targeting the client are pruned), so an event never reaches the next cycle of
 * its target. Progress thread only.
 */
final class NotificationCache {
  /** At most this many events are kept for late targets (OpenPMIx's default max_events). */
  static final int MAX = 512;

  private final Registry registry;
  private final ArrayDeque<CachedNotification> cached = new ArrayDeque<>();

  NotificationCache(Registry registry) {
    this.registry = registry;
  }

  /** Keeps {@code n} for the registered local ranks among {@code targets} it did not reach. */
  void keepForLateTargets(CachedNotification n, List<Proc> targets, Set<Proc> delivered) {
    for (Proc t : targets) {
      Namespace ns = registry.namespace(t.nspace());
      if (ns == null) {
        continue;
      }
      if (t.rank() == Proc.RANK_WILDCARD) {
        for (int r : ns.rankNumbers()) {
          Proc q = Proc.of(ns.name(), r);
          if (!delivered.contains(q)) {
            n.pending.add(q);
          }
        }
      } else if (ns.hasRank(t.rank()) && !delivered.contains(t)) {
        n.pending.add(t);
      }
    }
    if (n.pending.isEmpty()) {
      return;
    }
    cached.addLast(n);
    while (cached.size() > MAX) {
      cached.removeFirst();
    }
  }

  /** Hands {@code deliver} the events waiting for this peer's rank that {@code wants}. */
  void deliverTo(Peer peer, Predicate<CachedNotification> wants,
      Consumer<CachedNotification> deliver) {
    for (Iterator<CachedNotification> it = cached.iterator(); it.hasNext(); ) {
      CachedNotification n = it.next();
      if (!n.pending.contains(peer.proc()) || !wants.test(n)) {
        continue;
      }
      deliver.accept(n);
      n.pending.remove(peer.proc());
      if (n.pending.isEmpty()) {
        it.remove();
      }
    }
  }

  /** Forgets a target in every cached event (it finalized, died or was deregistered). */
  void forgetTarget(Proc target) {
    // A loop, not removeIf with a lambda: this runs at every finalize (docs/architecture.md,
    // "First requests").
    for (Iterator<CachedNotification> it = cached.iterator(); it.hasNext(); ) {
      CachedNotification n = it.next();
      n.pending.remove(target);
      if (n.pending.isEmpty()) {
        it.remove();
      }
    }
  }

  /** Forgets events from the namespace's processes and its processes as targets. */
  void namespaceGone(String nspace) {
    cached.removeIf(n -> n.source.nspace().equals(nspace));
    for (CachedNotification n : cached) {
      n.pending.removeIf(t -> t.nspace().equals(nspace));
    }
    cached.removeIf(n -> n.pending.isEmpty());
  }

  /** For each kept event, its source, then each target still waiting. */
  void forEachNamedProc(Consumer<Proc> action) {
    for (CachedNotification n : cached) {
      action.accept(n.source);
      n.pending.forEach(action);
    }
  }
}
