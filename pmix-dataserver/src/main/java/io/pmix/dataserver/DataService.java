package io.pmix.dataserver;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A {@link DataStore} reached asynchronously: embedded in the process ({@link LocalDataService}) or
 * across the network ({@link DataServerClient}). This is what a PMIx server's publish, lookup and
 * unpublish upcalls are served from ({@link DataServiceHostModule}), and where its host reports the
 * lifetimes that end.
 *
 * <p>Every operation completes its stage with a status, never exceptionally: what the store or
 * the transport decided is a {@link Status} ({@code PMIX_ERR_UNREACH} or {@code
 * PMIX_ERR_LOST_CONNECTION} when a remote store cannot be reached, {@code PMIX_ERR_TIMEOUT} when it
 * does not answer in time, {@code PMIX_ERR_NOT_AVAILABLE} once the service is closed). Caller
 * mistakes (nulls) throw at once. The statuses and rules are the store's; see {@link DataStore}.
 *
 * <p>Thread-safe: any thread may call; stages complete on the service's own thread, so a caller
 * must not block in a dependent action. Cancelling a lookup's stage (its {@code toCompletableFuture}
 * ) cancels the lookup if it is still waiting.
 */
public interface DataService extends AutoCloseable {
  /** {@link DataStore#publish}. */
  CompletionStage<Status> publish(Identity publisher, List<Info> info);

  /** {@link DataStore#lookup}; the stage completes when the store answers, maybe much later. */
  CompletionStage<LookupResult> lookup(Identity requester, List<String> keys, List<Info> directives);

  /** {@link DataStore#unpublish}. */
  CompletionStage<Status> unpublish(Identity requester, List<String> keys, List<Info> directives);

  /** {@link DataStore#procEnded}. */
  CompletionStage<Status> procEnded(Proc proc);

  /** {@link DataStore#appEnded}. */
  CompletionStage<Status> appEnded(String nspace, int appNumber);

  /** {@link DataStore#namespaceEnded}. */
  CompletionStage<Status> namespaceEnded(String nspace);

  /** {@link DataStore#sessionEnded}. */
  CompletionStage<Status> sessionEnded(int sessionId);

  /**
   * Releases what the service owns and completes everything still pending with {@code
   * PMIX_ERR_NOT_AVAILABLE}; later calls complete with that status at once. Idempotent; returns
   * once the service's thread has stopped.
   */
  @Override
  void close();
}
