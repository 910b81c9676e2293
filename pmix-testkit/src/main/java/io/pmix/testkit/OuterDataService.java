package io.pmix.testkit;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.dataserver.DataService;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.LookupResult;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * The publish/lookup service of a nested pmixrun ({@link Nested}) without {@code --dataserver}:
 * the outer runtime's own, reached through pmix-java's client (PMIx_Publish, PMIx_Lookup,
 * PMIx_Unpublish of this pmixrun as a process of the outer job), so that what a process of one
 * node publishes, a process of another finds.
 *
 * <ul>
 *   <li>The data and the directives go as the process gave them. A range means the outer one:
 *       {@code PMIX_RANGE_NAMESPACE} is the outer job, i.e. every node of the inner job, {@code
 *       SESSION} the outer session. A {@code PMIX_WAIT} lookup waits in the outer store.
 *   <li>The outer store knows the publisher as this node's pmixrun, not the inner process: its
 *       rules (an unpublish by the publisher only, {@code PMIX_PERSIST_PROC}) apply per node, and
 *       the data of a node goes when its pmixrun ends; the lifetime reports ({@link #procEnded}
 *       and the others) have nothing to remove here. So that a lookup still names the inner
 *       publisher, each published key {@code K} goes with a companion {@code
 *       jrun.publisher.K} holding it ("rank namespace"), looked up and unpublished with it and
 *       never shown.
 *   <li>What the outer runtime answers is the answer: Slurm 22.05 has no data service ({@code
 *       PMIX_ERR_NOT_SUPPORTED}), Open MPI 4.1's mpirun and PRRTE have one.
 * </ul>
 *
 * <p>Thread-safe: the client's calls are. Stages complete on the client's threads.
 */
final class OuterDataService implements DataService {
  /** The prefix of the companion key naming a key's inner publisher. */
  static final String PUBLISHER = "jrun.publisher.";

  @Override
  public CompletionStage<Status> publish(Identity publisher, List<Info> info) {
    List<Info> all = new ArrayList<>(info);
    Proc p = publisher.proc();
    for (Info i : info) {
      if (!i.key().startsWith("pmix.")) { // data, not a directive
        all.add(Info.of(PUBLISHER + i.key(), Value.of(p.rank() + " " + p.nspace())));
      }
    }
    return status(call(() -> PMIx.publishAsync(all.toArray(new Info[0]))));
  }

  @Override
  public CompletionStage<LookupResult> lookup(
      Identity requester, List<String> keys, List<Info> directives) {
    // One outer lookup per key, then each found key's companion alone, without waiting
    // (published in the same call, it is there): Open MPI 4.1's mpirun answers a lookup of
    // several keys with the last one found only (docs/libpmix-facts.md §4, its
    // opal_lkupcbfunc). A waiting lookup of several keys waits for each, i.e. for all.
    Info[] d = directives.toArray(new Info[0]);
    List<CompletableFuture<List<Value.PData>>> each = new ArrayList<>();
    for (String k : keys) {
      each.add(call(() -> PMIx.lookupAsync(List.of(k), d)));
    }
    return CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0]))
        .handle((v, e) -> found(each))
        .thenCompose(f -> f.data().isEmpty()
            ? CompletableFuture.completedFuture(LookupResult.of(f.status()))
            : innerPublishers(f.data()).thenApply(l -> new LookupResult(Status.SUCCESS, l)))
        .exceptionally(e -> LookupResult.of(statusOf(e)));
  }

  /** What the per-key lookups found, or when none found anything the first one's status. */
  private record Found(List<Value.PData> data, Status status) {}

  private static Found found(List<CompletableFuture<List<Value.PData>>> each) {
    List<Value.PData> data = new ArrayList<>();
    Status first = null;
    for (CompletableFuture<List<Value.PData>> f : each) {
      try {
        data.addAll(f.join());
      } catch (CompletionException e) {
        if (first == null) {
          first = statusOf(e);
        }
      }
    }
    return new Found(data, first == null ? Status.ERR_NOT_FOUND : first);
  }

  /** The data found, each item named by its inner publisher where its companion says it. */
  private static CompletableFuture<List<Value.PData>> innerPublishers(List<Value.PData> found) {
    List<CompletableFuture<Value.PData>> named = new ArrayList<>();
    for (Value.PData d : found) {
      named.add(
          call(() -> PMIx.lookupAsync(List.of(PUBLISHER + d.key())))
              .handle((c, e) -> e == null ? named(d, c) : d));
    }
    return CompletableFuture.allOf(named.toArray(new CompletableFuture<?>[0]))
        .thenApply(v -> named.stream().map(CompletableFuture::join).toList());
  }

  private static Value.PData named(Value.PData d, List<Value.PData> companion) {
    for (Value.PData c : companion) {
      if (c.key().equals(PUBLISHER + d.key()) && c.value() instanceof Value.Str s
          && s.value() != null) {
        String[] f = s.value().split(" ", 2);
        try {
          return new Value.PData(Proc.of(f[1], Integer.parseUnsignedInt(f[0])), d.key(), d.value());
        } catch (RuntimeException e) {
          // Not ours (someone else published such a key): the outer publisher stays.
        }
      }
    }
    return d;
  }

  @Override
  public CompletionStage<Status> unpublish(
      Identity requester, List<String> keys, List<Info> directives) {
    List<String> all = new ArrayList<>(keys);
    for (String k : keys) {
      all.add(PUBLISHER + k);
    }
    return status(call(() -> PMIx.unpublishAsync(all, directives.toArray(new Info[0]))));
  }

  @Override
  public CompletionStage<Status> procEnded(Proc proc) {
    return CompletableFuture.completedFuture(Status.SUCCESS);
  }

  @Override
  public CompletionStage<Status> appEnded(String nspace, int appNumber) {
    return CompletableFuture.completedFuture(Status.SUCCESS);
  }

  @Override
  public CompletionStage<Status> namespaceEnded(String nspace) {
    return CompletableFuture.completedFuture(Status.SUCCESS);
  }

  @Override
  public CompletionStage<Status> sessionEnded(int sessionId) {
    return CompletableFuture.completedFuture(Status.SUCCESS);
  }

  /** Nothing of its own: the client is finalized by {@link Nested#leave}. */
  @Override
  public void close() {}

  /** What a client call returns, or its refusal as a failed stage. */
  private static <T> CompletableFuture<T> call(java.util.function.Supplier<CompletableFuture<T>> c) {
    try {
      return c.get();
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static CompletionStage<Status> status(CompletableFuture<Void> f) {
    return f.handle((v, e) -> e == null ? Status.SUCCESS : statusOf(e));
  }

  private static Status statusOf(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof PmixException p ? p.status() : Status.ERROR;
  }
}
