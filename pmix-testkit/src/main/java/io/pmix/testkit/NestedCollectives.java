package io.pmix.testkit;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * PMIx_Connect, PMIx_Disconnect and group construct/destruct (a destruct is a disconnect of the
 * members) across the nodes of a nested
 * pmixrun ({@link Nested}): each is a collecting fence of the nodes hosting the participants
 * through the outer runtime ({@link Nested#fence}), every node contributing its local collective
 * status ({@code pmix.loc.col.st}) and, for a construct, a context id of its own making.
 *
 * <p>Why the outer fence rather than the nodes' TCP link ({@link
 * io.pmix.testkit.cluster.RemoteModex}): a connect or group operation is a collective among the
 * nodes involved, exactly what the outer fence already does for the inner fences (with their
 * timeout, and the outer runtime's failure handling when a node dies), while the link only
 * answers requests. Every participating node learns every other node's status, so the operation
 * fails everywhere when a local part failed anywhere (a member died before it arrived), rather
 * than succeed on some nodes only.
 *
 * <p>Context ids ({@code pmix.grp.actxid}): node {@code k} of {@code N} makes its {@code j}-th id
 * {@code j*N + k + 1} (1, 2, 3... on one node, as the single-node launcher), so ids made on
 * different nodes never collide; a construct takes the id of the first participating node (in node
 * order) that made one, which every node computes alike from the gathered contributions.
 *
 * <p>The participants must all be of the inner job, whose every node knows it; a namespace this
 * launcher does not run is refused before ({@code PMIX_ERR_UNREACH}, {@link SingleNodeHost}).
 * Group info ({@code pmix.grp.info}) offered by members on other nodes is not carried: a 6.0+
 * member gets its own node's members' only.
 */
final class NestedCollectives {
  /** A contribution: the local status (int) and a context id (long, 0 for none). */
  private static final int PART = Integer.BYTES + Long.BYTES;

  private final Nested nodes;
  private final AtomicLong made = new AtomicLong();

  NestedCollectives(Nested nodes) {
    this.nodes = nodes;
  }

  /** A connect or disconnect: completes once every participating node has come, or fails. */
  CompletionStage<Void> connect(List<Proc> procs, List<Info> info) {
    return collective(procs, info, 0).thenApply(ids -> null);
  }

  /**
   * A group construct: the agreed context id, when one was asked for, as the host's results
   * ({@code pmix.grp.ctxid}).
   */
  CompletionStage<List<Info>> groupConstruct(List<Proc> procs, List<Info> info) {
    boolean wantsId = SingleNodeHost.wantsContextId(info);
    long id = wantsId ? made.getAndIncrement() * nodes.nodeCount() + nodes.node() + 1 : 0;
    boolean asked = wantsId;
    return collective(procs, info, id)
        .thenApply(
            agreed ->
                asked && agreed != 0
                    ? List.of(Info.of(Keys.GROUP_CONTEXT_ID, Value.size(agreed)))
                    : List.<Info>of());
  }

  /**
   * The collecting fence of the participating nodes: completes with the first nonzero id in node
   * order (0 if none), or fails with the first failed local status in node order.
   */
  private CompletionStage<Long> collective(List<Proc> procs, List<Info> info, long id) {
    Status local = Status.SUCCESS;
    for (Info i : info) {
      if (i.key().equals(Keys.LOCAL_COLLECTIVE_STATUS.name())
          && i.value() instanceof Value.StatusValue s) {
        local = s.status();
      }
    }
    byte[] mine = ByteBuffer.allocate(PART).putInt(local.code()).putLong(id).array();
    return nodes
        .fence(procs, info, mine)
        .thenApply(
            all -> {
              if (all.length == 0 || all.length % PART != 0) {
                throw new PmixException(
                    Status.ERR_BAD_PARAM, "the nodes' contributions are " + all.length + " bytes");
              }
              ByteBuffer b = ByteBuffer.wrap(all);
              long agreed = 0;
              Status failed = null;
              while (b.hasRemaining()) {
                Status s = Status.of(b.getInt());
                long x = b.getLong();
                if (failed == null && !s.isSuccess()) {
                  failed = s;
                }
                if (agreed == 0) {
                  agreed = x;
                }
              }
              if (failed != null) {
                throw new PmixException(failed, "a participating node's members failed: " + failed);
              }
              return agreed;
            });
  }
}
