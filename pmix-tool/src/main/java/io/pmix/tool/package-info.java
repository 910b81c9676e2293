/** pmix-tool: see the module description and design.md. */
@CheckReturnValue
package io.pmix.tool;

import com.google.errorprone.annotations.CheckReturnValue;
