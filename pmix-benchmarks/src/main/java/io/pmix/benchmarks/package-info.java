/**
 * Benchmarks of pmix-java against the C library: JMH for the codec ({@code bin/bench-codec}), a
 * harness run as a client of a real server for the client ({@code bin/bench-client}); not part of
 * the default build (Maven profile {@code bench}).
 */
@CheckReturnValue
package io.pmix.benchmarks;

import com.google.errorprone.annotations.CheckReturnValue;
