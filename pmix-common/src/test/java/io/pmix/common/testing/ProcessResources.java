package io.pmix.common.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a process holds that a library cycling init/finalize could leak: live threads, open file
 * descriptors (Linux {@code /proc/self/fd}) and the heap that survives a full collection. A test
 * takes a {@link Snapshot} as its baseline, runs its cycles, and asserts the process is back to it.
 *
 * <p>Everything here waits at most a few seconds for the JVM to settle (a thread that has been told
 * to stop is still listed until it has run to its end; a reference is cleared only by a
 * collection); none of it is a timing assertion.
 */
public final class ProcessResources {
  private static final Path FDS = Path.of("/proc/self/fd");
  private static final Path MAPS = Path.of("/proc/self/maps");

  private ProcessResources() {}

  /** The live threads, the open descriptors and the used heap after a full collection. */
  public record Snapshot(Set<Thread> threads, List<String> fds, long heapAfterGc) {
    /** Copies the collections. */
    public Snapshot {
      threads = Set.copyOf(threads);
      fds = List.copyOf(fds);
    }

    @Override
    public String toString() {
      return "threads=" + threads.size() + " fds=" + fds.size() + " heapAfterGc=" + heapAfterGc;
    }
  }

  /** Takes a snapshot (with a full collection first). */
  public static Snapshot snapshot() {
    long heap = heapAfterFullGc();
    return new Snapshot(liveThreads(), openFds(), heap);
  }

  /** Whether the process's descriptors can be listed here (Linux). */
  public static boolean canCountFds() {
    return Files.isDirectory(FDS);
  }

