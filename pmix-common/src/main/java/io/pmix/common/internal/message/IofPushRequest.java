package io.pmix.common.internal.message;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * IOF_PUSH (23), standard input for the targets: SIZE ntargets, [PROC[ntargets]], SIZE ndirs,
 * [INFO[ndirs]], then the data as a BYTE_OBJECT unit, absent for end of input (docs/commands.md §4).
 * The reply is a status.
 *
 * @param targets whose standard input
 * @param directives the push's directives
 * @param data the bytes (copied in and out), or null for end of input
 */
// Arrays as components: the record copies them in and out and compares contents.
@SuppressWarnings("ArrayRecordComponent")
public record IofPushRequest(List<Proc> targets, List<Info> directives, byte @Nullable [] data)
    implements Request {
  /** Copies the lists and the data. */
  public IofPushRequest {
    targets = List.copyOf(targets);
    directives = List.copyOf(directives);
    data = data == null ? null : data.clone();
  }

  /** A copy of the data, or null for end of input. */
  @Override
  public byte @Nullable [] data() {
    return data == null ? null : data.clone();
  }

  @Override
  public Command command() {
    return Command.IOF_PUSH;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    Units.writeProcs(w, targets);
    Units.writeInfos(w, directives);
    if (data != null) {
      w.packByteObject(data);
    }
  }

  /** Reads the fields after the COMMAND unit. */
  public static IofPushRequest decode(PmixReader r) {
    return Units.decoding(
        "IOF_PUSH",
        () -> {
          List<Proc> targets = Units.readProcs(r);
          List<Info> directives = Units.readInfos(r);
          byte[] data = r.hasRemaining() ? r.unpackByteObject() : null;
          return new IofPushRequest(targets, directives, data);
        });
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IofPushRequest p
        && p.targets.equals(targets)
        && p.directives.equals(directives)
        && Arrays.equals(p.data, data);
  }

  @Override
  public int hashCode() {
    return Objects.hash(targets, directives) * 31 + Arrays.hashCode(data);
  }

  @Override
  public String toString() {
    return "IofPushRequest[targets=" + targets + ", directives=" + directives + ", data="
        + (data == null ? "end of input" : data.length + " bytes") + "]";
  }
}
