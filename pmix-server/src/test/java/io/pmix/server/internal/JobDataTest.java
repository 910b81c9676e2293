package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The REQ reply body is packed once per wire format and then reused unchanged; the locality
 * derived for each rank.
 */
class JobDataTest {
  private static List<Info> job(int n) {
    return List.of(
        Info.of(Keys.JOB_SIZE, Value.uint32(n)),
        Info.of(Keys.NODE_MAP.name(), "vm"),
        Info.of(Keys.PROC_MAP.name(), "0-" + (n - 1)));
  }

  private static JobData build(int n) {
    return JobData.build(job(n), n, List.of(), "vm", null);
  }

  @Test
  void theReusedBodyIsWhatAFreshPackMakesInEveryFormat() {
    JobData reused = build(4);
    byte[] plain = reused.replyBody(WireFormat.DEFAULT);
    byte[] described = reused.replyBody(WireFormat.FULLY_DESCRIBED);
    assertNotEquals(plain.length, described.length, "the formats pack differently");
    // Alternating formats must not mix the cached bodies up.
    for (int i = 0; i < 3; i++) {
      assertArrayEquals(build(4).replyBody(WireFormat.DEFAULT), reused.replyBody(WireFormat.DEFAULT));
      assertArrayEquals(
          build(4).replyBody(WireFormat.FULLY_DESCRIBED), reused.replyBody(WireFormat.FULLY_DESCRIBED));
    }
    assertArrayEquals(plain, reused.replyBody(WireFormat.DEFAULT));
    assertArrayEquals(described, reused.replyBody(WireFormat.FULLY_DESCRIBED));
  }

  @Test
  void theReusedArraysBodyIsWhatAFreshPackMakesInEveryFormatAndEachCallersOwn() {
    JobData reused = build(4);
    byte[] plain = reused.arraysBody(WireFormat.DEFAULT);
    byte[] described = reused.arraysBody(WireFormat.FULLY_DESCRIBED);
    assertNotEquals(plain.length, described.length, "the formats pack differently");
    for (int i = 0; i < 3; i++) {
      assertArrayEquals(
          build(4).arraysBody(WireFormat.DEFAULT), reused.arraysBody(WireFormat.DEFAULT));
      assertArrayEquals(
          build(4).arraysBody(WireFormat.FULLY_DESCRIBED),
          reused.arraysBody(WireFormat.FULLY_DESCRIBED));
    }
    // A caller changing its copy changes no later reply.
    Arrays.fill(plain, (byte) 0);
    assertArrayEquals(
        build(4).arraysBody(WireFormat.DEFAULT), reused.arraysBody(WireFormat.DEFAULT));
    assertFalse(
        Arrays.equals(
            build(4).arraysBody(WireFormat.DEFAULT), build(5).arraysBody(WireFormat.DEFAULT)));
  }

  @Test
  void otherJobDataPacksItsOwnBody() {
    byte[] four = build(4).replyBody(WireFormat.DEFAULT);
    byte[] five = build(5).replyBody(WireFormat.DEFAULT);
    assertFalse(Arrays.equals(four, five));
  }

  @Test
  void eachRanksLocalAndNodeRankIsItsPlaceAmongItsNodesRanks() {
    // Ranks dealt round-robin over two nodes: a rank's place on its node is not its own number.
    JobData d =
        JobData.build(
            List.of(
                Info.of(Keys.NODE_MAP.name(), "pmix[a,b]"),
                Info.of(Keys.PROC_MAP.name(), "raw:4,0,2;3,1")),
            3,
            List.of(),
            "a",
            null);
    int[] node = {0, 1, 0, 1, 0};
    int[] place = {0, 0, 1, 1, 2};
    for (int r = 0; r < 5; r++) {
      Map<String, Value> v = new HashMap<>();
      for (Value.KVal kv : d.perRank.get(r)) {
        v.put(kv.key(), kv.value());
      }
      assertEquals(node[r] == 0 ? "a" : "b", v.get(Keys.HOSTNAME.name()).asString(), "rank " + r);
      assertEquals(place[r], v.get(Keys.LOCAL_RANK.name()).asLong(), "local rank of " + r);
      assertEquals(place[r], v.get(Keys.NODE_RANK.name()).asLong(), "node rank of " + r);
    }
  }
}
