/** pmix-server: see the module description and design.md. */
@CheckReturnValue
package io.pmix.server;

import com.google.errorprone.annotations.CheckReturnValue;
