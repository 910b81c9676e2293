/** pmix-dataserver: see the module description and design.md. */
@CheckReturnValue
package io.pmix.dataserver;

import com.google.errorprone.annotations.CheckReturnValue;
