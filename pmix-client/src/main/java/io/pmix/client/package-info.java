/** pmix-client: see the module description and design.md. */
@CheckReturnValue
package io.pmix.client;

import com.google.errorprone.annotations.CheckReturnValue;
