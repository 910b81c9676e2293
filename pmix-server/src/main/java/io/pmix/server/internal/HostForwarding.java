package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.message.AbortRequest;
import io.pmix.common.internal.message.LogRequest;
import io.pmix.common.internal.message.LookupNbReply;
import io.pmix.common.internal.message.LookupNbRequest;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.PublishNbRequest;
import io.pmix.common.internal.message.SpawnNbReply;
import io.pmix.common.internal.message.SpawnNbRequest;
import io.pmix.common.internal.message.UnpublishNbRequest;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.Registry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The requests this server passes to its host and whose answer it relays: ABORT
 * (docs/commands.md §3.2), PUBLISHNB, LOOKUPNB and UNPUBLISHNB (§3.7), LOG (§3.10) and SPAWNNB
 * (§4). The server adds what only it knows (the requester, its authenticated identity, the
 * spawned job's data) and keeps no state. Progress thread only; the host runs through {@link
 * HostCalls}.
 */
final class HostForwarding {
  private final Registry registry;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final String hostname;
  private final boolean dataCallsHere;

  HostForwarding(
      Registry registry, HostModule host, HostCalls hostCalls, ServerOptions options) {
    this.registry = requireNonNull(registry, "registry");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.hostname = options.hostname();
    this.dataCallsHere = host.dataCallsReturnAtOnce();
  }

  /** Publish, lookup and unpublish: on this thread when the host says they return at once. */
  private <T> void dataCall(Supplier<CompletionStage<T>> upcall, HostCalls.Done<T> done) {
    hostCalls.call(upcall, done, dataCallsHere);
  }

