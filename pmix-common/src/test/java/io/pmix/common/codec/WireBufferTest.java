package io.pmix.common.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The array-backed buffer means what Netty's ByteBuf means by the same methods: the codec reads
 * and writes both, and a byte-exact wire depends on their agreeing (big-endian integers, indices,
 * growth past the first capacity, views).
 */
class WireBufferTest {
  /** One write: an opcode and a value. */
  record Op(int code, long value, byte[] bytes) {}

  @Provide
  Arbitrary<List<Op>> writes() {
    Arbitrary<Op> op =
        Arbitraries.integers()
            .between(0, 4)
            .flatMap(
                code ->
                    Arbitraries.longs()
                        .flatMap(
                            v ->
                                Arbitraries.bytes()
                                    .array(byte[].class)
                                    .ofMaxSize(200)
                                    .map(b -> new Op(code, v, b))));
    return op.list().ofMaxSize(60);
  }

  private static void apply(Op op, WireBuffer w, ByteBuf b) {
    switch (op.code()) {
      case 0 -> {
        w.writeByte((int) op.value());
        b.writeByte((int) op.value());
      }
      case 1 -> {
        w.writeShort((int) op.value());
        b.writeShort((int) op.value());
      }
      case 2 -> {
        w.writeInt((int) op.value());
        b.writeInt((int) op.value());
      }
      case 3 -> {
        w.writeLong(op.value());
        b.writeLong(op.value());
      }
      default -> {
        w.writeBytes(op.bytes());
        b.writeBytes(op.bytes());
      }
    }
  }

  @Property(tries = 300)
  void writesAndReadsAsNettyDoes(@ForAll("writes") List<Op> ops) {
    WireBuffer w = WireBuffer.allocate(1);
    ByteBuf b = Unpooled.buffer(1);
    for (Op op : ops) {
      apply(op, w, b);
    }
    assertEquals(b.readableBytes(), w.readableBytes());
    assertArrayEquals(io.netty.buffer.ByteBufUtil.getBytes(b), w.toByteArray());
    for (Op op : ops) {
      switch (op.code()) {
        case 0 -> assertEquals(b.readUnsignedByte(), w.readUnsignedByte());
        case 1 -> assertEquals(b.readUnsignedShort(), w.readUnsignedShort());
        case 2 -> {
          assertEquals(b.getUnsignedInt(b.readerIndex()), w.getUnsignedInt(w.readerIndex()));
          assertEquals(b.readInt(), w.readInt());
        }
        case 3 -> assertEquals(b.readLong(), w.readLong());
        default -> {
          int n = op.bytes().length;
          assertEquals(
              b.toString(b.readerIndex(), n, StandardCharsets.ISO_8859_1),
              w.toString(w.readerIndex(), n, StandardCharsets.ISO_8859_1));
          byte[] x = new byte[n];
          w.readSlice(n).readBytes(x);
          assertArrayEquals(op.bytes(), x);
          b.skipBytes(n);
        }
      }
      assertEquals(b.readerIndex(), w.readerIndex());
    }
    assertEquals(0, w.readableBytes());
    b.release();
  }

  @Test
  void wrapReadsARangeAndGrowsOnWrite() {
    byte[] a = {9, 0, 0, 1, 2, 7};
    WireBuffer w = WireBuffer.wrap(a, 1, 4);
    assertEquals(4, w.readableBytes());
    assertEquals(0x102, w.getInt(0));
    assertEquals(2, w.indexOf(0, 4, (byte) 1));
    assertEquals(-1, w.indexOf(0, 4, (byte) 7)); // outside the range
    w.writeByte(5);
    assertArrayEquals(new byte[] {0, 0, 1, 2, 5}, w.toByteArray());
    assertEquals(7, a[5]); // the wrapped array is not written past the range
  }

  @Test
  void discardReadBytesKeepsTheUnreadOnes() {
    WireBuffer w = WireBuffer.allocate(4);
    w.writeInt(1);
    w.writeInt(2);
    assertEquals(1, w.readInt());
    w.discardReadBytes();
    assertEquals(0, w.readerIndex());
    assertEquals(4, w.writerIndex());
    assertEquals(2, w.readInt());
  }

