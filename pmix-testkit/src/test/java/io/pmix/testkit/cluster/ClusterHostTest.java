package io.pmix.testkit.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.server.PMIxServer;
import io.pmix.server.ServerOptions;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two nodes' hosts and their interconnect, without servers: the fence all-gather, its rounds and
 * timeout, and how direct-modex requests are routed and their failures reported.
 */
class ClusterHostTest {
  private static final List<Proc> JOB = List.of(Proc.wildcard("j"));

  private final Map<String, ClusterJob> jobs = new ConcurrentHashMap<>();
  private final List<ClusterHost> hosts = new ArrayList<>();
  private final List<Interconnect> links = new ArrayList<>();
  private final List<PMIxServer> servers = new ArrayList<>();

  @BeforeEach
  void start() {
    jobs.put("j", ClusterJob.blocks("j", 2, 1));
    AtomicReferenceArray<InetSocketAddress> addresses = new AtomicReferenceArray<>(2);
    for (int i = 0; i < 2; i++) {
      ClusterHost host = new ClusterHost(i, jobs::get);
      Interconnect link = Interconnect.start(i, "test-node" + i, host::receive, addresses::get);
      // A server never started: a data request it gets fails with ERR_INIT.
      PMIxServer server = PMIxServer.create(host, ServerOptions.builder().build());
      host.attach(link, server);
      addresses.set(i, link.address());
      hosts.add(host);
      links.add(link);
      servers.add(server);
    }
  }

  @AfterEach
  void stop() {
    servers.forEach(PMIxServer::close);
    links.forEach(Interconnect::close);
  }

  /** A node's fence blob as a server makes it (docs/commands.md §7.1, native form). */
  private static byte[] nodeBlob(int rank, String value) {
    ByteBuf rankBlob = Unpooled.buffer();
    ByteBuf node = Unpooled.buffer();
    ByteBuf out = Unpooled.buffer();
    try {
      new PmixWriter(rankBlob).packRank(rank).pack(new Value.KVal("k", Value.of(value)));
      new PmixWriter(node)
          .packByteEnum(DataType.BYTE, 0x01)
          .pack(Value.of(ByteBufUtil.getBytes(rankBlob)));
      new PmixWriter(out).pack(Value.of(ByteBufUtil.getBytes(node)));
      return ByteBufUtil.getBytes(out);
    } finally {
      rankBlob.release();
      node.release();
      out.release();
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] all = new byte[a.length + b.length];
    System.arraycopy(a, 0, all, 0, a.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static Status failure(java.util.concurrent.CompletionStage<?> s) {
    ExecutionException e =
        assertThrows(
            ExecutionException.class, () -> s.toCompletableFuture().get(10, TimeUnit.SECONDS));
    return assertInstanceOf(PmixException.class, e.getCause()).status();
  }

  @Test
  void everyServerGetsEveryNodesBlobBackToBackInNodeOrder() throws Exception {
    byte[] a = nodeBlob(0, "from-node0");
    byte[] b = nodeBlob(1, "from-node1");
    // Node 1 arrives first: its contribution waits at node 0 until node 0's server calls.
    CompletableFuture<byte[]> at1 = hosts.get(1).fenceNb(JOB, List.of(), b).toCompletableFuture();
    byte[] at0 = await(hosts.get(0).fenceNb(JOB, List.of(), a));
    assertArrayEquals(concat(a, b), at0);
    assertArrayEquals(concat(a, b), await(at1));
    assertEquals(List.of(JOB), hosts.get(0).fences());
    assertEquals(List.of(JOB), hosts.get(1).fences());
  }

  @Test
  void aFenceWithoutDataHandsBackNothing() throws Exception {
    CompletableFuture<byte[]> at1 =
        hosts.get(1).fenceNb(JOB, List.of(), new byte[0]).toCompletableFuture();
    assertArrayEquals(new byte[0], await(hosts.get(0).fenceNb(JOB, List.of(), new byte[0])));
    assertArrayEquals(new byte[0], await(at1));
  }

  @Test
  void successiveFencesOverTheSameProcsAreKeptApart() throws Exception {
    byte[] a1 = nodeBlob(0, "a1");
    byte[] a2 = nodeBlob(0, "a2");
    byte[] b1 = nodeBlob(1, "b1");
    byte[] b2 = nodeBlob(1, "b2");
    // Node 0 runs two rounds before node 1 runs any: round numbers pair them up.
    CompletableFuture<byte[]> first =
        hosts.get(0).fenceNb(JOB, List.of(), a1).toCompletableFuture();
    CompletableFuture<byte[]> second =
        hosts.get(0).fenceNb(JOB, List.of(), a2).toCompletableFuture();
    assertArrayEquals(concat(a1, b1), await(hosts.get(1).fenceNb(JOB, List.of(), b1)));
    assertArrayEquals(concat(a2, b2), await(hosts.get(1).fenceNb(JOB, List.of(), b2)));
    assertArrayEquals(concat(a1, b1), await(first));
    assertArrayEquals(concat(a2, b2), await(second));
  }

  @Test
  void aFenceThatANodeNeverJoinsTimesOut() {
    List<Info> info = List.of(Info.of(Keys.TIMEOUT, Value.of(1)));
    assertEquals(
        Status.ERR_TIMEOUT, failure(hosts.get(0).fenceNb(JOB, info, nodeBlob(0, "alone"))));
  }

  @Test
  void aFenceOverAnUnknownNamespaceFails() {
    assertEquals(
        Status.ERR_INVALID_NAMESPACE,
        failure(hosts.get(0).fenceNb(List.of(Proc.wildcard("other")), List.of(), new byte[0])));
  }

  @Test
  void directModexIsOnlyForProcessesOfOtherNodes() {
    assertEquals(Status.ERR_NOT_FOUND, failure(hosts.get(0).directModex(Proc.of("j", 0), List.of())));
    assertEquals(Status.ERR_NOT_FOUND, failure(hosts.get(0).directModex(Proc.of("j", 7), List.of())));
    assertEquals(
        Status.ERR_NOT_FOUND, failure(hosts.get(0).directModex(Proc.of("other", 1), List.of())));
  }

  @Test
  void directModexGoesToTheOwningNodeAndBringsBackItsFailure() {
    // Node 1 owns rank 1 and asks its server, which is not running here.
    assertEquals(
        Status.ERR_INIT, failure(hosts.get(0).directModex(Proc.of("j", 1), List.of())));
    assertEquals(List.of(Proc.of("j", 1)), hosts.get(0).dmodexRequested());
    assertEquals(List.of(), hosts.get(1).dmodexServed());
  }
}
