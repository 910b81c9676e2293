/**
 * The server's own transport's system side: {@link io.pmix.server.internal.net.Epoll} (the
 * native calls, in pmix-java's libpmixjava) and {@link io.pmix.server.internal.net.ServerLoop}
 * (the progress thread on epoll: tasks, timers, descriptors' readiness). What runs on it is in
 * the parent package ({@code NativeTransport}). Not API.
 */
@CheckReturnValue
package io.pmix.server.internal.net;

import com.google.errorprone.annotations.CheckReturnValue;
