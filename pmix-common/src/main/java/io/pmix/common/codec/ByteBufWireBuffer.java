package io.pmix.common.codec;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.util.Objects;

/** A {@link WireBuffer} that is a view of a Netty {@link ByteBuf} (the server's buffers). */
final class ByteBufWireBuffer extends WireBuffer {
  private final ByteBuf buf;

  /**
   * A view of {@code buf}. Declared as the supertype: verifying {@link WireBuffer#of} then does not
   * load this class, which a client's connector (byte arrays only) never uses.
   */
  static WireBuffer over(ByteBuf buf) {
    return new ByteBufWireBuffer(buf);
  }

  ByteBufWireBuffer(ByteBuf buf) {
    this.buf = requireNonNull(buf, "buf");
  }

  @Override
  ByteBuf byteBuf() {
    return buf;
  }

  @Override
  public int readerIndex() {
    return buf.readerIndex();
  }

  @Override
  public void readerIndex(int index) {
    buf.readerIndex(index);
  }

  @Override
  public int writerIndex() {
    return buf.writerIndex();
  }

  @Override
  public byte readByte() {
    return buf.readByte();
  }

  @Override
  public short readShort() {
    return buf.readShort();
  }

  @Override
  public int readInt() {
    return buf.readInt();
  }

  @Override
  public long readLong() {
    return buf.readLong();
  }

  @Override
  public void readBytes(byte[] dst) {
    buf.readBytes(dst);
  }

  @Override
  public WireBuffer readSlice(int length) {
    return new ByteBufWireBuffer(buf.readSlice(length));
  }

  @Override
  public void discardReadBytes() {
    buf.discardReadBytes();
  }

  @Override
  public void skipBytes(int n) {
    buf.skipBytes(n);
  }

  @Override
  public byte getByte(int index) {
    return buf.getByte(index);
  }

  @Override
  public int getInt(int index) {
    return buf.getInt(index);
  }

  @Override
  public int indexOf(int from, int to, byte value) {
    return buf.indexOf(from, to, value);
  }

  @Override
  public String toString(int index, int length, Charset charset) {
    return buf.toString(index, length, charset);
  }

  @Override
  public ByteBuffer nioBuffer(int index, int length) {
    return buf.nioBuffer(index, length).asReadOnlyBuffer();
  }

  @Override
  public void getBytes(int index, ByteBuffer dst) {
    int n = dst.remaining();
    if (index < 0 || n > buf.writerIndex() - index) {
      throw new IndexOutOfBoundsException(
          n + " bytes at " + index + " of a buffer of " + buf.writerIndex() + " bytes");
    }
    buf.getBytes(index, dst);
  }

  @Override
  public void getBytes(int index, byte[] dst, int dstOffset, int length) {
    checkRange(index, length);
    buf.getBytes(index, dst, dstOffset, length);
  }

  @Override
  public boolean contentEquals(int index, byte[] other, int otherOffset, int length) {
    checkRange(index, length);
    Objects.checkFromIndexSize(otherOffset, length, other.length);
    for (int i = 0; i < length; i++) {
      if (buf.getByte(index + i) != other[otherOffset + i]) {
        return false;
      }
    }
    return true;
  }

  private void checkRange(int index, int n) {
    if (index < 0 || n < 0 || n > buf.writerIndex() - index) {
      throw new IndexOutOfBoundsException(
          n + " bytes at " + index + " of a buffer of " + buf.writerIndex() + " bytes");
    }
  }

  @Override
  public void writeByte(int b) {
    buf.writeByte(b);
  }

  @Override
  public void writeShort(int v) {
    buf.writeShort(v);
  }

  @Override
  public void writeInt(int v) {
    buf.writeInt(v);
  }

  @Override
  public void setInt(int index, int v) {
    buf.setInt(index, v);
  }

  @Override
  public void writeLong(long v) {
    buf.writeLong(v);
  }

  @Override
  public void writeBytes(byte[] src, int offset, int length) {
    buf.writeBytes(src, offset, length);
  }
}
