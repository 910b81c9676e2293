/**
 * The libpmix 4.2.2 shared-memory stores (ds21, ds12) the server writes for its clients
 * (docs/gds.md §10): which exist, what is written when, their removal, and the removal of dead
 * servers' stores. The layouts are pmix-common's ({@code io.pmix.common.internal.gds}). Internal:
 * part of the server core, progress thread only.
 */
@CheckReturnValue
package io.pmix.server.internal.gds;

import com.google.errorprone.annotations.CheckReturnValue;
