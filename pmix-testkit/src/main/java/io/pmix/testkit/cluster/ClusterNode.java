package io.pmix.testkit.cluster;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * One node of a {@link PmixCluster}: a {@link PMIxServer} with its own host name and temporary
 * directory, its {@link ClusterHost}, and the node's end of the interconnect the hosts talk over.
 * What a node daemon of a resource manager holds.
 *
 * <p>Thread-safe. Owned by its cluster, which closes it.
 */
public final class ClusterNode {
  private final int index;
  private final String hostname;
  private final Path tmpdir;
  private final ClusterHost host;
  private final Interconnect link;
  private final PMIxServer server;

  private ClusterNode(
      int index,
      String hostname,
      Path tmpdir,
      ClusterHost host,
      Interconnect link,
      PMIxServer server) {
    this.index = index;
    this.hostname = hostname;
    this.tmpdir = tmpdir;
    this.host = host;
    this.link = link;
    this.server = server;
  }

  /**
   * Starts a node: its interconnect endpoint, then its server.
   *
   * @param options the server's options, already given this node's host name and directories
   * @param jobs the cluster's jobs by namespace
   * @param addresses every node's interconnect endpoint, by index
   */
  static ClusterNode start(
      int index,
      String hostname,
      Path tmpdir,
      ServerOptions options,
      Function<String, @Nullable ClusterJob> jobs,
      IntFunction<InetSocketAddress> addresses) {
    ClusterHost host = new ClusterHost(index, jobs);
    Interconnect link =
        Interconnect.start(index, "pmix-cluster-" + hostname, host::receive, addresses);
    PMIxServer server;
    try {
      server = PMIxServer.create(host, options);
      // The host answers other nodes' direct-modex requests from this server.
      host.attach(link, server);
      server.start();
    } catch (RuntimeException e) {
      link.close();
      throw e;
    }
    return new ClusterNode(index, hostname, tmpdir, host, link, server);
  }

  /** The node's index in its cluster, 0 up. */
  public int index() {
    return index;
  }

  /** The node's host name, as its server and its clients know it ({@code PMIX_HOSTNAME}). */
  public String hostname() {
    return hostname;
  }

  /** The node's own temporary directory (its server's session and system tmpdir). */
  public Path tmpdir() {
    return tmpdir;
  }

  /** The node's server. Register and launch through the cluster; do not close it directly. */
  public PMIxServer server() {
    return server;
  }

  /** The node's host module, with its counters. */
  public ClusterHost host() {
    return host;
  }

  /** Where this node's host accepts messages from the other nodes' hosts (127.0.0.1). */
  public InetSocketAddress interconnectAddress() {
    return link.address();
  }

  /** The environment a process of this node needs ({@code PMIx_server_setup_fork}). */
  public Map<String, String> environment(Proc proc) {
    return server.setupFork(proc);
  }

  /** Stops the server, then fails what the host still waits for, then the interconnect. */
  void close() {
    server.close();
    host.failPending(new PmixException(Status.ERR_UNREACH, "node " + hostname + " closed"));
    link.close();
  }

  /** The effective uid and gid of this process, {uid, gid}. */
  static int[] effectiveIds() {
    try {
      Path self = Path.of("/proc/self");
      return new int[] {
        (Integer) Files.getAttribute(self, "unix:uid"), (Integer) Files.getAttribute(self, "unix:gid")
      };
    } catch (IOException | UnsupportedOperationException e) {
      throw new UncheckedIOException(
          "the process's uid and gid are unknown (Linux /proc needed)",
          e instanceof IOException io ? io : new IOException(e));
    }
  }

  @Override
  public String toString() {
    return "ClusterNode{" + index + " " + hostname + " " + link.address() + "}";
  }
}
