/**
 * Programs for bin/soak (issue #18's soak): {@link io.pmix.testkit.soak.SoakJavaClient}, a Java
 * PMIx client rank that runs many init/finalize cycles in one JVM, and {@link
 * io.pmix.testkit.soak.SoakTool}, a Java tool that attaches to a running server and detaches again
 * many times. Both check every cycle's answers and print one summary line the driver parses.
 */
@CheckReturnValue
package io.pmix.testkit.soak;

import com.google.errorprone.annotations.CheckReturnValue;