  /** ABORT: status, message, the procs to abort (none: the caller's job). */
  void handleAbort(Peer peer, int tag, AbortRequest q) {
    Object hostObject = peer.info().hostObject();
    hostCalls.call(
        () -> host.abort(peer.proc(), hostObject, q.status(), q.message(), q.procs()),
        (v, failure) -> Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure));
  }

  /** PUBLISHNB: the infos to publish; the claimed uid is ignored. */
  void handlePublish(Peer peer, int tag, PublishNbRequest q) {
    List<Info> hostInfo = withAuthenticatedIdentity(peer, q.info());
    dataCall(
        new Supplier<CompletionStage<Void>>() {
          @Override
          public CompletionStage<Void> get() {
            return host.publish(peer.proc(), hostInfo);
          }
        },
        new StatusAnswer<>(peer, tag));
  }

  /** UNPUBLISHNB: the keys and the directives; the claimed uid is ignored. */
  void handleUnpublish(Peer peer, int tag, UnpublishNbRequest q) {
    List<Info> hostInfo = withAuthenticatedIdentity(peer, q.directives());
    List<String> hostKeys = q.keys();
    dataCall(
        new Supplier<CompletionStage<Void>>() {
          @Override
          public CompletionStage<Void> get() {
            return host.unpublish(peer.proc(), hostKeys, hostInfo);
          }
        },
        new StatusAnswer<>(peer, tag));
  }

  /** LOOKUPNB: the keys and the directives; the claimed uid is ignored. */
  void handleLookup(Peer peer, int tag, LookupNbRequest q) {
    List<Info> hostInfo = withAuthenticatedIdentity(peer, q.directives());
    List<String> hostKeys = q.keys();
    dataCall(
        new Supplier<CompletionStage<List<Value.PData>>>() {
          @Override
          public CompletionStage<List<Value.PData>> get() {
            return host.lookup(peer.proc(), hostKeys, hostInfo);
          }
        },
        new HostCalls.Done<List<Value.PData>>() {
          @Override
          public void done(@Nullable List<Value.PData> data, @Nullable Status failure) {
            if (failure != null) {
              Replies.status(peer, tag, failure);
            } else if (data == null || data.isEmpty()) {
              Replies.status(peer, tag, Status.ERR_NOT_FOUND);
            } else {
              Replies.send(peer, tag, new Found(data));
            }
          }
        });
  }

  // Classes, not lambdas, on the publish/lookup/unpublish paths: a lambda's first call costs a
  // fresh server 0.1-0.2 ms, and a job makes each of these calls only a few times
  // (docs/architecture.md, "First requests").

  /** Answers a request with SUCCESS or the host's failure. */
  private static final class StatusAnswer<T> implements HostCalls.Done<T> {
    private final Peer peer;
    private final int tag;

    StatusAnswer(Peer peer, int tag) {
      this.peer = peer;
      this.tag = tag;
    }

    @Override
    public void done(@Nullable T value, @Nullable Status failure) {
      Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure);
    }
  }

  /** A successful lookup's reply, made when sent (a null among the host's data fails there). */
  private static final class Found implements Supplier<Message> {
    private final List<Value.PData> data;

    Found(List<Value.PData> data) {
      this.data = data;
    }

    @Override
    public Message get() {
      return new LookupNbReply(Status.SUCCESS, data);
    }
  }

  /**
   * The client's directives for a publish, lookup or unpublish, with the uid and gid this server
   * authenticated at connect appended as {@code pmix.euid}/{@code pmix.egid}. The uid inside the
   * message is only what the client claims (4.2.2 forwards that one), and a client could also put
   * its own {@code pmix.euid} among the directives; both are dropped so the host sees one identity,
   * the authenticated one, which is what the data-server rules of ownership and access rely on.
   */
  private static List<Info> withAuthenticatedIdentity(Peer peer, List<Info> directives) {
    List<Info> info = new ArrayList<>(directives.size() + 2);
    for (Info i : directives) {
      if (!i.key().equals(Keys.USERID.name()) && !i.key().equals(Keys.GRPID.name())) {
        info.add(i);
      }
    }
    info.add(Info.of(Keys.USERID, Value.uint32(Integer.toUnsignedLong(peer.info().uid()))));
    info.add(Info.of(Keys.GRPID, Value.uint32(Integer.toUnsignedLong(peer.info().gid()))));
    return List.copyOf(info);
  }

  /** LOG: the data and the directives (the timestamp is not passed on); the source is appended. */
  void handleLog(Peer peer, int tag, LogRequest q) {
    List<Info> dirs = new ArrayList<>(q.directives());
    dirs.add(Info.of("pmix.log.source", peer.proc()));
    List<Info> d1 = q.data();
    List<Info> d2 = List.copyOf(dirs);
    hostCalls.call(
        () -> host.log(peer.proc(), d1, d2),
        (x, failure) -> Replies.status(peer, tag, failure == null ? Status.SUCCESS : failure));
  }

  /** major.minor.release as C reads them (strtoul, skipping one character after each). */
  static int[] parseVersion(String version) {
    int[] out = new int[3];
    int i = 0;
    for (int part = 0; part < 3 && i < version.length(); part++) {
      int start = i;
      while (i < version.length() && Character.isDigit(version.charAt(i))) {
        i++;
      }
      if (i == start) {
        break;
      }
      try {
        out[part] = Integer.parseInt(version.substring(start, i));
      } catch (NumberFormatException e) {
        break;
      }
      i++;
    }
    return out;
  }

  /**
   * SPAWNNB: job directives and apps go to the host; the {@link SpawnNbReply} carries the new
   * namespace and, when this server holds its registration, its job data (as a REQ reply would).
   */
  void handleSpawn(Peer peer, int tag, SpawnNbRequest q) {
    List<Info> ji = q.jobInfo();
    List<Value.App> ap = q.apps();
    hostCalls.call(
        () -> host.spawn(peer.proc(), ji, ap),
        (nspace, failure) -> {
          if (failure != null || nspace == null) {
            Replies.status(peer, tag, failure != null ? failure : Status.ERROR);
            return;
          }
          Namespace ns = registry.namespace(nspace);
          JobData jd = ns != null && ns.registered() ? ns.jobData(hostname) : null;
          Replies.send(
              peer,
              tag,
              () ->
                  new SpawnNbReply(
                      Status.SUCCESS,
                      nspace,
                      jd != null ? jd.replyBody(peer.format()) : new byte[0]));
        });
  }
}
