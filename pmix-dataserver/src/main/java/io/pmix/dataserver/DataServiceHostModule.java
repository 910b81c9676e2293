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
    return service.publish(who, info).thenCompose(DataServiceHostModule::voidOrFailure);
  }

  @Override
  public CompletionStage<List<Value.PData>> lookup(Proc proc, List<String> keys, List<Info> info) {
    Identity who;
    try {
      who = identities.resolve(proc, info);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    return service
        .lookup(who, keys, info)
        .thenCompose(
            r ->
                r.found()
                    ? CompletableFuture.completedFuture(r.data())
                    : CompletableFuture.failedFuture(
                        new PmixException(r.status(), "lookup of " + keys + " by " + proc)));
  }

  @Override
  public CompletionStage<Void> unpublish(Proc proc, List<String> keys, List<Info> info) {
    Identity who;
    try {
      who = identities.resolve(proc, info);
    } catch (PmixException e) {
      return CompletableFuture.failedFuture(e);
    }
    return service.unpublish(who, keys, info).thenCompose(DataServiceHostModule::voidOrFailure);
  }

  private static CompletionStage<Void> voidOrFailure(Status s) {
    if (s.equals(Status.SUCCESS)) {
      return CompletableFuture.completedFuture(null);
    }
    return CompletableFuture.failedFuture(new PmixException(s, "the data store refused"));
  }
}
