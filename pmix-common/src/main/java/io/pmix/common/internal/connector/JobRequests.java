package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.internal.message.ConnectNbReply;
import io.pmix.common.internal.message.ConnectNbRequest;
import io.pmix.common.internal.message.DisconnectNbRequest;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.common.internal.message.SpawnNbReply;
import io.pmix.common.internal.message.SpawnNbRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The requests that bring other jobs into a cycle: spawn (the new job's data from the reply goes
 * to the store), connect (the other namespaces' job data likewise) and disconnect (their data
 * dropped first). Holds nothing of its own: what the replies carry goes to the {@link
 * GetResolver}'s store.
 */
final class JobRequests implements SessionPart {
  private final Connection connection;
  private final GetResolver gets;
  private final Messages messages;

  JobRequests(Connection connection, GetResolver gets, Messages messages) {
    this.connection = requireNonNull(connection, "connection");
    this.gets = requireNonNull(gets, "gets");
    this.messages = requireNonNull(messages, "messages");
  }

  /**
   * Asks the server (and its host) to start a job; completes with its namespace. The apps are
   * first completed as {@code PMIx_Spawn_nb} of 4.2.2 completes them (see {@link #fillApp}).
   *
   * @throws IllegalArgumentException if there is no app, or an app has no command
   */
  CompletableFuture<String> spawn(List<Value.App> apps, List<Info> jobInfo) {
    if (apps.isEmpty()) {
      throw new IllegalArgumentException("nothing to spawn");
    }
    String cwd = System.getProperty("user.dir");
    List<Value.App> filled = new ArrayList<>();
    for (Value.App a : apps) {
      filled.add(fillApp(requireNonNull(a, "app"), cwd));
    }
    List<Info> ji = List.copyOf(jobInfo);
    return connection.request(
        () -> new SpawnNbRequest(ji, filled),
        r -> {
          SpawnNbReply reply = SpawnNbReply.decode(r);
          if (!reply.status().isSuccess()) {
            throw new PmixException(reply.status(), "spawn");
          }
          String nspace = reply.nspace();
          if (nspace == null || nspace.isEmpty()) {
            throw new PmixException(Status.ERR_BAD_PARAM, "spawn reply without a namespace");
          }
          gets.store().ingestJobData(nspace, messages.reader(reply.jobData()));
          return nspace;
        });
  }

  /**
   * What the 4.2.2 client does to an app before packing it: a missing working directory becomes
   * {@code cwd}; an empty argv becomes the basename of the command; an argv whose first element's
   * basename differs from the command's gets the command's basename prepended. (The C client also
   * expands {@code pmix.setup.env} through its programming-model plugins; that is not done here.)
   *
   * @throws IllegalArgumentException if the app has no command (C refuses an app with neither
   *     command nor argv; one with argv only crashes it)
   */
  static Value.App fillApp(Value.App a, String cwd) {
    String cmd = a.cmd();
    if (cmd == null || cmd.isEmpty()) {
      throw new IllegalArgumentException("an app needs a command");
    }
    String base = basename(cmd);
    List<String> argv;
    if (a.argv().isEmpty()) {
      argv = List.of(base);
    } else if (!basename(a.argv().get(0)).equals(base)) {
      List<String> all = new ArrayList<>(a.argv().size() + 1);
      all.add(base);
      all.addAll(a.argv());
      argv = List.copyOf(all);
    } else {
      argv = a.argv();
    }
    return new Value.App(cmd, argv, a.env(), a.cwd() == null ? cwd : a.cwd(), a.maxprocs(), a.info());
  }

  /** The last path element, trailing slashes ignored, as {@code pmix_basename} gives it. */
  static String basename(String path) {
    String p = path;
    while (p.length() > 1 && p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    int i = p.lastIndexOf('/');
    return i < 0 || p.length() == 1 ? p : p.substring(i + 1);
  }

  /**
   * CONNECTNB over {@code procs}: completes once every participant has connected. The reply's job
   * data of the other namespaces goes to the store, read even when the status is an error, as C
   * does, and the status decides.
   *
   * @throws IllegalArgumentException if {@code procs} is empty (C: PMIX_ERR_BAD_PARAM)
   */
  CompletableFuture<Void> connect(List<Proc> procs, List<Info> directives) {
    List<Proc> ps = List.copyOf(procs);
    List<Info> ds = List.copyOf(directives);
    if (ps.isEmpty()) {
      throw new IllegalArgumentException("connect needs at least one proc");
    }
    return connection.request(
        () -> new ConnectNbRequest(ps, ds),
        r -> {
          storeJobs(ConnectNbReply.decode(r), "connect");
          return null;
        });
  }

  /**
   * DISCONNECTNB over {@code procs}. As the 4.2.2 client does before it sends anything, the job
   * and process data held for every other namespace named in {@code procs} is dropped.
   *
   * @throws IllegalArgumentException if {@code procs} is empty (C: PMIX_ERR_BAD_PARAM)
   */
  CompletableFuture<Void> disconnect(List<Proc> procs, List<Info> directives) {
    List<Proc> ps = List.copyOf(procs);
    List<Info> ds = List.copyOf(directives);
    if (ps.isEmpty()) {
      throw new IllegalArgumentException("disconnect needs at least one proc");
    }
    return connection.request(
        () -> {
          for (Proc p : ps) {
            gets.store().forgetNamespace(p.nspace());
          }
          return new DisconnectNbRequest(ps, ds);
        },
        r -> {
          storeJobs(ConnectNbReply.decode(r), "disconnect");
          return null;
        });
  }

  private void storeJobs(ConnectNbReply reply, String what) {
    DataStore store = gets.store();
    for (ReqReply j : reply.jobs()) {
      store.ingestJobData(requireNonNull(j.nspace()), messages.reader(j.jobData()));
    }
    if (!reply.status().isSuccess()) {
      throw new PmixException(reply.status(), what);
    }
  }

  /** Nothing: the replies' data is the store's. */
  @Override
  public Map<String, Long> bookkeeping() {
    return Map.of();
  }

  @Override
  public void release() {}
}
