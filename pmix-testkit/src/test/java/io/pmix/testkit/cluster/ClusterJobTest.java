package io.pmix.testkit.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ClusterJobTest {
  private static final List<String> HOSTS = List.of("node0", "node1", "node2");

  @Test
  void blocksPutConsecutiveRanksOnEachNode() {
    ClusterJob job = ClusterJob.blocks("j", 2, 3);
    assertEquals(6, job.size());
    assertEquals(List.of(3, 4, 5), job.ranksOn(1));
    assertEquals(1, job.nodeOf(4));
    assertEquals(-1, job.nodeOf(6));
    assertEquals("raw:node0,node1", job.nodeMap(HOSTS));
    assertEquals("raw:0,1,2;3,4,5", job.procMap());
  }

  @Test
  void cyclicDealsRanksRoundRobin() {
    ClusterJob job = ClusterJob.cyclic("j", 3, 7);
    assertEquals(List.of(0, 3, 6), job.ranksOn(0));
    assertEquals(List.of(2, 5), job.ranksOn(2));
    assertEquals("raw:0,3,6;1,4;2,5", job.procMap());
  }

  @Test
  void nodesWithoutRanksAreLeftOutOfTheMaps() {
    ClusterJob job = ClusterJob.of("j", List.of(List.of(1), List.of(), List.of(0)));
    assertEquals("raw:node0,node2", job.nodeMap(HOSTS));
    assertEquals("raw:1;0", job.procMap());
    assertEquals(List.of(), job.ranksOn(1));
    assertEquals(2, job.nodeOf(0));
  }

  @Test
  void jobInfoCarriesSizesMapsAndEveryRanksData() {
    ClusterJob job = ClusterJob.cyclic("j", 2, 3);
    List<Info> info = job.jobInfo(HOSTS);
    Map<String, Value> loose =
        info.stream()
            .filter(i -> !i.key().equals(Keys.PROC_DATA.name()))
            .collect(Collectors.toMap(Info::key, Info::value));
    assertEquals(Value.uint32(3), loose.get(Keys.JOB_SIZE.name()));
    assertEquals(Value.uint32(2), loose.get(Keys.NUM_NODES.name()));
    assertEquals(Value.of("j"), loose.get(Keys.NSPACE.name()));
    assertEquals(Value.of("raw:node0,node1"), loose.get(Keys.NODE_MAP.name()));
    assertEquals(Value.of("raw:0,2;1"), loose.get(Keys.PROC_MAP.name()));
    List<Info> procData =
        info.stream().filter(i -> i.key().equals(Keys.PROC_DATA.name())).toList();
    assertEquals(3, procData.size());
    // Rank 2 is the second rank of node0.
    DataArray rank2 = (DataArray) procData.get(1).value();
    assertEquals(
        List.of(
            Info.of(Keys.RANK, Value.rank(2)),
            Info.of(Keys.APPNUM, Value.uint32(0)),
            Info.of(Keys.LOCAL_RANK, Value.uint16(1)),
            Info.of(Keys.NODE_RANK, Value.uint16(1)),
            Info.of(Keys.NODEID, Value.uint32(0)),
            Info.of(Keys.HOSTNAME, Value.of("node0")),
            Info.of(Keys.GLOBAL_RANK, Value.rank(2)),
            Info.of(Keys.APP_RANK, Value.rank(2))),
        rank2.items());
  }

  @Test
  void badLayoutsAreRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> ClusterJob.of("j", List.of(List.of(0), List.of(0))));
    assertThrows(IllegalArgumentException.class, () -> ClusterJob.of("j", List.of(List.of(0, 2))));
    assertThrows(IllegalArgumentException.class, () -> ClusterJob.of("j", List.of(List.of())));
    assertThrows(
        IllegalArgumentException.class, () -> ClusterJob.blocks("j", 4, 1).jobInfo(HOSTS));
  }
}
