/**
 * Programs for bin/demo and for tests: {@link io.pmix.testkit.demo.JavaDemoClient}, a PMIx client
 * written with pmix-client that speaks the same keys, values and service as the kit's C client
 * ({@code pmix_client_check}), so that Java and C clients can be ranks of one job.
 */
@CheckReturnValue
package io.pmix.testkit.demo;

import com.google.errorprone.annotations.CheckReturnValue;
