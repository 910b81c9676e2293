package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.testkit.cluster.ClusterJob;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The inner job's layout of a nested (MPMD) job ({@link Nested#layout}). */
class NestedLayoutTest {
  @Test
  void mpmdAppsAreRankedAppByAppThenNodeByNode() {
    ClusterJob job =
        threeNodesOfTwoApps(false, List.of(0, 1, 6), List.of(2, 3, 7), List.of(4, 5, 8));
    List<Info> info = job.jobInfo(List.of("a", "b", "c"));
    assertEquals(
        2,
        info.stream().filter(i -> i.key().equals(Keys.APP_INFO_ARRAY.name())).count());
    assertEquals(
        List.of(
            Info.of(Keys.APPNUM, Value.uint32(1)),
            Info.of(Keys.APP_SIZE, Value.uint32(3)),
            Info.of(Keys.APPLDR, Value.rank(6))),
        ((DataArray)
                info.stream()
                    .filter(i -> i.key().equals(Keys.APP_INFO_ARRAY.name()))
                    .toList()
                    .get(1)
                    .value())
            .items());
    // Rank 7: app 1's second rank, node 1's third process.
    List<?> rank7 =
        info.stream()
            .filter(i -> i.key().equals(Keys.PROC_DATA.name()))
            .map(i -> ((DataArray) i.value()).items())
            .filter(l -> l.get(0).equals(Info.of(Keys.RANK, Value.rank(7))))
            .findFirst()
            .orElseThrow();
    assertEquals(Info.of(Keys.APPNUM, Value.uint32(1)), rank7.get(1));
    assertEquals(Info.of(Keys.LOCAL_RANK, Value.uint16(2)), rank7.get(2));
    assertEquals(Info.of(Keys.APP_RANK, Value.rank(1)), rank7.get(7));
  }

  @Test
  void oneAppIsNodeByNodeAndDifferentAppCountsAreRefused() {
    ClusterJob job = Nested.layout("j@1", List.of(List.of(2), List.of(3)), false);
    assertEquals(List.of(2, 3, 4), job.ranksOn(1));
    assertEquals(List.of(5), job.appSizes());
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> Nested.layout("j@1", List.of(List.of(2, 1), List.of(2)), false));
    assertEquals(Status.ERR_BAD_PARAM, e.status());
  }

  @Test
  void mapByNodeDealsEachAppRoundRobinAppByApp() {
    // --map-by node with two apps, as PRRTE maps each app in turn: app 0 round robin over the
    // three nodes, then app 1 from rank 6 on.
    var unused = threeNodesOfTwoApps(true, List.of(0, 3, 6), List.of(1, 4, 7), List.of(2, 5, 8));
  }

  /**
   * The layout of 3 nodes each running 2 processes of app 0 and 1 of app 1 ({@code byNode} as
   * {@code --map-by node}), checked to put {@code ranksOnNode} on the nodes, in node order.
   */
  @SafeVarargs
  private static ClusterJob threeNodesOfTwoApps(boolean byNode, List<Integer>... ranksOnNode) {
    ClusterJob job =
        Nested.layout("j@1", List.of(List.of(2, 1), List.of(2, 1), List.of(2, 1)), byNode);
    for (int n = 0; n < ranksOnNode.length; n++) {
      assertEquals(ranksOnNode[n], job.ranksOn(n), "node " + n);
    }
    assertEquals(List.of(6, 3), job.appSizes());
    return job;
  }
}
