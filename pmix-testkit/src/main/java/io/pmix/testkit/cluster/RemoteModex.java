package io.pmix.testkit.cluster;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.server.PMIxServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Direct modex between the servers of the nodes of one job: a node's server asks for the data of
 * a process on another node, that node's host obtains it from its own server ({@link
 * PMIxServer#dmodexRequest}) and sends it back. The requests travel on this package's
 * interconnect (TCP, one connection per pair of nodes that talk; the messages and the rules of
 * {@link ClusterHost}'s direct modex), whoever does the fences.
 *
 * <p>This is what {@code pmixrun} nested under another PMIx runtime uses for the one cross-node
 * request PMIx gives it no way to make through that runtime: a client of the outer job can
 * fence, put and get what another committed, but it cannot ask another client to produce data on
 * demand, which is what a direct modex is (the owning node must ask its own server, which may
 * wait for the process to commit). The nodes learn each other's endpoint through the outer
 * runtime's modex ({@link #address}, {@link #peer}).
 *
 * <p>No authentication: anyone who can reach the endpoint may ask for the committed remote data
 * of the job's processes. The endpoint listens on the loopback address when all nodes are this
 * machine.
 *
 * <p>Thread-safe.
 */
public final class RemoteModex implements AutoCloseable {
  private final ClusterHost host;
  private final Interconnect link;
  private final Map<Integer, InetSocketAddress> peers = new ConcurrentHashMap<>();
  private volatile boolean attached;
  private volatile @Nullable LossListener losses;

  /** Told of the processes and nodes of the job that are lost; called on the link's thread. */
  public interface LossListener {
    /** Node {@code node} says its processes {@code ranks} died, ending the job with {@code status}. */
    void ranksLost(int node, int status, List<Integer> ranks);

    /** Node {@code node}'s endpoint went away, or could not be reached, before this one closed. */
    void nodeLost(int node);
  }

  private RemoteModex(ClusterHost host, Interconnect link) {
    this.host = host;
    this.link = link;
  }

  /**
   * Starts node {@code self}'s endpoint.
   *
   * @param self this node's index among the job's nodes
   * @param name the thread name prefix
   * @param bind the address to listen on (a kernel-chosen port)
   * @param jobs the layout of a namespace spread over the nodes, or null for one that is not
   * @throws PmixException with {@code ERR_INIT} if the endpoint cannot be bound
   */
  public static RemoteModex start(
      int self, String name, InetAddress bind, Function<String, @Nullable ClusterJob> jobs) {
    ClusterHost host = new ClusterHost(self, jobs);
    RemoteModex[] made = new RemoteModex[1];
    Interconnect link =
        Interconnect.start(
            self,
            name,
            m -> {
              if (m instanceof Interconnect.Lost l) {
                LossListener w = requireNonNull(made[0]).losses;
                if (w != null) {
                  w.ranksLost(l.from(), l.status(), l.ranks());
                }
              } else {
                host.receive(m);
              }
            },
            node -> requireNonNull(made[0]).peers.get(node),
            bind);
    made[0] = new RemoteModex(host, link);
    return made[0];
  }

  /** Where this node's endpoint listens. */
  public InetSocketAddress address() {
    return link.address();
  }

  /** Tells this node where node {@code node}'s endpoint listens. */
  public void peer(int node, InetSocketAddress address) {
    peers.put(node, requireNonNull(address, "address"));
  }

  /**
   * Serves the other nodes' requests from {@code server}, this node's; once, before the server
   * can ask for a remote process's data.
   */
  public void attach(PMIxServer server) {
    host.attach(link, server);
    attached = true;
  }

  /**
   * Watches every peer told so far ({@link #peer}): connects to each now, and tells {@code l}
   * when one's endpoint goes away (its process ended) and what the peers announce with {@link
   * #announceLost}. Once, after {@link #peer}.
   */
  public void watch(LossListener l) {
    losses = requireNonNull(l, "l");
    for (int node : peers.keySet()) {
      link.watch(node, () -> l.nodeLost(node));
    }
  }

  /**
   * Tells every peer that this node's processes {@code ranks} died, ending the job with launcher
   * status {@code status}. Best effort: a peer that cannot be reached is not waited for.
   */
  public void announceLost(int status, List<Integer> ranks) {
    Interconnect.Lost m = new Interconnect.Lost(host.node(), status, ranks);
    for (int node : peers.keySet()) {
      var unused = link.send(node, m);
    }
  }

  /**
   * The remote data of {@code proc}, from the node that runs it: plain KVAL units, what {@link
   * io.pmix.server.HostModule#directModex} completes with. Fails with {@code NOT_FOUND} for a
   * process of no node but this one, and with the owning server's status otherwise.
   */
  public CompletionStage<byte[]> directModex(Proc proc, List<Info> info) {
    return host.directModex(proc, info);
  }

  /** Fails what still waits for another node, then closes the endpoint. After the server. */
  @Override
  public void close() {
    if (attached) {
      host.failPending(new PmixException(Status.ERR_UNREACH, "this node's endpoint closed"));
    }
    link.close();
  }
}
