/**
 * The implementation behind {@link io.pmix.tool.PMIxTool}: the process-wide holder, the per-cycle
 * tool state (over pmix-common's shared connector machinery), the reading of init directives and
 * environment, and the search for a server through rendezvous files.
 *
 * <p>Internal API: public only so tests can reach it; not for applications, and it may change
 * without notice.
 */
@CheckReturnValue
package io.pmix.tool.internal;

import com.google.errorprone.annotations.CheckReturnValue;
