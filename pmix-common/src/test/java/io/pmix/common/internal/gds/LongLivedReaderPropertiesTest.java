package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * ranks, against a model of what was stored, in ds21 and ds12.
 */
class LongLivedReaderPropertiesTest {
  private static final Duration T = Duration.ofSeconds(5);
  private static final List<String> KEYS =
      List.of("k0", "k1", "k2", "k3", "key.four", "k5", "k6", "a.longer.key.of.some.length");
  private static final String NS = "job1";
  private static final int RANKS = 3;

  /** One step: a store of some keys of a rank, or a get of one key of one rank. */
  sealed interface Step permits Store, Get {}

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
      check(kind, steps);
    }
  }

  private static void check(GdsKind kind, List<Step> steps) throws IOException {
    Path parent = Files.createTempDirectory("pmix-gds-search");
    try {
      Map<String, String> env = Map.of("NS_DATA_SEG_SIZE", "4096");
      try (DstoreWriter w =
          DstoreWriter.create(
              kind,
              parent.resolve("pmix_dstor_" + kind.libpmixName() + "_1"),
              WireFormat.DEFAULT,
              T,
              env)) {
        w.addNamespace(NS, RANKS);
        Map<Integer, Map<String, String>> model = new HashMap<>();
        try (DstoreReader r = DstoreReader.attach(kind, w.directory(), NS, WireFormat.DEFAULT, T)) {
          for (Step s : steps) {
            if (s instanceof Store st) {
              Map<String, Value> values = new LinkedHashMap<>();
              st.values().forEach((k, v) -> values.put(k, Value.of(v)));
              w.store(NS, st.rank(), values);
              model.computeIfAbsent(st.rank(), x -> new HashMap<>()).putAll(st.values());
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
                assertEquals(expected(model, rank, key), get(r, g), () -> kind + " at the end " + g);
              }
            }
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
