/**
 * pmix-dataserver: the PMIx publish/lookup datastore (what {@code MPI_Publish_name} and {@code
 * MPI_Lookup_name} reach through {@code PMIx_Publish} and {@code PMIx_Lookup}), with the rules of
 * the spec's "Publishing and looking up data": ranges as process sets, access permissions,
 * ownership by user, duplicates, {@code prte.pub.replace}, persistence, the idle timeout and the
 * per-uid cap.
 *
 * <ul>
 *   <li>{@link io.pmix.dataserver.DataStore}: the rules as plain single-threaded logic on an
 *       injectable clock ({@link io.pmix.dataserver.DataStoreOptions}); callers are described by
 *       {@link io.pmix.dataserver.Identity} and lookups answer with {@link
 *       io.pmix.dataserver.LookupResult}.
 *   <li>{@link io.pmix.dataserver.DataService}: the store reached asynchronously, embedded ({@link
 *       io.pmix.dataserver.LocalDataService}) or shared across the network ({@link
 *       io.pmix.dataserver.DataServer} and its {@link io.pmix.dataserver.DataServerClient}).
 *   <li>{@link io.pmix.dataserver.DataServiceHostModule}: a PMIx server's publish, lookup and
 *       unpublish upcalls served from a data service, callers identified by an {@link
 *       io.pmix.dataserver.IdentityResolver}.
 * </ul>
 */
@CheckReturnValue
package io.pmix.dataserver;

import com.google.errorprone.annotations.CheckReturnValue;
