/**
 * Test support shared with the other modules through pmix-common's test-jar: building and driving
 * the repository's C programs against the real OpenPMIx library.
 */
@CheckReturnValue
package io.pmix.common.testing;

import com.google.errorprone.annotations.CheckReturnValue;
