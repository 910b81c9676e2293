/** pmix-common: see the module description and design.md. */
@CheckReturnValue
package io.pmix.common;

import com.google.errorprone.annotations.CheckReturnValue;
