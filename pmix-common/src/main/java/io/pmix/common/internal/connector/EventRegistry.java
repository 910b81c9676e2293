package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.EventHandler;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.message.DeregEventsRequest;
import io.pmix.common.internal.message.NotifyPush;
import io.pmix.common.internal.message.NotifyRequest;
import io.pmix.common.internal.message.RegEventsRequest;
import io.pmix.common.internal.message.StatusReply;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The event handlers of a cycle and what the server knows of them: a registration is kept here
 * before the server answers (it may push cached events right away), the server hears of a code
 * only when nobody listened to it before (and of a directive-carrying registration always), and
 * of codes nobody listens to any more; events, whether pushed by the server, raised by this
 * process or the loss of the connection, go to every matching handler on the callback thread, the
 * code-specific ones before the default ones (docs/commands.md §3.8).
 *
 * <p>Confined to the progress thread.
 */
final class EventRegistry implements SessionPart {
  private record Registration(long id, Set<Integer> codes, EventHandler handler) {}

  private final LibraryThreads threads;
  private final Connection connection;

  @Bookkept("session.eventRegistrations")
  private final Map<Long, Registration> registrations = new LinkedHashMap<>();

  /** How many registrations listen to each code the server was told of. */
  @Bookkept("session.serverEventCodes")
  private final Map<Integer, Integer> serverCodes = new HashMap<>();

  /** How many default (every-code) registrations there are; counted in serverEventCodes. */
  private int serverDefaultHandlers;

  private long nextRegistrationId = 1;

  EventRegistry(LibraryThreads threads, Connection connection) {
    this.threads = requireNonNull(threads, "threads");
    this.connection = requireNonNull(connection, "connection");
  }

  /** Registers a handler for {@code codes} (every event when empty); completes with its id. */
  CompletableFuture<Long> register(
      Collection<Status> codes, EventHandler handler, List<Info> directives) {
    requireNonNull(codes, "codes");
    requireNonNull(handler, "handler");
    Set<Integer> cs = new LinkedHashSet<>();
    for (Status s : codes) {
      cs.add(s.code());
    }
    List<Info> ds = List.copyOf(directives);
    return threads.call(
        f -> {
          long id = nextRegistrationId++;
          Registration reg = new Registration(id, Set.copyOf(cs), handler);
          boolean news = cs.isEmpty() && serverDefaultHandlers == 0;
          for (int c : cs) {
            news |= !serverCodes.containsKey(c);
          }
          // Registered before the server answers: it may push cached events right away.
          registrations.put(id, reg);
          count(reg, +1);
          if (connection.isStandalone() || (!news && ds.isEmpty())) {
            threads.complete(f, id);
            return;
          }
          List<Status> list = new ArrayList<>();
          for (int c : cs) {
            list.add(Status.of(c));
          }
          connection.send(
              new RegEventsRequest(list, ds),
              new ReplyHandler() {
                @Override
                public void onReply(PmixReader r) {
                  Status s = StatusReply.decode(r).status();
                  if (s.isSuccess()) {
                    threads.complete(f, id);
                  } else {
                    unregister(id, false);
                    threads.fail(f, new PmixException(s, "event registration"));
                  }
                }

                @Override
                public void onFailure(PmixException e) {
                  unregister(id, false);
                  threads.fail(f, e);
                }
              });
        });
  }

  private void count(Registration reg, int delta) {
    if (reg.codes().isEmpty()) {
      serverDefaultHandlers += delta;
      return;
    }
    for (int c : reg.codes()) {
      int n = serverCodes.getOrDefault(c, 0) + delta;
      if (n <= 0) {
        serverCodes.remove(c);
      } else {
        serverCodes.put(c, n);
      }
    }
  }

  /** Removes a registration; tells the server about codes nobody listens to any more. */
  CompletableFuture<Void> deregister(long id) {
    return threads.call(
        f -> {
          if (!registrations.containsKey(id)) {
            threads.fail(f, new PmixException(Status.ERR_NOT_FOUND, "no event handler " + id));
            return;
          }
          unregister(id, true);
          threads.complete(f, null);
        });
  }

  private void unregister(long id, boolean tellServer) {
    Registration reg = registrations.remove(id);
    if (reg == null) {
      return;
    }
    count(reg, -1);
    if (!tellServer || connection.isStandalone()) {
      return;
    }
    List<Status> gone = new ArrayList<>();
    if (reg.codes().isEmpty()) {
      if (serverDefaultHandlers == 0) {
        gone.add(DeregEventsRequest.DEFAULT_HANDLER);
      }
    } else {
      for (int c : reg.codes()) {
        if (!serverCodes.containsKey(c)) {
          gone.add(Status.of(c));
        }
      }
    }
    if (!gone.isEmpty()) {
      connection.sendOneWay(new DeregEventsRequest(gone));
    }
  }

  /**
   * Raises an event: to the server unless the range is this process only, and to this process's
   * own matching handlers (the server does not echo it back).
   */
  CompletableFuture<Void> notifyEvent(Status code, DataRange range, List<Info> info) {
    requireNonNull(code, "code");
    requireNonNull(range, "range");
    List<Info> is = List.copyOf(info);
    return threads.call(
        f -> {
          Event local = new Event(code, connection.me(), is, Optional.of(range));
          if (range == DataRange.PROC_LOCAL || connection.isStandalone()) {
            deliver(local);
            threads.complete(f, null);
            return;
          }
          connection.send(
              new NotifyRequest(code, range, is),
              new ReplyHandler() {
                @Override
                public void onReply(PmixReader r) {
                  Status s = StatusReply.decode(r).status();
                  if (!s.isSuccess()) {
                    threads.fail(f, new PmixException(s, "notify"));
                    return;
                  }
                  deliver(local);
                  threads.complete(f, null);
                }

                @Override
                public void onFailure(PmixException e) {
                  threads.fail(f, e);
                }
              });
        });
  }

  /** The server's push on tag 0, its COMMAND unit read already. */
  void onNotification(NotifyPush n) {
    Optional<DataRange> range = Optional.empty();
    if (n.range().isPresent()) {
      range = DataRange.fromCode(n.range().getAsInt());
    }
    deliver(new Event(n.code(), n.source(), n.info(), range));
  }

  /** The connection to the server was lost while the cycle was ready. */
  void onConnectionLost(Proc self) {
    deliver(new Event(Status.ERR_LOST_CONNECTION, self, List.of(), Optional.empty()));
  }

  /** Hands an event to every matching handler, on the callback thread. */
  void deliver(Event e) {
    List<Runnable> specific = new ArrayList<>();
    List<Runnable> fallback = new ArrayList<>();
    for (Registration reg : registrations.values()) {
      EventHandler h = reg.handler();
      if (reg.codes().isEmpty()) {
        fallback.add(() -> h.onEvent(e));
      } else if (reg.codes().contains(e.status().code())) {
        specific.add(() -> h.onEvent(e));
      }
    }
    specific.addAll(fallback);
    threads.deliver("event handler", specific);
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("session.eventRegistrations", (long) registrations.size());
    m.put("session.serverEventCodes", (long) serverCodes.size() + serverDefaultHandlers);
    return m;
  }

  @Override
  public void release() {
    registrations.clear();
    serverCodes.clear();
    serverDefaultHandlers = 0;
  }
}
