package io.pmix.common.codec;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import org.jspecify.annotations.Nullable;

/**
 * The bytes a {@link PmixReader} reads and a {@link PmixWriter} appends to: a reader index and a
 * writer index over a sequence of bytes, integers big-endian, with the meaning Netty's {@code
 * ByteBuf} gives the same methods. Two kinds exist: one over a growable byte array ({@link
 * #allocate}, {@link #wrap}), which needs nothing but the JDK, and a view of a Netty {@code
 * ByteBuf} ({@link #of}).
 *
 * <p>Why both: the connector (client and tool) moves its bytes with plain NIO and never touches
 * Netty, whose first buffer alone costs ~80 ms of class loading and static initialization in a
 * fresh JVM (docs/architecture.md, start-up of the client); the server keeps Netty's pooled
 * buffers. Indices are relative to the start of the bytes. Not thread-safe.
 */
public abstract class WireBuffer {
  WireBuffer() {}

  /** An empty growable array-backed buffer. */
  public static WireBuffer allocate() {
    return new ArrayWireBuffer(new byte[64], 0, 0, 0, 64);
  }

  /** An empty growable array-backed buffer with room for {@code capacity} bytes to start with. */
  public static WireBuffer allocate(int capacity) {
    byte[] a = new byte[Math.max(capacity, 16)];
    return new ArrayWireBuffer(a, 0, 0, 0, a.length);
  }

  /** A buffer whose readable bytes are {@code bytes} (not copied); writing may copy them. */
  public static WireBuffer wrap(byte[] bytes) {
    return new ArrayWireBuffer(bytes, 0, 0, bytes.length, bytes.length);
  }

  /**
   * A buffer whose readable bytes are {@code length} bytes of {@code bytes} from {@code offset}
   * (not copied).
   *
   * @throws IndexOutOfBoundsException if the range is not inside the array
   */
  public static WireBuffer wrap(byte[] bytes, int offset, int length) {
    if (offset < 0 || length < 0 || offset > bytes.length - length) {
      throw new IndexOutOfBoundsException(
          "range " + offset + "+" + length + " of an array of " + bytes.length);
    }
    return new ArrayWireBuffer(bytes, offset, 0, length, offset + length);
  }

  /** A view of {@code buf}: reads and writes move its indices. The caller keeps ownership. */
  public static WireBuffer of(ByteBuf buf) {
    return ByteBufWireBuffer.over(buf);
  }

  /** The Netty buffer behind this view, or null for an array-backed buffer. */
  abstract @Nullable ByteBuf byteBuf();

  /** The index of the next byte read. */
  public abstract int readerIndex();

  /**
   * Moves the reader index.
   *
   * @throws IndexOutOfBoundsException outside 0..writerIndex
   */
  public abstract void readerIndex(int index);

  /** The index of the next byte written: the end of the readable bytes. */
  public abstract int writerIndex();

  /** How many bytes remain to be read. */
  public final int readableBytes() {
    return writerIndex() - readerIndex();
  }

  /** Whether bytes remain to be read. */
  public final boolean isReadable() {
    return writerIndex() > readerIndex();
  }

  /** The next byte, signed. */
  public abstract byte readByte();

  /** The next byte, unsigned. */
  public final short readUnsignedByte() {
    return (short) (readByte() & 0xff);
  }

  /** The next two bytes, big-endian, signed. */
  public abstract short readShort();

  /** The next two bytes, big-endian, unsigned. */
  public final int readUnsignedShort() {
    return readShort() & 0xffff;
  }

  /** The next four bytes, big-endian, signed. */
  public abstract int readInt();

  /** The next four bytes, big-endian, unsigned. */
  public final long readUnsignedInt() {
    return readInt() & 0xffffffffL;
  }

  /** The next eight bytes, big-endian. */
  public abstract long readLong();

  /** Fills {@code dst} with the next bytes. */
  public abstract void readBytes(byte[] dst);

  /**
   * A read-only view of the next {@code length} bytes (not copied), which moves the reader index
   * past them. The view shares the bytes: it is valid until this buffer is next written to or
   * compacted.
   */
  public abstract WireBuffer readSlice(int length);

  /** Drops the bytes already read, so that indices start again at 0 (may move the bytes). */
  public abstract void discardReadBytes();

  /** Skips {@code n} bytes. */
  public abstract void skipBytes(int n);

  /** The byte at {@code index}, without moving the reader index. */
  public abstract byte getByte(int index);

  /** The four bytes at {@code index}, big-endian, without moving the reader index. */
  public abstract int getInt(int index);

  /** The four bytes at {@code index}, big-endian, unsigned. */
  public final long getUnsignedInt(int index) {
    return getInt(index) & 0xffffffffL;
  }

  /** The first index in {@code [from, to)} holding {@code value}, or -1. */
  public abstract int indexOf(int from, int to, byte value);

  /** {@code length} bytes at {@code index} decoded as {@code charset}; indices do not move. */
  public abstract String toString(int index, int length, Charset charset);

  /** The bytes at {@code index} as a read-only NIO buffer, shared where possible. */
  public abstract ByteBuffer nioBuffer(int index, int length);

  /**
   * Copies the bytes from {@code index} into {@code dst}, as many as {@code dst} has room for
   * ({@code dst.remaining()}), advancing its position; this buffer's indices do not move. One
   * bulk copy, without the views {@link #nioBuffer} makes.
   *
   * @throws IndexOutOfBoundsException if fewer than {@code dst.remaining()} bytes lie from {@code
   *     index} to the end of what was written
   */
  public abstract void getBytes(int index, ByteBuffer dst);

  /**
   * Copies {@code length} bytes from {@code index} into {@code dst} at {@code dstOffset}; this
   * buffer's indices do not move.
   *
   * @throws IndexOutOfBoundsException if fewer than {@code length} bytes lie from {@code index} to
   *     the end of what was written, or {@code dst} has no room for them there
   */
  public abstract void getBytes(int index, byte[] dst, int dstOffset, int length);

  /**
   * Whether the {@code length} bytes from {@code index} are those of {@code other} from {@code
   * otherOffset}; indices do not move.
   *
   * @throws IndexOutOfBoundsException if either range lies beyond its bytes
   */
  public abstract boolean contentEquals(int index, byte[] other, int otherOffset, int length);

  /** Appends one byte (the low eight bits). */
  public abstract void writeByte(int b);

  /** Appends two bytes, big-endian. */
  public abstract void writeShort(int v);

  /** Appends four bytes, big-endian. */
  public abstract void writeInt(int v);

  /** Appends eight bytes, big-endian. */
  public abstract void writeLong(long v);

  /** Appends {@code src}. */
  public final void writeBytes(byte[] src) {
    writeBytes(src, 0, src.length);
  }

  /** Appends {@code length} bytes of {@code src} from {@code offset}. */
  public abstract void writeBytes(byte[] src, int offset, int length);

  /** Appends {@code n} zero bytes. */
  public final void writeZero(int n) {
    writeBytes(new byte[n], 0, n);
  }

  /** Overwrites the four bytes at {@code index} (already written) with {@code v}, big-endian. */
  public abstract void setInt(int index, int v);

  /** The readable bytes, copied; indices do not move. */
  public final byte[] toByteArray() {
    byte[] b = new byte[readableBytes()];
    int r = readerIndex();
    readBytes(b);
    readerIndex(r);
    return b;
  }
}
