/**
 * Implementation of pmix-server: the progress-thread state (peers, namespaces, ranks, collective
 * trackers, the modex store), the job-data builder, the per-connection Netty handler, the
 * socket-owner check, and tool support (the tool handshake, the rendezvous files, the QUERY
 * answers the server gives from its own knowledge). Not API: anything here may change without
 * notice.
 *
 * <p>Threading rule of this package: every mutable object is owned by the server's progress
 * thread (a single-threaded Netty event loop) and is touched only from it; other threads hand work
 * to it with {@code execute}. Nothing here takes a lock. ({@link Rendezvous} does file I/O and is
 * used by the caller's thread at start and shutdown, not by the progress thread.)
 */
@CheckReturnValue
package io.pmix.server.internal;

import com.google.errorprone.annotations.CheckReturnValue;
