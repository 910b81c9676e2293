/**
 * pmix-testkit: real PMIx servers and real clients for tests, and the {@code pmixrun} launcher.
 *
 * <ul>
 *   <li>{@link io.pmix.testkit.TestingPmixServer}: a started {@code PMIxServer} with the
 *       single-node host module, launching jobs ({@link io.pmix.testkit.JobBuilder}) of C
 *       programs compiled against libpmix, Java main classes in forked JVMs, or any command, and
 *       handing back each job's {@link io.pmix.testkit.JobResult} (exit codes, output, server
 *       snapshots);
 *   <li>{@link io.pmix.testkit.PmixTestExtension}: the JUnit 5 extension that closes servers after
 *       each test and fails a test that leaves processes running;
 *   <li>{@link io.pmix.testkit.CCompiler}: builds C programs against libpmix, cached, including the
 *       kit's {@code pmix_client_check} and {@code pmix_host_server};
 *   <li>{@link io.pmix.testkit.Timing}: timeouts scaled by {@code -Dpmix.test.timeScale};
 *   <li>{@link io.pmix.testkit.SingleNodeHost}: the host module, reusable with a bare server;
 *   <li>{@link io.pmix.testkit.PmixRun} ({@code bin/pmixrun}) and {@link
 *       io.pmix.testkit.StateReport} ({@code bin/pmix-state}).
 * </ul>
 */
@CheckReturnValue
package io.pmix.testkit;

import com.google.errorprone.annotations.CheckReturnValue;
