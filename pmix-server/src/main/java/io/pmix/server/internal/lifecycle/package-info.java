/**
 * Who is connected and what happens to them: the peer slot array, namespaces and ranks ({@link
 * io.pmix.server.internal.lifecycle.Registry}) and every server-side rule of docs/lifecycle.md
 * ({@link io.pmix.server.internal.lifecycle.PeerLifecycle}), which alone writes the lifecycle
 * counters. Internal: part of the server core, progress thread only (the threading rule of {@code
 * io.pmix.server.internal}).
 */
@CheckReturnValue
package io.pmix.server.internal.lifecycle;

import com.google.errorprone.annotations.CheckReturnValue;
