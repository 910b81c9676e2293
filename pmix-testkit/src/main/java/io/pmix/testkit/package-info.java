/** pmix-testkit: see the module description and design.md. */
@CheckReturnValue
package io.pmix.testkit;

import com.google.errorprone.annotations.CheckReturnValue;
