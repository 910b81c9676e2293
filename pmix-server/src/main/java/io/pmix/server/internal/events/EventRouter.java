package io.pmix.server.internal.events;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.message.DeregEventsRequest;
import io.pmix.common.internal.message.NotifyPush;
import io.pmix.common.internal.message.NotifyRequest;
import io.pmix.common.internal.message.RegEventsRequest;
import io.pmix.common.internal.wire.Tags;
import io.pmix.server.HostModule;
import io.pmix.server.internal.HostCalls;
import io.pmix.server.internal.Replies;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Events on this node: the peers' registrations (REGEVENTS, DEREGEVENTS; docs/commands.md §3.8),
 * the events they raise (NOTIFY), and local delivery as the tag-0 {@link NotifyPush}, for the
 * host's {@code PMIx_Notify_event} too. A {@code PMIX_RANGE_CUSTOM} event goes only to the procs
 * its {@code pmix.evrange} names, and waits in the {@link NotificationCache} for those that had
 * not registered for it yet.
 *
 * <p>Registrations are client-scoped (docs/lifecycle.md §6.2.4): kept per peer object and dropped
 * by {@link #forget} when the peer's cycle ends, so a reconnected rank starts with none. Progress
 * thread only.
 */
public final class EventRouter {
  /** {@code PMIX_EVENT_CUSTOM_RANGE}: the target procs of a {@code PMIX_RANGE_CUSTOM} event. */
  private static final String EVENT_CUSTOM_RANGE = "pmix.evrange";

  /** One peer's registration: the codes, or every event. */
  private static final class Registration {
    final Set<Integer> codes = new HashSet<>();
    boolean all;

    boolean covers(Status code) {
      return all || codes.contains(code.code());
    }
  }

  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final NotificationCache cache;
  private final Map<Peer, Registration> registrations = new HashMap<>();

  /** The events of one server. */
  public EventRouter(Registry registry, HostModule host, HostCalls hostCalls) {
    this.registry = requireNonNull(registry, "registry");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.cache = new NotificationCache(registry);
  }

  /**
   * Pushes an event to the local clients registered for it (tag-0 NOTIFY), as the host's {@code
   * PMIx_Notify_event} does for local delivery; {@code except} (the raiser) is skipped. A {@code
   * PMIX_RANGE_CUSTOM} event goes only to the procs its {@code pmix.evrange} names; those of them
   * that are registered local ranks without a registration for the code yet get it when they
   * register, unless they finalize, die or are deregistered first.
   *
   * @param range the {@code pmix_data_range_t} code, passed on unchanged
   */
  public void notifyLocal(
      Status code, Proc source, int range, List<Info> info, @Nullable Peer except) {
    List<Proc> targets = range == DataRange.CUSTOM.code() ? customTargets(info) : null;
    Set<Proc> delivered = new HashSet<>();
    if (except != null) {
      delivered.add(except.proc());
    }
    for (Peer p : registry.peers()) {
      if (p == except || !p.active()) {
        continue;
      }
      if (targets != null && !names(targets, p.proc())) {
        continue;
      }
      if (!registeredFor(p, code)) {
        continue;
      }
      if (range == DataRange.NAMESPACE.code() && !p.ns().name().equals(source.nspace())) {
        continue;
      }
      sendNotify(p, code, source, range, info);
      delivered.add(p.proc());
    }
    if (targets != null) {
      cache.keepForLateTargets(new CachedNotification(code, source, range, info), targets,
          delivered);
    }
  }

  /** REGEVENTS: records the codes (none: every event), answers, delivers what was kept. */
  public void handleRegEvents(Peer peer, int tag, RegEventsRequest q) {
    Registration reg = registrations.computeIfAbsent(peer, p -> new Registration());
    if (q.codes().isEmpty()) {
      reg.all = true;
    } else {
      for (Status code : q.codes()) {
        reg.codes.add(code.code());
      }
    }
    Replies.status(peer, tag, Status.SUCCESS);
    cache.deliverTo(
        peer,
        n -> registeredFor(peer, n.code),
        n -> sendNotify(peer, n.code, n.source, n.range, n.info));
  }

  /** DEREGEVENTS: no reply; the client posts no receive for it (docs/commands.md §3.8). */
  public void handleDeregEvents(Peer peer, DeregEventsRequest q) {
    Registration reg = registrations.get(peer);
    if (reg == null) {
      return;
    }
    for (Status code : q.codes()) {
      if (code.equals(DeregEventsRequest.DEFAULT_HANDLER)) {
        reg.all = false;
      } else {
        reg.codes.remove(code.code());
      }
    }
  }

  /**
   * NOTIFY from a peer: delivered locally at once and answered; beyond this node (any range but
   * LOCAL and PROC_LOCAL) handed to the host's {@code notifyEvent} as well.
   */
  public void handleNotify(Peer peer, int tag, NotifyRequest q) {
    Status code = q.code();
    int range = q.range();
    List<Info> info = q.info();
    notifyLocal(code, peer.proc(), range, info, peer);
    Replies.status(peer, tag, Status.SUCCESS);
    if (range != DataRange.LOCAL.code() && range != DataRange.PROC_LOCAL.code()) {
      List<Info> hostInfo = new ArrayList<>(info);
      hostInfo.add(Info.of("pmix.srvr.internal.notify", true));
      List<Info> copy = List.copyOf(hostInfo);
      hostCalls.call(
          () -> host.notifyEvent(code, peer.proc(), range, copy), (v, failure) -> {});
    }
  }

  /** Drops the peer's registrations: its cycle ended. */
  public void forget(Peer peer) {
    registrations.remove(peer);
  }

  /** Forgets a target in every kept event (it finalized, died or was deregistered). */
  public void forgetTarget(Proc target) {
    cache.forgetTarget(target);
  }

  /** Forgets every kept event from or for the namespace's processes. */
  public void namespaceGone(String nspace) {
    cache.namespaceGone(nspace);
  }

  /** Whether the peer holds a registration (for the snapshot). */
  public boolean hasRegistration(Peer peer) {
    Registration reg = registrations.get(peer);
    return reg != null && (reg.all || !reg.codes.isEmpty());
  }

  /** For each kept event, its source and then each target still waiting (for the snapshot). */
  public void forEachCachedProc(Consumer<Proc> action) {
    cache.forEachNamedProc(action);
  }

  private boolean registeredFor(Peer p, Status code) {
    Registration reg = registrations.get(p);
    return reg != null && reg.covers(code);
  }

  private static boolean names(List<Proc> procs, Proc p) {
    for (Proc q : procs) {
      if (q.nspace().equals(p.nspace())
          && (q.rank() == Proc.RANK_WILDCARD || q.rank() == p.rank())) {
        return true;
      }
    }
    return false;
  }

  /** The procs of a {@code pmix.evrange} info: one PROC or an array of them. */
  private static List<Proc> customTargets(List<Info> info) {
    List<Proc> out = new ArrayList<>();
    for (Info i : info) {
      if (!i.key().equals(EVENT_CUSTOM_RANGE)) {
        continue;
      }
      if (i.value() instanceof Proc p) {
        out.add(p);
      } else if (i.value() instanceof DataArray a) {
        for (Value v : a.items()) {
          if (v instanceof Proc p) {
            out.add(p);
          }
        }
      }
    }
    return out;
  }

  private static void sendNotify(Peer p, Status code, Proc source, int range, List<Info> info) {
    Replies.send(p, Tags.NOTIFY, () -> new NotifyPush(code, source, info, OptionalInt.of(range)));
  }
}
