package io.pmix.common.internal.wire;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;

/** Feeding and draining {@link EmbeddedChannel}s in decoder tests. */
final class Channels {
  private Channels() {}

  /** Writes each segment inbound, then returns every message that came out, in order. */
  static List<Object> feed(EmbeddedChannel channel, List<byte[]> segments) {
    for (byte[] segment : segments) {
      boolean unused = channel.writeInbound(Unpooled.wrappedBuffer(segment));
    }
    return drainInbound(channel);
  }

  static List<Object> drainInbound(EmbeddedChannel channel) {
    List<Object> messages = new ArrayList<>();
    for (Object m; (m = channel.readInbound()) != null; ) {
      messages.add(m);
    }
    return messages;
  }

  static void releaseAll(List<?> messages) {
    for (Object m : messages) {
      ReferenceCountUtil.release(m);
    }
  }
}
