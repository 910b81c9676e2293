package io.pmix.dataserver;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.server.HostModule;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Serves a {@link io.pmix.server.PMIxServer}'s publish, lookup and unpublish upcalls from a {@link
 * DataService}: the embedded store ({@link LocalDataService}, pmixrun's default) or a shared one
 * ({@link DataServerClient}). Every other upcall keeps {@link HostModule}'s default; a host with
 * upcalls of its own delegates these three to an instance of this class.
 *
 * <p>The store's statuses reach the client as they are: a stage fails with a {@link PmixException}
 * carrying any status but success. One limit of the upcall's shape: a lookup that found some of
 * its keys ({@code PMIX_ERR_PARTIAL_SUCCESS}) is answered with the data found, since the upcall
 * returns either data or a failure.
 *
 * <p>The host reports lifetimes to the service itself (its {@code procEnded}, {@code appEnded},
 * {@code namespaceEnded}, {@code sessionEnded}), and owns the service: this adapter borrows it and
 * closes nothing. Thread-safe.
 */
public final class DataServiceHostModule implements HostModule {
  private final DataService service;
  private final IdentityResolver identities;

  /** An adapter serving from {@code service}, identifying callers with {@code identities}. */
  public DataServiceHostModule(DataService service, IdentityResolver identities) {
    this.service = requireNonNull(service, "service");
    this.identities = requireNonNull(identities, "identities");
  }

  /** The service the upcalls are served from. */
  public DataService service() {
    return service;
  }

  @Override
  public CompletionStage<Void> publish(Proc proc, List<Info> info) {
    Identity who;
    try {
      who = identities.resolve(proc, info);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    return service.publish(who, info).thenCompose(VoidOrFailure.INSTANCE);
  }

  @Override
  public CompletionStage<List<Value.PData>> lookup(Proc proc, List<String> keys, List<Info> info) {
    Identity who;
    try {
      who = identities.resolve(proc, info);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    return service.lookup(who, keys, info).thenCompose(new DataOrFailure(proc, keys));
  }

  @Override
  public CompletionStage<Void> unpublish(Proc proc, List<String> keys, List<Info> info) {
    Identity who;
    try {
      who = identities.resolve(proc, info);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    return service.unpublish(who, keys, info).thenCompose(VoidOrFailure.INSTANCE);
  }

  // Classes, not lambdas: a lambda's first call costs a fresh JVM 0.1-0.2 ms, and a job
  // publishes, looks up and unpublishes only a few times (docs/architecture.md, "First requests").

  /** A store's status as the host's answer: SUCCESS, or a failure carrying it. */
  private static final class VoidOrFailure implements Function<Status, CompletionStage<Void>> {
    static final VoidOrFailure INSTANCE = new VoidOrFailure();

    @Override
    public CompletionStage<Void> apply(Status s) {
      if (s.equals(Status.SUCCESS)) {
        return CompletableFuture.completedFuture(null);
      }
      return CompletableFuture.failedFuture(new PmixException(s, "the data store refused"));
    }
  }

  /** A lookup's result as the host's answer: the data found, or a failure carrying the status. */
  private static final class DataOrFailure
      implements Function<LookupResult, CompletionStage<List<Value.PData>>> {
    private final Proc proc;
    private final List<String> keys;

    DataOrFailure(Proc proc, List<String> keys) {
      this.proc = proc;
      this.keys = keys;
    }

    @Override
    public CompletionStage<List<Value.PData>> apply(LookupResult r) {
      return r.found()
          ? CompletableFuture.completedFuture(r.data())
          : CompletableFuture.failedFuture(
              new PmixException(r.status(), "lookup of " + keys + " by " + proc));
    }
  }
}
