package io.pmix.tool;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One piece of output a server forwarded to this tool after {@link PMIxTool#iofPull}. Immutable:
 * the bytes are copied in and out.
 *
 * @param source the process that wrote it
 * @param channels the channel(s) it came from (normally one)
 * @param data the bytes, possibly none (the end of a stream carries {@code pmix.iof.cmp})
 * @param info what the server attached
 */
@SuppressWarnings("ArrayRecordComponent") // Copied in and out; equals/hashCode use the contents.
public record IofOutput(Proc source, Set<IofChannel> channels, byte[] data, List<Info> info) {
  /** Checks for nulls and copies. */
  public IofOutput {
    requireNonNull(source, "source");
    channels = Set.copyOf(channels);
    data = requireNonNull(data, "data").clone();
    info = List.copyOf(info);
  }

  /** A copy of the bytes. */
  @Override
  public byte[] data() {
    return data.clone();
  }

  /** The bytes as UTF-8 text. */
  public String text() {
    return new String(data, UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IofOutput x
        && source.equals(x.source)
        && channels.equals(x.channels)
        && Arrays.equals(data, x.data)
        && info.equals(x.info);
  }

  @Override
  public int hashCode() {
    return Objects.hash(source, channels, Arrays.hashCode(data), info);
  }

  @Override
  public String toString() {
    return "IofOutput{" + source + " " + channels + ", " + data.length + " bytes}";
  }
}
