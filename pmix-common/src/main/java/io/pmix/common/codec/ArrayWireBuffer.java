package io.pmix.common.codec;

import io.netty.buffer.ByteBuf;
import io.pmix.common.internal.NativeBytes;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/** A {@link WireBuffer} over a byte array that grows as it is written (JDK only). */
final class ArrayWireBuffer extends WireBuffer {
  /** The largest array the JDK reliably allocates. */
  private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

  private byte[] array;
  /** Where index 0 lies in {@link #array}. */
  private int base;

  private int reader;
  private int writer;
  /** A slice of another buffer's bytes: never written. */
  private final boolean readOnly;
  /** The end of the part of {@link #array} this buffer may write (a wrapped range ends early). */
  private int limit;

  /**
   * A buffer over {@code array} from {@code base}, its readable bytes {@code [reader, writer)};
   * it writes in place up to {@code limit} (an index of the array) and copies beyond.
   */
  ArrayWireBuffer(byte[] array, int base, int reader, int writer, int limit) {
    this(array, base, reader, writer, limit, false);
  }

  private ArrayWireBuffer(
      byte[] array, int base, int reader, int writer, int limit, boolean readOnly) {
    this.array = array;
    this.base = base;
    this.reader = reader;
    this.writer = writer;
    this.limit = limit;
    this.readOnly = readOnly;
  }

  @Override
  @Nullable ByteBuf byteBuf() {
    return null;
  }

  /** The backing array (for a write to a channel: {@link #arrayOffset} onwards). */
  byte[] array() {
    return array;
  }

  /** Where index 0 lies in {@link #array}. */
  int arrayOffset() {
    return base;
  }

  @Override
  public int readerIndex() {
    return reader;
  }

  @Override
  public void readerIndex(int index) {
    if (index < 0 || index > writer) {
      throw new IndexOutOfBoundsException("reader index " + index + " of 0.." + writer);
    }
    reader = index;
  }

  @Override
  public int writerIndex() {
    return writer;
  }

  /** The index {@code n} bytes on, checked against what is readable. */
  private int take(int n) {
    int r = reader;
    if (n > writer - r) {
      throw new IndexOutOfBoundsException(n + " bytes wanted, " + (writer - r) + " readable");
    }
    reader = r + n;
    return base + r;
  }

  private int at(int index, int n) {
    if (index < 0 || n > writer - index) {
      throw new IndexOutOfBoundsException(
          n + " bytes at " + index + " of a buffer of " + writer + " bytes");
    }
    return base + index;
  }

  @Override
  public byte readByte() {
    return array[take(1)];
  }

  @Override
  public short readShort() {
    int i = take(2);
    return (short) ((array[i] << 8) | (array[i + 1] & 0xff));
  }

  @Override
  public int readInt() {
    return intAt(take(4));
  }

  private int intAt(int i) {
    byte[] a = array;
    return (a[i] << 24) | ((a[i + 1] & 0xff) << 16) | ((a[i + 2] & 0xff) << 8) | (a[i + 3] & 0xff);
  }

  @Override
  public long readLong() {
    int i = take(8);
    return ((long) intAt(i) << 32) | (intAt(i + 4) & 0xffffffffL);
  }

  @Override
  public void readBytes(byte[] dst) {
    System.arraycopy(array, take(dst.length), dst, 0, dst.length);
  }

  @Override
  public WireBuffer readSlice(int length) {
    if (length < 0) {
      throw new IllegalArgumentException("negative length " + length);
    }
    int at = take(length);
    return new ArrayWireBuffer(array, at, 0, length, at + length, true);
  }

  @Override
  public void discardReadBytes() {
    checkWritable();
    int r = reader;
    if (r == 0) {
      return;
    }
    int n = writer - r;
    if (n > 0) {
      System.arraycopy(array, base + r, array, base, n);
    }
    reader = 0;
    writer = n;
  }

  private void checkWritable() {
    if (readOnly) {
      throw new IllegalStateException("a slice of another buffer is read-only");
    }
  }

  @Override
  public void skipBytes(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("negative skip " + n);
    }
    take(n);
  }

  @Override
  public byte getByte(int index) {
    return array[at(index, 1)];
  }

  @Override
  public int getInt(int index) {
    return intAt(at(index, 4));
  }

  @Override
  public int indexOf(int from, int to, byte value) {
    int lo = Math.max(from, 0);
    int hi = Math.min(to, writer);
    byte[] a = array;
    for (int i = lo; i < hi; i++) {
      if (a[base + i] == value) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public String toString(int index, int length, Charset charset) {
    return new String(array, at(index, length), length, charset);
  }

  @Override
  public ByteBuffer nioBuffer(int index, int length) {
    return ByteBuffer.wrap(array, at(index, length), length).slice().asReadOnlyBuffer();
  }

  @Override
  public void getBytes(int index, ByteBuffer dst) {
    int n = dst.remaining();
    dst.put(array, at(index, n), n);
  }

  @Override
  public void getBytes(int index, byte[] dst, int dstOffset, int length) {
    System.arraycopy(array, at(index, length), dst, dstOffset, length);
  }

  @Override
  public boolean contentEquals(int index, byte[] other, int otherOffset, int length) {
    // Natively where it can: a client compares each direct-modex answer with the last one here.
    return NativeBytes.equal(array, at(index, length), other, otherOffset, length);
  }

  /** Makes room for {@code n} more bytes and returns where they go in {@link #array}. */
  private int room(int n) {
    checkWritable();
    int w = writer;
    int end = base + w + n;
    if (end < 0 || end > limit) {
      long need = (long) w + n;
      if (need > MAX_ARRAY) {
        throw new IndexOutOfBoundsException("a buffer of more than " + MAX_ARRAY + " bytes");
      }
      int cap = (int) Math.min(MAX_ARRAY, Math.max(need, Math.max(64L, 2L * w)));
      // The old bytes before index 0 are not kept: the copy starts at base.
      array = Arrays.copyOfRange(array, base, base + cap);
      base = 0;
      limit = cap;
    }
    writer = w + n;
    return base + w;
  }

  @Override
  public void writeByte(int b) {
    // room() may replace the array: take the index before reading the field.
    int i = room(1);
    array[i] = (byte) b;
  }

  @Override
  public void writeShort(int v) {
    int i = room(2);
    array[i] = (byte) (v >>> 8);
    array[i + 1] = (byte) v;
  }

  @Override
  public void writeInt(int v) {
    putInt(room(4), v);
  }

  @Override
  public void setInt(int index, int v) {
    checkWritable();
    putInt(at(index, 4), v);
  }

  /** Stores {@code v} big-endian at array position {@code i}. */
  private void putInt(int i, int v) {
    byte[] a = array;
    a[i] = (byte) (v >>> 24);
    a[i + 1] = (byte) (v >>> 16);
    a[i + 2] = (byte) (v >>> 8);
    a[i + 3] = (byte) v;
  }

  @Override
  public void writeLong(long v) {
    writeInt((int) (v >>> 32));
    writeInt((int) v);
  }

  @Override
  public void writeBytes(byte[] src, int offset, int length) {
    if (offset < 0 || length < 0 || offset > src.length - length) {
      throw new IndexOutOfBoundsException(
          "range " + offset + "+" + length + " of an array of " + src.length);
    }
    int i = room(length);
    System.arraycopy(src, offset, array, i, length);
  }
}
