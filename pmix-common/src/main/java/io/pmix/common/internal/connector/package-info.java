/**
 * The connecting side of PMIx, shared by the client and the tool: everything one init/finalize
 * cycle of a connector owns except what only one role does. {@link
 * io.pmix.common.internal.connector.ConnectorSession} puts a cycle together from its {@link
 * io.pmix.common.internal.connector.SessionPart parts}, one rule each: the progress and callback
 * threads ({@link io.pmix.common.internal.connector.LibraryThreads}), the connection with its
 * handshake and retries, the replies awaited by tag, the local store and the gets resolved
 * against it, the event registry, the I/O-forwarding sinks and the job requests (spawn, connect,
 * disconnect); the session's bookkeeping and teardown are the parts' put together. The requests
 * and replies themselves are the records of {@code io.pmix.common.internal.message}; {@link
 * io.pmix.common.internal.connector.LibraryHolder} is the reference-counted, init-once holder
 * each role keeps its process-wide state in, so that a shared test contract can check that the
 * last finalize leaves nothing behind (docs/lifecycle.md §6.2.8 and §6.2.9).
 *
 * <p>Roles parameterise it: the thread names and the API name in messages come from a {@link
 * io.pmix.common.internal.connector.Role}, and the kind of connection (client, tool, launcher)
 * from the {@link io.pmix.common.internal.wire.ConnectRequest} the role builds.
 *
 * <p>Internal API: used by pmix-client and pmix-tool, not by applications; it may change without
 * notice.
 */
@CheckReturnValue
package io.pmix.common.internal.connector;

import com.google.errorprone.annotations.CheckReturnValue;
