package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.collective.Collectives;
import io.pmix.server.internal.events.EventRouter;
import io.pmix.server.internal.events.IofRegistry;
import io.pmix.server.internal.gds.SharedStores;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.PeerLifecycle;
import io.pmix.server.internal.lifecycle.RankInfo;
import io.pmix.server.internal.lifecycle.Registry;
import io.pmix.server.internal.modex.Modex;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the {@link ServerSnapshot}: the peers in slot order, the namespaces with their counters
 * and ranks (docs/lifecycle.md §6.2.4.1), and every reference a part holds to a peer or a process
 * (event registrations, forwarding requests, waiting GETs and host requests, cached
 * notifications, collective participants), so tests and operators can check that nothing
 * outlives what it names; and the shared-memory stores. Reads only; progress thread only.
 */
final class SnapshotBuilder {
  private final Registry registry;
  private final PeerLifecycle lifecycle;
  private final EventRouter events;
  private final IofRegistry iof;
  private final Modex modex;
  private final Collectives collectives;
  private final SharedStores stores;

  SnapshotBuilder(
      Registry registry, PeerLifecycle lifecycle, EventRouter events, IofRegistry iof,
      Modex modex, Collectives collectives, SharedStores stores) {
    this.registry = requireNonNull(registry, "registry");
    this.lifecycle = requireNonNull(lifecycle, "lifecycle");
    this.events = requireNonNull(events, "events");
    this.iof = requireNonNull(iof, "iof");
    this.modex = requireNonNull(modex, "modex");
    this.collectives = requireNonNull(collectives, "collectives");
    this.stores = requireNonNull(stores, "stores");
  }

  ServerSnapshot build() {
    List<ServerSnapshot.PeerView> pv = new ArrayList<>();
    List<ServerSnapshot.Reference> refs = new ArrayList<>();
    for (Peer p : registry.peers()) {
      pv.add(
          new ServerSnapshot.PeerView(
              p.index(), p.ns().name(), p.info().rank(), p.role(), p.state()));
      if (events.hasRegistration(p)) {
        refs.add(
            new ServerSnapshot.Reference(
                ServerSnapshot.ReferenceKind.EVENT_REGISTRATION, p.index(), p.ns().name(),
                p.info().rank()));
      }
    }
    Map<String, ServerSnapshot.NamespaceView> nv = new LinkedHashMap<>();
    for (Namespace ns : registry.namespaces()) {
      Map<Integer, ServerSnapshot.RankView> rv = new LinkedHashMap<>();
      for (RankInfo r : ns.ranks()) {
        rv.put(
            r.rank(),
            new ServerSnapshot.RankView(r.rank(), r.uid(), r.gid(), r.procCount(), r.peerIndex()));
      }
      nv.put(
          ns.name(),
          new ServerSnapshot.NamespaceView(
              ns.name(), ns.registered(), ns.nlocalprocs(), lifecycle.nfinalized(ns),
              ns.localAppFiniFired(), rv));
    }
    iof.forEachSource(
        (requester, src) ->
            refs.add(
                new ServerSnapshot.Reference(
                    ServerSnapshot.ReferenceKind.IOF_REQUEST, registry.slotOf(requester),
                    src.nspace(), src.rank())));
    modex.forEachWaiting(
        (requester, target) ->
            refs.add(
                requester == null
                    ? new ServerSnapshot.Reference(
                        ServerSnapshot.ReferenceKind.DMODEX_REQUEST, -1, target.nspace(),
                        target.rank())
                    : new ServerSnapshot.Reference(
                        ServerSnapshot.ReferenceKind.PENDING_GET, registry.slotOf(requester),
                        target.nspace(), target.rank())));
    events.forEachCachedProc(
        p ->
            refs.add(
                new ServerSnapshot.Reference(
                    ServerSnapshot.ReferenceKind.CACHED_NOTIFICATION, -1, p.nspace(), p.rank())));
    collectives.forEachParticipant(
        q ->
            refs.add(
                new ServerSnapshot.Reference(
                    ServerSnapshot.ReferenceKind.COLLECTIVE, -1, q.nspace(), q.rank())));
    return new ServerSnapshot(pv, nv, refs, stores.views());
  }
}
