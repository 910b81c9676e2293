package io.pmix.dataserver.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Frame;
import java.util.function.Consumer;

/** Bytes of data-server messages for handler tests, and decoded replies. */
final class Wire {
  private Wire() {}

  /** A request's frame bytes: header and payload. */
  static byte[] request(int command, int id, Consumer<PmixWriter> fields) {
    Frame f = DsProtocol.build(DsProtocol.request(ByteBufAllocator.DEFAULT, command, id), fields);
    try {
      return frameBytes(f.payload());
    } finally {
      f.release();
    }
  }

  /** A frame around arbitrary payload bytes. */
  static byte[] frameBytes(ByteBuf payload) {
    ByteBuf b = Unpooled.buffer();
    try {
      b.writeInt(0).writeInt(0).writeInt(payload.readableBytes()).writeInt(0);
      b.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  static byte[] hello() {
    return request(
        DsProtocol.HELLO,
        1,
        w -> {
          w.packString(DsProtocol.MAGIC);
          w.packUInt32(DsProtocol.VERSION);
          w.packString("test");
        });
  }

  /** A decoded reply: header, status, and a reader positioned after the status. */
  record Reply(int command, int id, Status status, PmixReader rest) {}

  /** Decodes one outbound message (the encoder's header + payload buffer), releasing it. */
  static Reply decode(ByteBuf out) {
    try {
      ByteBuf copy = Unpooled.copiedBuffer(out);
      copy.skipBytes(16);
      PmixReader r = new PmixReader(copy);
      DsProtocol.Header h = DsProtocol.header(r);
      Status s = r.unpackStatus();
      return new Reply(h.command(), h.requestId(), s, r);
    } finally {
      out.release();
    }
  }
}
