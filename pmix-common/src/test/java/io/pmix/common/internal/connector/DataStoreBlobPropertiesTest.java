package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.GetNbReply;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * A peer's direct-modex answers (GETNB blobs), stored one after another: whatever the blobs, the
 * store answers what storing every unit of every blob in order gives, although a blob that begins
 * with the previous one is read only from where that one ended (DataStore's lastBlob).
 */
class DataStoreBlobPropertiesTest {
  private static final String NS = "blobjob";
  private static final Proc PEER = Proc.of(NS, 1);

  /** One unit: a key of a small set (so that later blobs replace values) and its value. */
  private record Unit(String key, int value) {}

  /**
   * How the next blob is made from the previous one: the previous units and {@code more} after
   * them (a new commit, as servers answer), or {@code more} alone, or the previous units with one
   * value changed ({@code changeAt}) and {@code more} after them.
   */
  private record Step(int kind, int changeAt, List<Unit> more) {}

  private static byte[] blob(List<Unit> units) {
    return blob(PEER, units);
  }

  private static byte[] blob(Proc proc, List<Unit> units) {
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b);
    w.pack(proc);
    for (Unit u : units) {
      w.pack(new Value.KVal(u.key(), Value.of(u.value())));
    }
    byte[] out = new byte[b.readableBytes()];
    b.readBytes(out);
    return out;
  }

  private static DataStore store() {
    return new DataStore(Proc.of(NS, 0), "vm", WireFormat.DEFAULT);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Unit> unit =
        Combinators.combine(Arbitraries.of("a", "b", "c", "d", "e"), Arbitraries.integers())
            .as(Unit::new);
    Arbitrary<Step> step =
        Combinators.combine(
                Arbitraries.integers().between(0, 5),
                Arbitraries.integers().between(0, 20),
                unit.list().ofMaxSize(3))
            .as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(12);
  }

  /**
   * Feeds {@code blob} to {@code store} as a client gets it: one blob of a GETNB answer, read in
   * place from a frame that holds other bytes before and after it ({@link
   * GetNbReply#decodeInPlace}), the frame overwritten once the store has it.
   */
  private static void ingestFromReply(DataStore store, byte[] blob, Proc target) {
    WireBuffer frame = WireBuffer.allocate();
    frame.writeBytes(new byte[] {9, 9, 9}, 0, 3); // what the frame held before the payload
    new GetNbReply(Status.SUCCESS, List.of(blob)).encode(new PmixWriter(frame, WireFormat.DEFAULT));
    frame.writeBytes(new byte[] {8, 8}, 0, 2); // a next frame's first bytes
    byte[] array = frame.toByteArray();
    PmixReader r =
        new PmixReader(WireBuffer.wrap(array, 3, array.length - 5), WireFormat.DEFAULT);
    List<WireBuffer> views = new ArrayList<>();
    assertEquals(Status.SUCCESS, GetNbReply.decodeInPlace(r, views));
    assertEquals(1, views.size());
    store.ingestGetBlob(views.get(0), target);
    Arrays.fill(array, (byte) 0x55); // the connection reuses its buffer: nothing may point into it
  }

  @Property(tries = 300)
  void storedValuesAreThoseOfEveryUnitInOrder(@ForAll("steps") List<Step> steps) {
    DataStore store = store();
    DataStore inPlace = store();
    Map<String, Integer> model = new HashMap<>();
    List<Unit> previous = new ArrayList<>();
    for (Step s : steps) {
      List<Unit> units = new ArrayList<>();
      if (s.kind() <= 3) {
        units.addAll(previous); // the usual answer: what the rank had, and its new commit
      } else if (s.kind() == 4 && !previous.isEmpty()) {
        units.addAll(previous);
        int i = s.changeAt() % units.size();
        units.set(i, new Unit(units.get(i).key(), units.get(i).value() + 1));
      }
      units.addAll(s.more());
      store.ingestGetBlob(blob(units), PEER);
      ingestFromReply(inPlace, blob(units), PEER);
      for (Unit u : units) {
        model.put(u.key(), u.value());
      }
      previous = units;
      for (Map.Entry<String, Integer> e : model.entrySet()) {
        for (DataStore st : List.of(store, inPlace)) {
          DataStore.Lookup l = st.lookup(PEER, e.getKey(), List.of());
          assertEquals(
              Value.of(e.getValue()),
              assertInstanceOf(DataStore.Lookup.Found.class, l, e.getKey()).value(),
              e.getKey());
        }
      }
    }
  }

  /**
   * A blob that fails to decode part-way keeps what came before the failure, and the next blob
   * is read whole: nothing of the failed one counts as stored already.
   */
  @Property(tries = 50)
  void aBlobThatFailsIsNotTakenAsStored(
      @ForAll @Size(min = 1, max = 4) List<@IntRange(max = 100) Integer> values) {
    DataStore store = store();
    List<Unit> units = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      units.add(new Unit("k" + i, values.get(i)));
    }
    store.ingestGetBlob(blob(units.subList(0, 1)), PEER);
    byte[] good = blob(units);
    byte[] broken = Arrays.copyOf(good, good.length + 1);
    broken[good.length] = (byte) 0x7f; // no such data type
    assertThrows(PmixException.class, () -> store.ingestGetBlob(broken, PEER));
    List<Unit> more = new ArrayList<>(units);
    more.add(new Unit("late", 7));
    store.ingestGetBlob(blob(more), PEER);
    for (Unit u : more) {
      assertEquals(Value.of(u.value()), found(store, u.key()));
    }
  }

  @Test
  void forgettingTheNamespaceForgetsItsBlobs() {
    DataStore store = store();
    Proc other = Proc.of("other", 1);
    store.ingestGetBlob(blob(other, List.of(new Unit("a", 1))), other);
    store.forgetNamespace("other");
    assertEquals(0, store.size());
    store.ingestGetBlob(blob(List.of(new Unit("a", 1))), PEER);
    store.clear();
    assertEquals(0, store.size());
  }

  private static Value found(DataStore store, String key) {
    DataStore.Lookup l = store.lookup(PEER, key, List.of());
    return assertInstanceOf(DataStore.Lookup.Found.class, l, key).value();
  }
}