  /** The live threads of this JVM. */
  public static Set<Thread> liveThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .collect(Collectors.toUnmodifiableSet());
  }

  /**
   * The open descriptors of this process, each as {@code fd -> target} (socket:[inode],
   * anon_inode:[eventpoll], a path, ...), so a failure shows what leaked. The descriptor that
   * lists the directory is open while it is read and is left out: it is {@code /proc/self/fd}'s
   * own, pointing at {@code /proc/<pid>/fd}.
   */
  public static List<String> openFds() {
    if (!canCountFds()) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(FDS)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String target;
        try {
          target = Files.readSymbolicLink(p).toString();
        } catch (IOException e) {
          // Closed between listing and reading: it was the listing's own or a transient one.
          continue;
        }
        if (target.matches("/proc/\\d+/fd")) {
          continue;
        }
        out.add(p.getFileName() + " -> " + target);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.sort(Comparator.comparingInt(ProcessResources::fdNumber));
    return out;
  }

  /**
   * The file mappings of this process (Linux {@code /proc/self/maps}) whose path contains {@code
   * part}, each as {@code address-range path}, in address order: for instance the segments of a
   * shared-memory data store ({@code pmix_dstor_}), which a library must unmap when it is done.
   */
  public static List<String> mappings(String part) {
    if (!Files.isReadable(MAPS)) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(MAPS)) {
        // address perms offset dev inode path
        String[] f = line.trim().split("\\s+", 6);
        if (f.length == 6 && f[5].contains(part)) {
          out.add(f[0] + " " + f[5]);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /**
   * Asserts that the process has no more mappings containing {@code part} than {@code baseline},
   * at once: a library that unmaps when it is done has done so (no collection is awaited, which
   * would also release a mapping the library forgot); fails listing the extra ones.
   */
  public static void assertNoMappingsBeyond(List<String> baseline, String part) {
    List<String> now = mappings(part);
    if (now.size() <= baseline.size()) {
      return;
    }
    List<String> extra = new ArrayList<>(now);
    extra.removeAll(baseline);
    fail("mappings of " + part + ": " + baseline.size() + " before, " + now.size() + " after;"
        + " new (first 20): " + extra.stream().limit(20).toList());
  }

  private static int fdNumber(String entry) {
    return Integer.parseInt(entry.substring(0, entry.indexOf(' ')));
  }

  /**
   * The used heap after full collections: the smallest of three, because a collection can leave
   * garbage a finalizer or a reference handler was still working on when it ran.
   */
  @SuppressWarnings("SystemGc") // measuring what survives a full collection is the point
  public static long heapAfterFullGc() {
    long min = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      min = Math.min(min, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return min;
  }

  /**
   * Weak references to objects that must become unreachable (the objects of finished cycles),
   * dropped again as soon as the collector has cleared them, so that tracking thousands of cycles
   * does not itself grow the heap a test measures: only the references still uncleared are held.
   *
   * <p>Not thread-safe: one test thread tracks and checks.
   */
  public static final class Reachability {
    private final ReferenceQueue<Object> queue = new ReferenceQueue<>();
    private final Map<Reference<?>, String> uncleared = new HashMap<>();
    private long tracked;

    /** Tracks {@code o} under {@code name} (shown when it stays reachable). */
    public void track(String name, Object o) {
      drain();
      uncleared.put(new WeakReference<>(o, queue), name);
      tracked++;
    }

    /** Forgets the references the collector has cleared meanwhile. */
    public void drain() {
      for (Reference<?> r; (r = queue.poll()) != null; ) {
        uncleared.remove(r);
      }
    }

    /** How many objects were tracked in all. */
    public long tracked() {
      return tracked;
    }

    /**
     * Waits (at most about 10 s, collecting meanwhile) until every tracked object has been
     * collected; fails listing (some of) those still reachable.
     */
    @SuppressWarnings("SystemGc") // clearing weak references needs collections
    public void assertAllCleared() {
      for (int i = 0; i < 50; i++) {
        System.gc();
        sleep(i == 0 ? 20 : 200);
        drain();
        // A cleared reference is enqueued by the JVM's reference handler a moment later; one
        // cleared but not yet enqueued counts as cleared.
        uncleared.keySet().removeIf(r -> r.refersTo(null));
        if (uncleared.isEmpty()) {
          return;
        }
      }
      List<String> names = uncleared.values().stream().sorted().limit(20).toList();
      fail(uncleared.size() + " of " + tracked + " objects of finished cycles are still reachable,"
          + " e.g. " + names);
    }
  }

  /**
   * Waits (at most about 10 s) until no thread is alive that {@code baseline} did not have; fails
   * listing the names of the extra ones. Threads of the baseline that ended meanwhile are fine.
   */
  public static void assertNoThreadsBeyond(Collection<Thread> baseline) {
    List<Thread> extra = List.of();
    for (int i = 0; i < 50; i++) {
      extra = new ArrayList<>(liveThreads());
      extra.removeAll(baseline);
      if (extra.isEmpty()) {
        return;
      }
      sleep(200);
    }
    fail(extra.size() + " threads alive that were not before the cycles, by name: "
        + extra.stream()
            .collect(Collectors.groupingBy(Thread::getName, TreeMap::new, Collectors.counting())));
  }

  /**
   * Waits (at most about 10 s) until the process has no more open descriptors than {@code
   * baseline} listed; fails with both listings, side by side by number.
   */
  public static void assertNoFdsBeyond(List<String> baseline) {
    List<String> now = List.of();
    for (int i = 0; i < 50; i++) {
      now = openFds();
      if (now.size() <= baseline.size()) {
        return;
      }
      sleep(200);
    }
    TreeMap<Integer, String> diff = new TreeMap<>();
    for (String e : now) {
      if (!baseline.contains(e)) {
        diff.put(fdNumber(e), "+ " + e);
      }
    }
    for (String e : baseline) {
      if (!now.contains(e)) {
        diff.put(fdNumber(e), "- " + e);
      }
    }
    fail("open descriptors: " + baseline.size() + " before, " + now.size() + " after; changed"
        + " (first 20): " + diff.values().stream().limit(20).toList());
  }

  private static void sleep(long ms) {
    try {
      TimeUnit.MILLISECONDS.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
