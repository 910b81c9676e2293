/**
 * The modex: committed data by scope, GETNB, the host's direct modex in both directions
 * (docs/commands.md §3.3, §3.5, §7.2), and the requests that wait for data. Internal: part of
 * the server core, progress thread only (the threading rule of {@code io.pmix.server.internal}).
 */
@CheckReturnValue
package io.pmix.server.internal.modex;

import com.google.errorprone.annotations.CheckReturnValue;
