package io.pmix.common.internal.gds;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The record layouts of libpmix 4.2.2's data segments (docs/gds.md section 3): ds21's flagged
 * records and ds12's (the "ds20" file format) records with marker keys. Parsing checks every
 * length against the segment, since another process wrote it.
 */
enum DstoreFormat {
  /**
   * {@code size_t size|flags}, {@code size_t hash}, key with its NUL, data. Extension slots and
   * invalidated records are flagged in the size's top bits.
   */
  DS21 {
    @Override
    Item parse(Segment seg, long at) {
      long word = seg.u64(at);
      long size = word & SIZE_MASK;
      boolean ext = (word & EXTENSION_FLAG) != 0;
      boolean invalid = (word & INVALIDATED_FLAG) != 0;
      long keyAt = at + 16;
      checkSize(seg, at, size, 17);
      byte[] key = key(seg, at, keyAt, size);
      long dataAt = keyAt + key.length + 1;
      Kind kind = invalid ? Kind.INVALIDATED : ext ? Kind.EXTENSION : Kind.VALUE;
      return new Item(at, size, kind, key, dataAt, at + size - dataAt);
    }

    @Override
    byte[] encode(byte[] key, byte[] data, boolean extension) {
      ByteBuffer b = ByteBuffer.allocate(16 + key.length + 1 + data.length).order(ByteOrder.nativeOrder());
      long size = b.capacity();
      b.putLong(extension ? size | EXTENSION_FLAG : size);
      b.putLong(keyHash(key));
      b.put(key).put((byte) 0).put(data);
      return b.array();
    }

    @Override
    void invalidate(Segment seg, long at) {
      seg.putU64(at, seg.u64(at) | INVALIDATED_FLAG);
    }

    @Override
    boolean isValueOf(Segment seg, long at, byte[] key) {
      long word = seg.u64(at);
      if ((word & (EXTENSION_FLAG | INVALIDATED_FLAG)) != 0) {
        return false;
      }
      long size = word & SIZE_MASK;
      checkSize(seg, at, size, 17);
      return seg.holdsKey(at + 16, key, at + size);
    }
  },
  /**
   * {@code size_t size}, key padded with NULs to at least 12 bytes, data. Extension slots have the
   * key {@code EXTENSION_SLOT}, invalidated records {@code INVALIDATED}.
   */
  DS12 {
    @Override
    Item parse(Segment seg, long at) {
      long size = seg.u64(at);
      long keyAt = at + 8;
      checkSize(seg, at, size, 8 + MIN_KEY_LEN);
      byte[] key = key(seg, at, keyAt, size);
      long dataAt = keyAt + Math.max(key.length + 1, MIN_KEY_LEN);
      if (dataAt > at + size) {
        throw Segment.corrupt(seg.name(), "record at " + at + " is shorter than its key");
      }
      Kind kind =
          matches(key, INVALIDATED)
              ? Kind.INVALIDATED
              : matches(key, EXTENSION_SLOT) ? Kind.EXTENSION : Kind.VALUE;
      return new Item(at, size, kind, key, dataAt, at + size - dataAt);
    }

    @Override
    byte[] encode(byte[] key, byte[] data, boolean extension) {
      byte[] k = extension ? EXTENSION_SLOT : key;
      int kl = Math.max(k.length + 1, MIN_KEY_LEN);
      ByteBuffer b = ByteBuffer.allocate(8 + kl + data.length).order(ByteOrder.nativeOrder());
      b.putLong(b.capacity());
      b.put(k);
      b.position(8 + kl); // NUL padding: the buffer is zeroed
      b.put(data);
      return b.array();
    }

    @Override
    void invalidate(Segment seg, long at) {
      seg.put(at + 8, java.util.Arrays.copyOf(INVALIDATED, INVALIDATED.length + 1));
    }

    @Override
    boolean isValueOf(Segment seg, long at, byte[] key) {
      long size = seg.u64(at);
      checkSize(seg, at, size, 8 + MIN_KEY_LEN);
      return !matches(key, INVALIDATED)
          && !matches(key, EXTENSION_SLOT)
          && seg.holdsKey(at + 8, key, at + size);
    }
  };

  static final long EXTENSION_FLAG = 0x8000_0000_0000_0000L;
  static final long INVALIDATED_FLAG = 0x4000_0000_0000_0000L;
  static final long SIZE_MASK = 0x3fff_ffff_ffff_ffffL;

  /** ds12's shortest key field: {@code sizeof("INVALIDATED")}. */
  static final int MIN_KEY_LEN = 12;

