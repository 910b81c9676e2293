/**
 * JMH benchmarks of pmix-java against the C library, run by {@code bin/bench-codec}; not part
 * of the default build (Maven profile {@code bench}).
 */
@CheckReturnValue
package io.pmix.benchmarks;

import com.google.errorprone.annotations.CheckReturnValue;
