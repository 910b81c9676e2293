/**
 * Fences, connect/disconnect and group construct/destruct (docs/commands.md §3.4, §4): one
 * tracker per collective, counted by rank, the fence data exchanged with the host (docs/commands.md
 * §7.1) and the constructed groups. Internal: part of the server core, progress thread only (the threading rule of {@code io.pmix.server.internal}).
 */
@CheckReturnValue
package io.pmix.server.internal.collective;

import com.google.errorprone.annotations.CheckReturnValue;
