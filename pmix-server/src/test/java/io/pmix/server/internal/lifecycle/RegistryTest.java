package io.pmix.server.internal.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.server.internal.NettyConnection;
import io.pmix.common.codec.WireFormat;
import io.pmix.server.ServerSnapshot;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The slots: a new peer takes the lowest free slot, and a rank's peers are listed in slot order,
 * whatever order they were placed and freed in.
 */
class RegistryTest {
  private final Registry registry = new Registry();
  private final Namespace ns = registry.placeholder("job");
  private final RankInfo zero = registry.addRank(ns, 0, 1000, 1000, null);
  private final RankInfo one = registry.addRank(ns, 1, 1000, 1000, null);

  private Peer place(RankInfo info) {
    return registry.place(
        NettyConnection.of(new EmbeddedChannel()), ns, info, ServerSnapshot.Role.CLIENT, WireFormat.DEFAULT, "4.2.2");
  }

  private static List<Integer> indexes(List<Peer> peers) {
    return peers.stream().map(Peer::index).toList();
  }

  @Test
  void aNewPeerTakesTheLowestFreeSlot() {
    Peer a = place(zero);
    Peer b = place(one);
    Peer c = place(zero);
    assertEquals(List.of(0, 1, 2), List.of(a.index(), b.index(), c.index()));
    registry.vacate(c);
    registry.vacate(a);
    assertEquals(0, place(one).index());
    assertEquals(2, place(one).index());
    assertEquals(3, place(zero).index());
    registry.vacate(b);
    assertEquals(1, place(zero).index());
  }

  @Test
  void aRanksPeersAreListedInSlotOrder() {
    Peer a = place(zero);
    Peer b = place(one);
    Peer c = place(zero);
    Peer d = place(zero);
    registry.vacate(a);
    Peer e = place(zero); // slot 0 again: first in the rank's list
    assertEquals(0, e.index());
    assertEquals(List.of(0, 2, 3), indexes(registry.peersOf(zero)));
    assertEquals(List.of(1), indexes(registry.peersOf(one)));
    registry.vacate(c);
    registry.vacate(c); // a second vacate changes nothing
    assertEquals(List.of(0, 3), indexes(registry.peersOf(zero)));
    registry.vacate(b);
    assertTrue(registry.peersOf(one).isEmpty());
    assertEquals(List.of(e, d), registry.peersOf(zero));
    assertEquals(List.of(e, d), registry.peers());
  }
}
