package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The one writer and the one reader of {@link ConnectRequest}, used by connectors and servers alike
 * (docs/transport.md §6.1 and §6.2).
 *
 * <p>The request has the steady-state 16-byte header shape, but its {@code nbytes} is in host byte
 * order, where everything else in the protocol is big-endian. Every OpenPMIx host we interoperate
 * with (x86-64, aarch64) is little-endian, and the HEAD maintainers document the field as a
 * permanent contract, so it is written and read explicitly as little-endian rather than in the
 * JVM's native order. pindex and tag are 0xFFFFFFFF.
 *
 * <p>Reading choices, all matching a 4.2.2 server unless said otherwise:
 *
 * <ul>
 *   <li>pindex and tag of the header are not checked (the C server ignores them);
 *   <li>each cstr must end inside the payload;
 *   <li>a credential length beyond the payload is an error (the C server does not check it and
 *       reads past its buffer);
 *   <li>an nspace longer than 255 bytes is an error (the C server silently truncates it, which can
 *       only make it match the wrong registration);
 *   <li>a version of 2.0.x gets no special treatment (a 2.0 connector sends an older layout, which
 *       fails to parse here; the C server would accept it with module v20, which we do not have);
 *   <li>what follows the gds name is kept as the info blob, except that a lone 0x00 is the 4.2.2
 *       pad (see {@link ConnectRequest#padPresent()}). The blob is not decoded here: a server that
 *       fails to decode it should ignore it, as a 4.2.2 server always does.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class ConnectRequestCodec {
  /** The header length, as for every message. */
  public static final int HEADER_LENGTH = FrameDecoder.HEADER_LENGTH;

  /**
   * The largest payload a C server accepts (PMIX_MAX_CRED_SIZE, 128 KiB): it closes the connection,
   * unanswered, on anything longer.
   */
  public static final int DEFAULT_MAX_PAYLOAD = 131072;

  private ConnectRequestCodec() {}

  /** Writes the whole request, header and payload, to a new buffer owned by the caller. */
  public static ByteBuf encode(ByteBufAllocator alloc, ConnectRequest request) {
    ByteBuf out = alloc.buffer();
    try {
      encode(request, out);
      return out;
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  /** Appends the whole request, header and payload, to a Netty buffer. */
  public static void encode(ConnectRequest request, ByteBuf out) {
    encode(request, WireBuffer.of(out));
  }

  /** Appends the whole request, header and payload, to {@code out}. */
  public static void encode(ConnectRequest request, WireBuffer out) {
    requireNonNull(request, "request");
    int headerStart = out.writerIndex();
    out.writeInt(Tags.CONNECT_REQUEST); // pindex -1
    out.writeInt(Tags.CONNECT_REQUEST);
    out.writeInt(0); // nbytes, filled in below once the payload is written
    out.writeInt(0); // padding of the C struct
    int payloadStart = out.writerIndex();
    encodePayload(request, out);
    // nbytes is in host order (little-endian), unlike every other header.
    out.setInt(headerStart + 8, Integer.reverseBytes(out.writerIndex() - payloadStart));
  }

  /** Appends fields #1 to #11 (no header) to {@code out}. */
  public static void encodePayload(ConnectRequest request, WireBuffer out) {
    WireIo.writeCstr(out, request.psecModule());
    byte[] credential = request.credential();
    out.writeInt(credential.length);
    out.writeBytes(credential);
    out.writeByte(request.kind().flag());
    if (request.kind().carriesIds()) {
      out.writeInt(request.euid().getAsInt());
      out.writeInt(request.egid().getAsInt());
    }
    if (request.kind().carriesProcId()) {
      WireIo.writeCstr(out, request.nspace().orElseThrow());
      out.writeInt(request.rank().getAsInt());
    }
    WireIo.writeCstr(out, request.version());
    WireIo.writeCstr(out, request.bfropsModule());
    out.writeByte(request.bufferType());
    WireIo.writeCstr(out, request.gdsModule());
    out.writeBytes(request.infoBlob());
    if (request.padPresent()) {
      out.writeByte(0);
    }
  }

  /**
   * The failure of a request whose header announces {@code nbytes} of payload, beyond {@code
   * limit}: {@code ERR_OUT_OF_RESOURCE}, naming the length it would have read big-endian when that
   * one fits (an encoder that wrote it in network order, the usual mistake).
   */
  public static PmixException tooLong(long nbytes, int limit) {
    String message = "connect request payload of " + nbytes + " bytes exceeds the limit of " + limit;
    long swapped = Integer.toUnsignedLong(Integer.reverseBytes((int) nbytes));
    if (swapped <= limit) {
      message +=
          "; read big-endian it would be "
              + swapped
              + ": the connect-request length must be in host order (little-endian)";
    }
    return new PmixException(Status.ERR_OUT_OF_RESOURCE, message);
  }

  /**
   * The payload length declared by a complete 16-byte header at {@code in}'s reader index, read as
   * host order (little-endian), without moving the reader index.
   */
  public static long peekPayloadLength(ByteBuf in) {
    return in.getUnsignedIntLE(in.readerIndex() + 8);
  }

  /**
   * Reads the payload (fields #1 to #11, no header): every readable byte of {@code payload} is
   * consumed.
   *
   * @throws PmixException if the bytes are not a connect request: {@code
   *     ERR_UNPACK_READ_PAST_END_OF_BUFFER} when a field runs past the end, {@code
   *     ERR_NOT_SUPPORTED} for an unknown flag, {@code ERR_BAD_PARAM} for a field whose content is
   *     unacceptable (text that is not UTF-8, an nspace over 255 bytes)
   */
  public static ConnectRequest decodePayload(ByteBuf payload) {
    return decodePayload(WireBuffer.of(payload));
  }

  /** {@link #decodePayload(ByteBuf)} of an array-backed buffer. */
  public static ConnectRequest decodePayload(WireBuffer payload) {
    String psec = WireIo.readCstr(payload, "psec module (field #1)");
    long credentialLength =
        Integer.toUnsignedLong(WireIo.readIntBE(payload, "credential length (field #2)"));
    if (credentialLength > payload.readableBytes()) {
      throw WireIo.truncated(
          "credential (field #3): length "
              + credentialLength
              + " but only "
              + payload.readableBytes()
              + " bytes left");
    }
    byte[] credential = new byte[(int) credentialLength];
    payload.readBytes(credential);
    int flag = WireIo.readU8(payload, "connector flag (field #4)");
    // No orElseThrow with a lambda: every connection's handshake runs this, and a fresh server
    // links each call site once (docs/architecture.md, "Start-up of pmixrun").
    Optional<ConnectorKind> known = ConnectorKind.fromFlag(flag);
    if (known.isEmpty()) {
      throw new PmixException(
          Status.ERR_NOT_SUPPORTED,
          "connector flag "
              + flag
              + (flag == 10 ? " (a 5.0+ scheduler)" : "")
              + " is not one OpenPMIx 4.2.2 accepts");
    }
    ConnectorKind kind = known.get();
    OptionalInt euid = OptionalInt.empty();
    OptionalInt egid = OptionalInt.empty();
    if (kind.carriesIds()) {
      euid = OptionalInt.of(WireIo.readIntBE(payload, "euid (identity block)"));
      egid = OptionalInt.of(WireIo.readIntBE(payload, "egid (identity block)"));
    }
    Optional<String> nspace = Optional.empty();
    OptionalInt rank = OptionalInt.empty();
    if (kind.carriesProcId()) {
      String ns = WireIo.readCstr(payload, "nspace (identity block)");
      int nsBytes = WireIo.utf8Length(ns);
      if (nsBytes > WireIo.MAX_NSPACE_BYTES) {
        throw WireIo.badField(
            "nspace (identity block) is " + nsBytes + " bytes; PMIx allows at most 255");
      }
      nspace = Optional.of(ns);
      rank = OptionalInt.of(WireIo.readIntBE(payload, "rank (identity block)"));
    }
    String version = WireIo.readCstr(payload, "version (field #6)");
    String bfrops = WireIo.readCstr(payload, "bfrops module (field #7)");
    int bufferType = WireIo.readU8(payload, "buffer type (field #8)");
    String gds = WireIo.readCstr(payload, "gds module (field #9)");

    boolean pad = payload.readableBytes() == 1 && payload.getByte(payload.readerIndex()) == 0;
    byte[] blob = new byte[pad ? 0 : payload.readableBytes()];
    payload.readBytes(blob);
    payload.skipBytes(payload.readableBytes());
    return new ConnectRequest(
        psec,
        credential,
        kind,
        euid,
        egid,
        nspace,
        rank,
        version,
        bfrops,
        bufferType,
        gds,
        blob,
        pad);
  }
}
