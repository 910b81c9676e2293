/**
 * Events on this node (registrations, NOTIFY, local delivery, the cache for late targets) and the
 * I/O-forwarding requests of connected peers. Internal: part of the server core, progress thread
 * only (the threading rule of {@code io.pmix.server.internal}).
 */
@CheckReturnValue
package io.pmix.server.internal.events;

import com.google.errorprone.annotations.CheckReturnValue;
