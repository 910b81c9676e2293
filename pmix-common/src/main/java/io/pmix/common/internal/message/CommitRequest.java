package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Scope;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * COMMIT (2): sections until the end, each a SCOPE unit and a BUFFER unit holding that scope's
 * values as KVAL units (docs/commands.md §3.3). A 4.2.2 client sends a LOCAL section with every key
 * put LOCAL or GLOBAL since its last commit, then a REMOTE section with every key put REMOTE or
 * GLOBAL, leaving an empty section out.
 *
 * @param sections in wire order
 */
public record CommitRequest(List<Section> sections) implements Request {
  /**
   * One section: the SCOPE code (kept raw, as the server sorts by it) and the values. The inner
   * buffer is written in the outer buffer's format; a decoded section was read in the format its
   * BUFFER unit names.
   *
   * @param scope the {@code pmix_scope_t} code
   * @param kvals the values, a null key as C may send one
   */
  public record Section(int scope, List<Value.KVal> kvals) {
    /** Copies the values. */
    public Section {
      kvals = List.copyOf(kvals);
    }
  }

  /** Copies the sections. */
  public CommitRequest {
    sections = List.copyOf(sections);
  }

  /** The commit of a 4.2.2 client: a LOCAL and a REMOTE section, each left out when empty. */
  public static CommitRequest of(Map<String, Value> local, Map<String, Value> remote) {
    List<Section> s = new ArrayList<>(2);
    section(s, Scope.LOCAL, local);
    section(s, Scope.REMOTE, remote);
    return new CommitRequest(s);
  }

  private static void section(List<Section> out, Scope scope, Map<String, Value> kvs) {
    if (kvs.isEmpty()) {
      return;
    }
    List<Value.KVal> kv = new ArrayList<>(kvs.size());
    for (Map.Entry<String, Value> e : kvs.entrySet()) { // not forEach's lambda: a first commit
      kv.add(new Value.KVal(requireNonNull(e.getKey()), e.getValue()));
    }
    out.add(new Section(scope.code(), kv));
  }

  @Override
  public Command command() {
    return Command.COMMIT;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    for (Section s : sections) {
      WireBuffer inner = WireBuffer.allocate();
      PmixWriter iw = new PmixWriter(inner, w.format());
      for (Value.KVal kv : s.kvals()) {
        iw.pack(kv);
      }
      w.packByteEnum(DataType.SCOPE, s.scope());
      w.pack(new Value.Buffer(w.format().bufferType().code(), inner.toByteArray()));
    }
  }

  /** Reads the sections after the COMMAND unit, each inner buffer in the format it names. */
  public static CommitRequest decode(PmixReader r) {
    return Units.decoding(
        "COMMIT",
        () -> {
          List<Section> sections = new ArrayList<>();
          while (r.hasRemaining()) {
            int scope = r.unpackByteEnum(DataType.SCOPE);
            PmixReader inner = r.unpackBufferReader(); // the inner buffer read in place
            List<Value.KVal> kvs = new ArrayList<>();
            while (inner.hasRemaining()) {
              kvs.add((Value.KVal) inner.unpackOne(DataType.KVAL));
            }
            sections.add(new Section(scope, kvs));
          }
          return new CommitRequest(sections);
        });
  }
}
