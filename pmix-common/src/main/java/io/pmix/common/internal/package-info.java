/**
 * Internal API of pmix-common: used by the other pmix-java modules and by the developer tools in
 * the repository's {@code bin} directory, not by applications. Nothing here is stable.
 */
@CheckReturnValue
package io.pmix.common.internal;

import com.google.errorprone.annotations.CheckReturnValue;
