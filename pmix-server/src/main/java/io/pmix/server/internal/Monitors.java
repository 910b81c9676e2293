package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.message.MonitorRequest;
import io.pmix.common.internal.message.QueryReply;
import io.pmix.server.HostModule;
import io.pmix.server.internal.events.EventRouter;
import io.pmix.server.internal.lifecycle.Peer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * MONITOR (docs/commands.md §4) and the heartbeats of tag 1: a heartbeat monitor ({@code
 * pmix.monitor.mbeat}) is the server's own, as libpmix's psensor heartbeat component runs it; any
 * other monitor goes to the host's {@link HostModule#monitor}.
 *
 * <p>A heartbeat monitor watches the requester: every {@code pmix.monitor.btime} seconds it checks
 * whether a heartbeat ({@code PMIx_Heartbeat}: an empty tag-1 message) came in the window; after
 * more than {@code pmix.monitor.bdrop} consecutive empty windows (OpenPMIx master's rule; 5.0.11
 * ignores the drops and trips at the first) it raises the request's event code (SUCCESS:
 * MONITOR_HEARTBEAT_ALERT) with the requester as source, over {@code pmix.range} (default
 * NAMESPACE), to the local clients but the requester, then keeps quiet until a heartbeat comes
 * again. A monitor ends when its requester cancels it or its connection ends. Progress thread
 * only.
 */
final class Monitors {
  /** One heartbeat monitor ({@code pmix_heartbeat_trkr_t}). */
  private static final class Heartbeat {
    final Peer requester;
    final @Nullable String id;
    final Status event;
    final int range;
    final long drops;
    int beats;
    long missed;
    /** Reported as stalled: quiet until it beats again. */
    boolean stopped;
    @Nullable ScheduledFuture<?> timer;

    Heartbeat(Peer requester, @Nullable String id, Status event, int range, long drops) {
      this.requester = requester;
      this.id = id;
      this.event = event;
      this.range = range;
      this.drops = drops;
    }
  }

  private final ProgressExecutor loop;
  private final EventRouter events;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final List<Heartbeat> heartbeats = new ArrayList<>();

  Monitors(ProgressExecutor loop, EventRouter events, HostModule host, HostCalls hostCalls) {
    this.loop = requireNonNull(loop, "loop");
    this.events = requireNonNull(events, "events");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
  }

  /**
   * MONITOR: a heartbeat monitor starts here (status-only reply); a cancel ({@code
   * pmix.monitor.cancel} naming a {@code pmix.monitor.id}, or a null string: all of the
   * requester's) stops the requester's heartbeat monitors it names, and goes to the host when it
   * names none of them (the host's monitors may have that id); anything else is the host's.
   */
  void handle(Peer peer, int tag, MonitorRequest q) {
    String key = q.monitor().key();
    if (key.equals(Keys.MONITOR_HEARTBEAT.name())) {
      Replies.status(peer, tag, startHeartbeat(peer, q));
      return;
    }
    if (key.equals(Keys.MONITOR_CANCEL.name())) {
      if (!(q.monitor().value() instanceof Value.Str str) || str.type() != DataType.STRING) {
        Replies.status(peer, tag, Status.ERR_BAD_PARAM); // C leaves such a cancel alone
        return;
      }
      if (cancel(peer, str.value())) {
        Replies.status(peer, tag, Status.SUCCESS);
        return;
      }
    }
    Proc requester = peer.proc();
    hostCalls.call(
        () -> host.monitor(requester, q.monitor(), q.error(), q.directives()),
        (info, failure) -> {
          if (failure != null) {
            Replies.status(peer, tag, failure);
          } else {
            List<Info> answer = info == null ? List.of() : info;
            Replies.send(peer, tag, () -> new QueryReply(Status.SUCCESS, answer));
          }
        });
  }

  /** The heartbeat monitor's directives; no (or a zero) window is BAD_PARAM, as in C. */
  private Status startHeartbeat(Peer peer, MonitorRequest q) {
    long window = 0;
    long drops = 0;
    int range = DataRange.NAMESPACE.code();
    String id = null;
    try {
      for (Info i : q.directives()) {
        String k = i.key();
        if (k.equals(Keys.MONITOR_ID.name())) {
          if (id == null) { // named twice: the first name counts, as in master
            id = requireNonNull(i.value().asString(), "pmix.monitor.id");
          }
        } else if (k.equals(Keys.MONITOR_HEARTBEAT_TIME.name())) {
          window = i.value().asLong();
        } else if (k.equals(Keys.MONITOR_HEARTBEAT_DROPS.name())) {
          drops = i.value().asLong();
        } else if (k.equals(Keys.RANGE.name())) {
          range = Math.toIntExact(i.value().asLong());
        }
      }
    } catch (RuntimeException e) {
      return Status.ERR_BAD_PARAM; // not an integer where one is needed, an id not a string
    }
    if (window <= 0 || drops < 0) {
      return Status.ERR_BAD_PARAM;
    }
    Status event = q.error().isSuccess() ? Status.MONITOR_HEARTBEAT_ALERT : q.error();
    Heartbeat h = new Heartbeat(peer, id, event, range, drops);
    h.timer = loop.scheduleAtFixedRate(() -> check(h), window, window, TimeUnit.SECONDS);
    heartbeats.add(h);
    return Status.SUCCESS;
  }

  /** The end of one window of {@code h}. */
  private void check(Heartbeat h) {
    if (h.beats == 0 && !h.stopped) {
      h.missed++;
      if (h.missed > h.drops) {
        h.stopped = true;
        events.notifyLocal(h.event, h.requester.proc(), h.range, List.of(), h.requester);
      }
    }
    h.beats = 0;
  }

  /** A tag-1 message of {@code peer}: each of its monitors saw a heartbeat in this window. */
  void beat(Peer peer) {
    for (Heartbeat h : heartbeats) {
      if (h.requester == peer) {
        h.beats++;
        h.missed = 0;
        h.stopped = false;
      }
    }
  }

  /** Stops the peer's monitors named {@code id} (null: all); whether any was stopped. */
  private boolean cancel(Peer peer, @Nullable String id) {
    return heartbeats.removeIf(
        h -> {
          if (h.requester != peer || (id != null && !id.equals(h.id))) {
            return false;
          }
          cancel(h);
          return true;
        });
  }

  /** The peer's connection is gone: its monitors end. */
  void forget(Peer peer) {
    // A loop, not removeIf with a lambda: this runs at every finalize (docs/architecture.md,
    // "First requests").
    for (Iterator<Heartbeat> it = heartbeats.iterator(); it.hasNext(); ) {
      Heartbeat h = it.next();
      if (h.requester == peer) {
        cancel(h);
        it.remove();
      }
    }
  }

  /** Shutdown: every monitor ends. */
  void shutdown() {
    heartbeats.forEach(Monitors::cancel);
    heartbeats.clear();
  }

  /** The number of heartbeat monitors running. */
  int active() {
    return heartbeats.size();
  }

  private static void cancel(Heartbeat h) {
    ScheduledFuture<?> t = h.timer;
    if (t != null) {
      boolean unused = t.cancel(false);
    }
  }
}
