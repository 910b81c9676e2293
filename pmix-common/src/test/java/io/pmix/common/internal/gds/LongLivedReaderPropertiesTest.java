package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.WireFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A reader attached once and read from while the server keeps writing (what a client does for its
 * whole life) answers every get as the store holds it at that moment: the search remembers what it
 * read before (docs/gds.md §7, "A search by key"), and new keys, keys replaced in place, keys
 * replaced by a value of another size (the old record invalidated), chains running on over
 * extension slots and into new data segments must all be seen. Random writes and gets of three
 * ranks, against a model of what was stored, in ds21 and ds12; and once a reader has kept the
 * writer's lock for good, no value older than the server's.
 */
class LongLivedReaderPropertiesTest {
  private static final Duration T = Duration.ofSeconds(5);
  private static final List<String> KEYS =
      List.of("k0", "k1", "k2", "k3", "key.four", "k5", "k6", "a.longer.key.of.some.length");
  private static final String NS = "job1";
  private static final int RANKS = 3;

  /** One step: a store of some keys of a rank, or a get of one key of one rank. */
  sealed interface Step permits Store, Get, LoseLock {}

  /**
   * A reader stops inside a read and never lets go (killed in ds12's rwlock, stopped in ds21):
   * the writer's lock is not granted again.
   */
  record LoseLock() implements Step {}

  /** The server stores {@code values} for {@code rank} (one write of the server). */
  record Store(int rank, Map<String, String> values) implements Step {}

  /** The client gets {@code key} of {@code rank}. */
  record Get(int rank, String key) implements Step {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Integer> rank = Arbitraries.integers().between(0, RANKS - 1);
    Arbitrary<String> key = Arbitraries.of(KEYS);
    // Sizes that repeat (replaced in place) and differ (invalidated), and some long ones that
    // fill a 4 KiB segment quickly.
    Arbitrary<String> value =
        Arbitraries.oneOf(
            Arbitraries.strings().withCharRange('a', 'c').ofMaxLength(4),
            Arbitraries.strings().withCharRange('a', 'c').ofMinLength(200).ofMaxLength(600));
    Arbitrary<Step> store =
        Combinators.combine(rank, Arbitraries.maps(key, value).ofMinSize(1).ofMaxSize(4))
            .as(Store::new);
    Arbitrary<Step> get = Combinators.combine(rank, key).as(Get::new);
    return Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(1, store), net.jqwik.api.Tuple.of(2, get))
        .list()
        .ofMinSize(1)
        .ofMaxSize(60);
  }

  @Property(tries = 150)
  void answersEveryGetAsTheStoreNowHoldsIt(@ForAll("steps") List<Step> steps) throws IOException {
    for (GdsKind kind : List.of(GdsKind.DS21, GdsKind.DS12)) {
      check(kind, steps, T);
    }
  }

  @Provide
  Arbitrary<List<Step>> stepsLosingTheLock() {
    return Combinators.combine(steps(), steps())
        .as(
            (before, after) -> {
              List<Step> all = new java.util.ArrayList<>(before);
              all.add(new LoseLock());
              all.addAll(after);
              return all;
            });
  }

  /**
   * Once the writer's lock is lost, what could not be written is never answered with an older
   * value: a rank written since is not found (its readers ask the server), a rank not written
   * since answers as before (docs/gds.md §10, "A lost lock").
   */
  @Property(tries = 25)
  void aLostLockLeavesNoOlderValueReadable(@ForAll("stepsLosingTheLock") List<Step> steps)
      throws IOException {
    for (GdsKind kind : List.of(GdsKind.DS21, GdsKind.DS12)) {
      check(kind, steps, Duration.ofMillis(50));
    }
  }

  private static void check(GdsKind kind, List<Step> steps, Duration writeTimeout)
      throws IOException {
    Path parent = Files.createTempDirectory("pmix-gds-search");
    try {
      Map<String, String> env = Map.of("NS_DATA_SEG_SIZE", "4096");
      try (DstoreWriter w =
          DstoreWriter.create(
              kind,
              parent.resolve("pmix_dstor_" + kind.libpmixName() + "_1"),
              WireFormat.DEFAULT,
              writeTimeout,
              env)) {
        w.addNamespace(NS, RANKS);
        // The lost lock is a reader's of another namespace (ds21: the writer takes every
        // namespace's), so that this test's own reader of NS keeps its own.
        w.addNamespace("other", 1);
        Map<Integer, Map<String, String>> model = new HashMap<>();
        java.util.Set<Integer> hidden = new java.util.HashSet<>();
        HeldReaderLock lost = null;
        try (DstoreReader r = DstoreReader.attach(kind, w.directory(), NS, WireFormat.DEFAULT, T)) {
          for (Step s : steps) {
            if (s instanceof LoseLock) {
              lost =
                  kind == GdsKind.DS21
                      ? HeldReaderLock.take(w.directory(), "other")
                      : HeldReaderLock.takeDs12(w.directory());
            } else if (s instanceof Store st) {
              Map<String, Value> values = new LinkedHashMap<>();
              st.values().forEach((k, v) -> values.put(k, Value.of(v)));
              try {
                w.store(NS, st.rank(), values);
              } catch (io.pmix.common.PmixException e) {
                assertEquals(io.pmix.common.Status.ERR_TIMEOUT, e.status(), e::toString);
              }
              if (lost != null) {
                hidden.add(st.rank()); // the first write after the loss retires the store
              } else {
                model.computeIfAbsent(st.rank(), x -> new HashMap<>()).putAll(st.values());
              }
            } else if (hidden.contains(((Get) s).rank())) {
              GdsModule.Fetched f = get(r, (Get) s);
              assertFalse(f instanceof GdsModule.Fetched.Found, () -> kind + " " + s + ": " + f);
            } else {
              Get g = (Get) s;
              assertEquals(expected(model, g.rank(), g.key()), get(r, g), () -> kind + " " + g);
            }
          }
          // Every key of every rank at the end, twice: once after the steps, once from what the
          // first pass learned.
          for (int pass = 0; pass < 2; pass++) {
            for (int rank = 0; rank < RANKS; rank++) {
              for (String key : KEYS) {
                Get g = new Get(rank, key);
                GdsModule.Fetched f = get(r, g);
                if (hidden.contains(rank)) {
                  assertFalse(f instanceof GdsModule.Fetched.Found, () -> kind + " " + g + ": " + f);
                } else {
                  assertEquals(expected(model, rank, key), f, () -> kind + " at the end " + g);
                }
              }
            }
          }
          assertEquals(!hidden.isEmpty(), w.retired(), kind::toString);
        } finally {
          if (lost != null) {
            lost.close();
          }
        }
      }
    } finally {
      try (Stream<Path> left = Files.walk(parent)) {
        left.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
  }

  private static GdsModule.Fetched get(DstoreReader r, Get g) {
    return r.fetch(Proc.of(NS, g.rank()), g.key());
  }

  private static GdsModule.Fetched expected(
      Map<Integer, Map<String, String>> model, int rank, String key) {
    Map<String, String> m = model.get(rank);
    if (m == null) {
      return new GdsModule.Fetched.NoProc();
    }
    String v = m.get(key);
    return v == null ? new GdsModule.Fetched.NoKey() : new GdsModule.Fetched.Found(Value.of(v));
  }
}
