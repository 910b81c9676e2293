package io.pmix.common.internal.wire;

import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * Steady-state messages from docs/transport.md §11. Payloads the document elides are replaced by
 * filler of the captured length, starting with the bytes it shows.
 */
final class FrameCaptures {
  private FrameCaptures() {}

  /** One captured message: its bytes, and the frame's fields. */
  @SuppressWarnings("ArrayRecordComponent") // Test vectors, read through accessors, never compared.
  record FrameCapture(String name, byte[] bytes, int pindex, int tag, byte[] payload) {
    Frame frame() {
      return new Frame(pindex, tag, Unpooled.wrappedBuffer(payload));
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private static FrameCapture capture(String name, String header, byte[] payload) {
    byte[] h = Hex.bytes(header);
    int pindex = (h[0] & 0xff) << 24 | (h[1] & 0xff) << 16 | (h[2] & 0xff) << 8 | (h[3] & 0xff);
    int tag = (h[4] & 0xff) << 24 | (h[5] & 0xff) << 16 | (h[6] & 0xff) << 8 | (h[7] & 0xff);
    return new FrameCapture(name, Hex.concat(h, payload), pindex, tag, payload);
  }

  private static byte[] filled(String start, int length) {
    byte[] head = Hex.bytes(start);
    byte[] p = new byte[length];
    System.arraycopy(head, 0, p, 0, head.length);
    for (int i = head.length; i < length; i++) {
      p[i] = (byte) i;
    }
    return p;
  }

  static final FrameCapture REQ =
      capture("11.2 REQ", "00 00 00 00  00 00 00 65  00 00 00 02  00 00 00 00", Hex.bytes("02 00"));
  static final FrameCapture REQ_REPLY =
      capture(
          "11.2 REQ reply (219 bytes, elided)",
          "00 00 00 00  00 00 00 65  00 00 00 db  00 00 00 00",
          filled("02 0e 74 65 73 74 6e 73 00 02 1c 70 6d 69 78 2e", 219));
  static final FrameCapture FINALIZE =
      capture(
          "11.2 FINALIZE",
          "00 00 00 00  00 00 00 66  00 00 00 02  00 00 00 00",
          Hex.bytes("02 05"));
  static final FrameCapture FINALIZE_REPLY =
      capture(
          "11.2 FINALIZE reply",
          "00 00 00 00  00 00 00 66  00 00 00 02  00 00 00 00",
          Hex.bytes("02 00"));
  static final FrameCapture TOOL_REQ_REPLY =
      capture(
          "11.3 tool REQ reply",
          "00 00 00 00  00 00 00 65  00 00 00 29  00 00 00 00",
          Hex.bytes("02 14 \"tool-ns-1\" 00 02 20 \"pmix.bfrops.mod\" 00 03 12 \"4.2.2rc2\" 00"));
  static final FrameCapture FULLY_DESC_REQ =
      capture(
          "11.8 fully described REQ",
          "00 00 00 00 00 00 00 65 00 00 00 04 00 00 00 00",
          Hex.bytes("09 02 22 00"));
  static final FrameCapture FULLY_DESC_REPLY =
      capture(
          "11.8 fully described REQ reply (239 bytes, elided)",
          "00 00 00 00 00 00 00 65 00 00 00 ef 00 00 00 00",
          filled("09 02 03 0e \"testns\" 00", 239));
  static final FrameCapture FULLY_DESC_STATUS =
      capture(
          "11.8 fully described status",
          "00 00 00 00 00 00 00 66 00 00 00 04 00 00 00 00",
          Hex.bytes("09 02 14 00"));
  static final FrameCapture NOTIFY =
      capture(
          "11.9 notification on tag 0",
          "00 00 00 00  00 00 00 00  00 00 00 2f  00 00 00 00",
          Hex.bytes(
              "02 0c  02 8f 4e  02 18 \"pmix-server\" 00 00  02 01"
                  + "  02 1c \"my.custom.key\" 00 00 03 0c \"hello\" 00"));
  static final FrameCapture PPS_REGEVENTS =
      capture(
          "11.10 pps REGEVENTS",
          "00 00 00 00  00 00 00 66  00 00 00 06  00 00 00 00",
          Hex.bytes("02 0d 02 00 02 00"));
  static final FrameCapture PPS_QUERY_REPLY =
      capture(
          "11.10 pps QUERY reply (-47)",
          "00 00 00 00  00 00 00 67  00 00 00 02  00 00 00 00",
          Hex.bytes("02 5d"));
  static final FrameCapture SINGLETON_FINALIZE =
      capture(
          "11.5 singleton FINALIZE (pindex -1)",
          "ff ff ff ff  00 00 00 65  00 00 00 02  00 00 00 00",
          Hex.bytes("02 05"));
  static final FrameCapture HEARTBEAT =
      capture(
          "heartbeat (tag 1, empty)",
          "00 00 00 00  00 00 00 01  00 00 00 00  00 00 00 00",
          new byte[0]);

  /** A header announcing {@code nbytes} (tag 101), and {@code sent} zero bytes of the payload. */
  static byte[] partialFrame(int nbytes, int sent) {
    byte[] b = new byte[FrameDecoder.HEADER_LENGTH + sent];
    b[7] = 0x65;
    b[8] = (byte) (nbytes >>> 24);
    b[9] = (byte) (nbytes >>> 16);
    b[10] = (byte) (nbytes >>> 8);
    b[11] = (byte) nbytes;
    return b;
  }

  static List<FrameCapture> all() {
    return List.of(
        REQ,
        REQ_REPLY,
        FINALIZE,
        FINALIZE_REPLY,
        TOOL_REQ_REPLY,
        FULLY_DESC_REQ,
        FULLY_DESC_REPLY,
        FULLY_DESC_STATUS,
        NOTIFY,
        PPS_REGEVENTS,
        PPS_QUERY_REPLY,
        SINGLETON_FINALIZE,
        HEARTBEAT);
  }

  /** The server's side of the 11.2 conversation, as one stream. */
  static List<FrameCapture> serverSideOf11_2() {
    return new ArrayList<>(List.of(NOTIFY, REQ_REPLY, FINALIZE_REPLY));
  }
}