  @Test
  void readingPastTheEndFailsAndMovesNothing() {
    WireBuffer w = WireBuffer.wrap(new byte[] {1, 2, 3});
    assertThrows(IndexOutOfBoundsException.class, w::readInt);
    assertEquals(0, w.readerIndex());
    assertThrows(IndexOutOfBoundsException.class, () -> w.getInt(1));
    assertThrows(IndexOutOfBoundsException.class, () -> w.readerIndex(4));
    assertThrows(IndexOutOfBoundsException.class, () -> WireBuffer.wrap(new byte[2], 1, 2));
  }

  @Test
  void aSliceIsReadOnlyAndANioViewSharesTheBytes() {
    WireBuffer w = WireBuffer.allocate();
    w.writeInt(0x01020304);
    WireBuffer s = w.readSlice(4);
    assertThrows(IllegalStateException.class, () -> s.writeByte(1));
    ByteBuffer nio = w.nioBuffer(0, 4);
    assertEquals(0x01020304, nio.getInt());
    w.setInt(0, 0x0a0b0c0d);
    assertEquals(0x0a0b0c0d, s.getInt(0));
  }

  @Test
  void getBytesCopiesWhatWasWrittenIntoADirectBufferAndMovesNoIndex() {
    ByteBuf netty = Unpooled.buffer(64);
    for (WireBuffer w : List.of(WireBuffer.allocate(2), WireBuffer.of(netty))) {
      w.writeInt(0x01020304);
      w.writeShort(0x0506);
      assertEquals(1, w.readUnsignedByte());
      ByteBuffer dst = ByteBuffer.allocateDirect(16);
      dst.limit(5);
      w.getBytes(1, dst);
      assertEquals(5, dst.position());
      dst.flip();
      byte[] got = new byte[5];
      dst.get(got);
      assertArrayEquals(new byte[] {2, 3, 4, 5, 6}, got);
      assertEquals(1, w.readerIndex());
      assertEquals(6, w.writerIndex());
      // Past what was written fails, even where a Netty buffer has capacity beyond it.
      ByteBuffer tooMany = ByteBuffer.allocateDirect(16);
      tooMany.limit(6);
      assertThrows(IndexOutOfBoundsException.class, () -> w.getBytes(1, tooMany));
      assertThrows(IndexOutOfBoundsException.class, () -> w.getBytes(-1, ByteBuffer.allocate(1)));
    }
    netty.release();
  }

  @Test
  void getBytesIntoAnArrayAndContentEqualsReadWhatWasWrittenAndMoveNoIndex() {
    ByteBuf netty = Unpooled.buffer(64);
    byte[] backing = {0, 0, 1, 2, 3, 4, 5, 6, 7, 0};
    List<WireBuffer> buffers =
        List.of(
            WireBuffer.allocate(2),
            WireBuffer.of(netty),
            // a view inside a larger array, as a frame's payload is
            WireBuffer.wrap(backing, 1, 8).readSlice(8));
    for (WireBuffer w : buffers) {
      if (w.writerIndex() == 0) {
        for (int b = 0; b < 8; b++) {
          w.writeByte(b);
        }
      }
      assertEquals(0, w.readUnsignedByte());
      byte[] dst = {9, 9, 9, 9, 9};
      w.getBytes(2, dst, 1, 3);
      assertArrayEquals(new byte[] {9, 2, 3, 4, 9}, dst);
      assertEquals(1, w.readerIndex());
      assertEquals(8, w.writerIndex());
      assertTrue(w.contentEquals(2, new byte[] {7, 2, 3, 4}, 1, 3));
      assertTrue(w.contentEquals(0, new byte[0], 0, 0));
      assertFalse(w.contentEquals(2, new byte[] {2, 3, 5}, 0, 3));
      assertFalse(w.contentEquals(7, new byte[] {6}, 0, 1));
      assertEquals(1, w.readerIndex());
      // Past what was written, or past the other array, fails.
      assertThrows(IndexOutOfBoundsException.class, () -> w.getBytes(6, new byte[8], 0, 3));
      assertThrows(IndexOutOfBoundsException.class, () -> w.getBytes(0, new byte[2], 0, 3));
      assertThrows(IndexOutOfBoundsException.class, () -> w.getBytes(-1, new byte[2], 0, 1));
      assertThrows(
          IndexOutOfBoundsException.class, () -> w.contentEquals(6, new byte[8], 0, 3));
      assertThrows(
          IndexOutOfBoundsException.class, () -> w.contentEquals(0, new byte[2], 0, 3));
    }
    netty.release();
  }
}
