package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The REQ reply body is packed once per wire format and then reused unchanged. */
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
  void otherJobDataPacksItsOwnBody() {
    byte[] four = build(4).replyBody(WireFormat.DEFAULT);
    byte[] five = build(5).replyBody(WireFormat.DEFAULT);
    assertFalse(Arrays.equals(four, five));
  }
}
