/** pmix-testkit's internals: not an API, may change without notice. */
@CheckReturnValue
package io.pmix.testkit.internal;

import com.google.errorprone.annotations.CheckReturnValue;
