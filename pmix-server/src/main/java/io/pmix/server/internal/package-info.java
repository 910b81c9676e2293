/**
 * Implementation of pmix-server. {@link io.pmix.server.internal.ServerCore} builds the server's
 * parts, decodes each request with its record of pmix-common's message layer (whose records also
 * make every reply and push after the handshake, sent by {@link io.pmix.server.internal.Replies}:
 * the server and the connectors share one encoder and decoder per message) and dispatches it to
 * the part that owns the command: {@code lifecycle} (registry and every rule of
 * docs/lifecycle.md), {@link io.pmix.server.internal.Admission} and {@link
 * io.pmix.server.internal.ToolSupport} (who may connect), {@code collective} (fences,
 * connect/disconnect), {@code modex} (commit, GET, direct modex), {@code events} (events and I/O
 * forwarding), {@link io.pmix.server.internal.HostForwarding} and {@link
 * io.pmix.server.internal.QueryResponder} (requests answered by or with the host), {@link
 * io.pmix.server.internal.JobInfoResponder} (REQ). Also here: the job-data builder, the
 * transports ({@link io.pmix.server.internal.ServerTransport}: the server's own on epoll, {@code
 * net}, or Netty's; each connection a {@link io.pmix.server.internal.ServerConnection} and its
 * {@link io.pmix.server.internal.PeerSession}), the socket-owner check and the rendezvous files.
 * Not API:
 * anything here may change without notice; members are public only because the parts live in
 * sibling packages.
 *
 * <p>Threading rule of this package and its subpackages: every mutable object is owned by the
 * server's progress thread ({@link io.pmix.server.internal.ProgressExecutor}: the server's own
 * {@code net.ServerLoop}, or a single-threaded Netty event loop) and is touched only from it;
 * other threads hand work to it with {@code execute}. Nothing here takes a lock, and host code
 * runs only through {@link io.pmix.server.internal.HostCalls}, on the host's executor. ({@link
 * Rendezvous} does file I/O and is used by the caller's thread at start and shutdown, not by the
 * progress thread.)
 */
@CheckReturnValue
package io.pmix.server.internal;

import com.google.errorprone.annotations.CheckReturnValue;
