package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TagAllocatorTest {

  @Test
  void firstTagsAre101And102() {
    TagAllocator tags = new TagAllocator();
    assertEquals(101, tags.allocate());
    assertEquals(102, tags.allocate());
    assertEquals(2, tags.outstandingCount());
  }

  @Test
  void wrapsPast0xFFFFFFFETo100AndNeverUses0xFFFFFFFF() {
    TagAllocator tags = new TagAllocator(0xFFFFFFFD);
    assertEquals(0xFFFFFFFE, tags.allocate());
    assertEquals(100, tags.allocate());
    assertEquals(101, tags.allocate());
  }

  @Test
  void neverHandsOutATagStillOutstanding() {
    TagAllocator tags = new TagAllocator();
    int first = tags.allocate();
    int second = tags.allocate();
    tags.release(second);
    tags.rewind(100); // as after a wrap: 101 is next in line, but still waits for its reply
    assertEquals(102, tags.allocate());
    assertTrue(tags.isOutstanding(first));
    tags.release(first);
    assertFalse(tags.isOutstanding(first));
    tags.rewind(100);
    assertEquals(101, tags.allocate());
  }

  @Test
  void releasingAnUnknownTagIsHarmless() {
    TagAllocator tags = new TagAllocator();
    tags.release(12345);
    tags.release(Tags.NOTIFY);
    assertEquals(0, tags.outstandingCount());
  }

  @Test
  void processWideIsOneInstance() {
    assertSame(TagAllocator.processWide(), TagAllocator.processWide());
  }

  @Test
  void concurrentAllocationsAreDistinct() throws Exception {
    TagAllocator tags = new TagAllocator();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<Integer>>> results = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        results.add(
            pool.submit(
                () -> {
                  List<Integer> mine = new ArrayList<>();
                  for (int i = 0; i < 5000; i++) {
                    mine.add(tags.allocate());
                  }
                  return mine;
                }));
      }
      Set<Integer> all = new HashSet<>();
      for (Future<List<Integer>> f : results) {
        all.addAll(f.get(30, TimeUnit.SECONDS));
      }
      assertEquals(20_000, all.size());
      assertFalse(all.stream().anyMatch(Tags::isReserved));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void reservedTags() {
    assertEquals(0, Tags.NOTIFY);
    assertEquals(1, Tags.HEARTBEAT);
    assertEquals(2, Tags.IOF);
    assertTrue(Tags.isReserved(0));
    assertTrue(Tags.isReserved(99));
    assertFalse(Tags.isReserved(100));
    assertFalse(Tags.isReserved(101));
    assertFalse(Tags.isReserved(0xFFFFFFFE));
  }
}
