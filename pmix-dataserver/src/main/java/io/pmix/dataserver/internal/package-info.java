/**
 * The workings of pmix-dataserver: how a request's directives are read, how ranges, access and
 * lifetimes are decided, what an item is charged, and the network protocol between PMIx servers
 * and a {@link io.pmix.dataserver.DataServer}. Internal API: only io.pmix.dataserver uses it, and
 * it may change at any time.
 */
@CheckReturnValue
package io.pmix.dataserver.internal;

import com.google.errorprone.annotations.CheckReturnValue;
