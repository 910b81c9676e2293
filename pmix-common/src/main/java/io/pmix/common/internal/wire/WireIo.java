package io.pmix.common.internal.wire;

import io.pmix.common.codec.WireBuffer;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Field-level reading and writing shared by the handshake classes: NUL-terminated strings (cstr),
 * fixed 256-byte nspace fields (fix256) and bounds-checked integers, each failure turned into a
 * {@link PmixException} that names the field.
 */
final class WireIo {
  /** Longest nspace OpenPMIx accepts (PMIX_MAX_NSLEN); a fix256 field holds it plus one NUL. */
  static final int MAX_NSPACE_BYTES = 255;

  /** Size of a fix256 nspace field in the handshake replies. */
  static final int FIX256 = MAX_NSPACE_BYTES + 1;

  private WireIo() {}

  /** The status of "the peer's bytes ended before this field did". */
  static PmixException truncated(String what) {
    return new PmixException(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, what);
  }

  /** The status of "the field is complete but its content is unacceptable". */
  static PmixException badField(String what) {
    return new PmixException(Status.ERR_BAD_PARAM, what);
  }

  /** Reads a u32/i32 in network order, or fails naming the field if fewer than 4 bytes remain. */
  static int readIntBE(WireBuffer in, String field) {
    if (in.readableBytes() < Integer.BYTES) {
      throw truncated(field + ": needs 4 bytes, " + in.readableBytes() + " left");
    }
    return in.readInt();
  }

  /** Reads one byte as an unsigned value, or fails naming the field. */
  static int readU8(WireBuffer in, String field) {
    if (!in.isReadable()) {
      throw truncated(field + ": needs 1 byte, none left");
    }
    return in.readUnsignedByte();
  }

  /**
   * Reads a cstr: bytes up to a NUL that must lie inside the readable bytes (as the C server
   * demands), consuming the NUL too. The text must be valid UTF-8: a lenient decoding would turn
   * bad bytes into U+FFFD and make, say, an nspace lookup fail for a reason nobody could see.
   */
  static String readCstr(WireBuffer in, String field) {
    int nul = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) 0);
    if (nul < 0) {
      throw truncated(
          field + ": no terminating NUL in the remaining " + in.readableBytes() + " bytes");
    }
    int length = nul - in.readerIndex();
    String s = decodeUtf8(in, in.readerIndex(), length, field);
    in.skipBytes(length + 1);
    return s;
  }

  /** Writes a cstr: the UTF-8 bytes of {@code s} then one NUL. */
  static void writeCstr(WireBuffer out, String s) {
    out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
    out.writeByte(0);
  }

  /** The encoded size of {@link #writeCstr}. */
  static int cstrLength(String s) {
    return utf8Length(s) + 1;
  }

  /**
   * Reads a fix256 field. Like the C connector, byte 255 is treated as NUL whatever it holds, and
   * the text is what precedes the first NUL.
   */
  static String readFix256(WireBuffer in, String field) {
    if (in.readableBytes() < FIX256) {
      throw truncated(field + ": needs " + FIX256 + " bytes, " + in.readableBytes() + " left");
    }
    int start = in.readerIndex();
    int nul = in.indexOf(start, start + MAX_NSPACE_BYTES, (byte) 0);
    int length = nul < 0 ? MAX_NSPACE_BYTES : nul - start;
    String s = decodeUtf8(in, start, length, field);
    in.skipBytes(FIX256);
    return s;
  }

  /** Writes {@code s} as a fix256 field, zero-padded as C servers do. */
  static void writeFix256(WireBuffer out, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    checkNspace(s, bytes.length);
    out.writeBytes(bytes);
    out.writeZero(FIX256 - bytes.length);
  }

  /** Caller check for an nspace: no NUL inside and at most 255 UTF-8 bytes. */
  static void checkNspace(String nspace, int utf8Length) {
    checkNoNul(nspace, "nspace");
    if (utf8Length > MAX_NSPACE_BYTES) {
      throw new IllegalArgumentException(
          "nspace is " + utf8Length + " UTF-8 bytes; PMIx allows at most " + MAX_NSPACE_BYTES);
    }
  }

  /** Caller check for any cstr field: a NUL inside would end the field early on the wire. */
  static void checkNoNul(String s, String field) {
    if (s.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(field + " contains a NUL character");
    }
  }

  /** The number of bytes {@link #writeCstr} writes for {@code s}, without its NUL. */
  static int utf8Length(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  private static String decodeUtf8(WireBuffer in, int index, int length, String field) {
    // One bulk copy; ASCII text (every name and module of the handshake in practice) is valid
    // UTF-8 as it is, which a loop over the array tells without a decoder: a fresh server ran
    // the strict decoder interpreted for each of a connect request's strings (~0.2 ms each,
    // docs/architecture.md, "The handshake's strings").
    byte[] b = new byte[length];
    in.getBytes(index, b, 0, length);
    boolean ascii = true;
    for (byte x : b) {
      if (x < 0) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      return new String(b, StandardCharsets.ISO_8859_1);
    }
    ByteBuffer bytes = ByteBuffer.wrap(b);
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(bytes)
          .toString();
    } catch (CharacterCodingException e) {
      throw new PmixException(Status.ERR_BAD_PARAM, field + ": not valid UTF-8", e);
    }
  }
}
