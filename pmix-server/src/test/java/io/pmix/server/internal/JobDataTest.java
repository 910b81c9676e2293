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
import java.util.function.BiFunction;
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

  /**
   * A body packed once per format is, call after call and with the formats alternating, what a
   * fresh pack of the same job data makes; the formats pack differently.
   */
  private static void assertReusedIsFresh(BiFunction<JobData, WireFormat, byte[]> body) {
    JobData reused = build(4);
    byte[] plain = body.apply(reused, WireFormat.DEFAULT);
    byte[] described = body.apply(reused, WireFormat.FULLY_DESCRIBED);
    assertNotEquals(plain.length, described.length, "the formats pack differently");
    for (int i = 0; i < 3; i++) {
      for (WireFormat f : List.of(WireFormat.DEFAULT, WireFormat.FULLY_DESCRIBED)) {
        assertArrayEquals(body.apply(build(4), f), body.apply(reused, f));
      }
    }
    assertArrayEquals(plain, body.apply(reused, WireFormat.DEFAULT));
    assertArrayEquals(described, body.apply(reused, WireFormat.FULLY_DESCRIBED));
  }

  @Test
  void theReusedBodyIsWhatAFreshPackMakesInEveryFormat() {
    assertReusedIsFresh(JobData::replyBody);
  }

  @Test
  void theReusedArraysBodyIsWhatAFreshPackMakesInEveryFormatAndEachCallersOwn() {
    assertReusedIsFresh(JobData::arraysBody);
    // A caller changing its copy changes no later reply.
    JobData reused = build(4);
    byte[] plain = reused.arraysBody(WireFormat.DEFAULT);
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
