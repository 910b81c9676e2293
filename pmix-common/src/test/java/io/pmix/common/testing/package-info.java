/**
 * Test support shared with the other modules through pmix-common's test-jar: building and driving
 * the repository's C programs against the real OpenPMIx library, scaled test timeouts
 * ({@link io.pmix.common.testing.TestTiming}) and bounded waits ({@link io.pmix.common.testing.Await}).
 */
@CheckReturnValue
package io.pmix.common.testing;

import com.google.errorprone.annotations.CheckReturnValue;
