/**
 * The implementation behind {@link io.pmix.client.PMIx}: the process-wide holder, the per-cycle
 * client state with its progress thread, the connection to the server, the request encoders and
 * reply decoders, and the local job-data cache that answers most gets without a message.
 *
 * <p>Internal API: public only so tests and sibling modules of pmix-java can reach it; not for
 * applications, and it may change without notice.
 */
@CheckReturnValue
package io.pmix.client.internal;

import com.google.errorprone.annotations.CheckReturnValue;