  static final byte[] INVALIDATED = "INVALIDATED".getBytes(StandardCharsets.US_ASCII);
  static final byte[] EXTENSION_SLOT = "EXTENSION_SLOT".getBytes(StandardCharsets.US_ASCII);

  /** What a record is. */
  enum Kind {
    /** A key and its value. */
    VALUE,
    /** An extension slot: its 8-byte value is where the rank's data goes on (0: it ends). */
    EXTENSION,
    /** A replaced key/value, to be skipped. */
    INVALIDATED
  }

  /**
   * One record of a data segment.
   *
   * @param at its offset in the segment
   * @param size its total size
   * @param kind what it is
   * @param key the key's bytes, without the NUL
   * @param dataAt offset of its data in the segment
   * @param dataLength length of its data
   */
  @SuppressWarnings("ArrayRecordComponent") // never compared or hashed
  record Item(long at, long size, Kind kind, byte[] key, long dataAt, long dataLength) {}

  /**
   * The record at offset {@code at} of {@code seg}.
   *
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if it does not fit
   */
  abstract Item parse(Segment seg, long at);

  /**
   * The bytes of a record as libpmix's writer lays it out: {@code key} (without its NUL; a user key
   * must not be ds12's marker names) and {@code data}; an extension slot when {@code extension}
   * ({@code key} then ignored: "" in ds21, {@code EXTENSION_SLOT} in ds12), {@code data} its 8-byte
   * value.
   */
  abstract byte[] encode(byte[] key, byte[] data, boolean extension);

  /** Marks the record at {@code at} invalidated, as libpmix's writer does when a key is replaced. */
  abstract void invalidate(Segment seg, long at);

  /**
   * Whether the record at {@code at} is a valid record of {@code key} (not invalidated, not an
   * extension slot), compared in place: how a search checks that a record it found earlier is
   * still the key's answer without copying the record's key out.
   *
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if the record does not
   *     fit the segment
   */
  abstract boolean isValueOf(Segment seg, long at, byte[] key);

  /** What a ds21 record stores of its key: the sum of its bytes as C's (signed) chars. */
  static long keyHash(byte[] key) {
    long hash = 0;
    for (byte k : key) {
      hash += k;
    }
    return hash;
  }

  /**
   * Where the extension slot {@code slot}, at {@code at} of {@code seg}, points: a global offset
   * below {@code total} (the size of all the namespace's data segments), or 0 where its rank's
   * chain ends.
   *
   * @throws io.pmix.common.PmixException {@code PMIX_ERR_UNPACK_FAILURE} if the slot holds no
   *     offset, or one outside the data
   */
  static long extensionTarget(Segment seg, long at, Item slot, long total) {
    if (slot.dataLength() < 8) {
      throw Segment.corrupt(seg.name(), "extension slot at " + at + " without an offset");
    }
    long next = seg.u64(slot.dataAt());
    if (next < 0 || next >= total) {
      throw Segment.corrupt(seg.name(), "extension slot at " + at + " points to " + next);
    }
    return next;
  }

  /** An extension slot pointing at global offset {@code next} (0: the chain ends). */
  byte[] extension(long next) {
    byte[] v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(next).array();
    return encode(new byte[0], v, true);
  }

  /** Where the 8-byte value of an extension slot lies, from the start of its record. */
  int extensionValueOffset() {
    return extension(0).length - 8;
  }

  /** The longest key a record may have ({@code PMIX_MAX_KEYLEN}). */
  static final int MAX_KEY_BYTES = 511;

  /**
   * The key at {@code keyAt}, without its NUL, which lies within the record and at most {@value
   * #MAX_KEY_BYTES} bytes on, so a corrupt size never makes one parse scan a whole segment.
   */
  static byte[] key(Segment seg, long at, long keyAt, long size) {
    byte[] key = seg.cString(keyAt, Math.min(at + size, keyAt + MAX_KEY_BYTES + 1));
    if (key == null) {
      throw Segment.corrupt(seg.name(), "record at " + at + " has no key of at most 511 bytes");
    }
    return key;
  }

  static void checkSize(Segment seg, long at, long size, long minimum) {
    if (size < minimum || size > seg.size() - at) {
      throw Segment.corrupt(
          seg.name(), "record at " + at + " claims " + size + " bytes (" + seg.size() + " in all)");
    }
  }

  static boolean matches(byte[] key, byte[] marker) {
    return java.util.Arrays.equals(key, marker);
  }
}
