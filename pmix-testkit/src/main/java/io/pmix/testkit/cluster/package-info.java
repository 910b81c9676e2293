/**
 * A cluster on one machine: several {@link io.pmix.server.PMIxServer}s, each acting as its own
 * node, serving jobs spread over them, with host modules that complete fences and direct-modex
 * requests across the nodes over loopback TCP.
 *
 * <ul>
 *   <li>{@link io.pmix.testkit.cluster.PmixCluster}: the fixture; starts the nodes, registers
 *       jobs, gives each rank its environment;
 *   <li>{@link io.pmix.testkit.cluster.ClusterJob}: which ranks of a namespace live on which node,
 *       and the job data (node map, process map) every node registers;
 *   <li>{@link io.pmix.testkit.cluster.ClusterNode}: one node (server, host name, tmpdir);
 *   <li>{@link io.pmix.testkit.cluster.ClusterHost}: a node's host module, the worked example of
 *       the cross-node upcalls ({@code fenceNb}: all-gather of the fence blobs of docs/commands.md
 *       §7.1; {@code directModex}: forwarding to the owning node, answered with the KVAL units of
 *       docs/commands.md §7.2).
 * </ul>
 */
@CheckReturnValue
package io.pmix.testkit.cluster;

import com.google.errorprone.annotations.CheckReturnValue;
