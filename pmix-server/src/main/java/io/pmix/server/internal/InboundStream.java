package io.pmix.server.internal;

import io.pmix.common.PmixException;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.common.internal.wire.FrameDecoder;
import io.pmix.common.internal.wire.FrameLimits;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * What an accepted connection sends, as it arrives in arrays: one connect request (a 16-byte
 * header whose {@code nbytes} is little-endian, then its payload; docs/transport.md §7.1), then
 * frames (a 16-byte header of big-endian pindex, tag, nbytes and a padding word, then nbytes of
 * payload; §5.1). The server's own transport's reader, with the rules of Netty's pipeline ({@code
 * ConnectRequestDecoder}, {@code FrameReader}): a connect request longer than its limit, or one
 * that does not decode, and a frame longer than its limit or a partial frame the budget cannot
 * hold, end the stream with the failure ({@code ERR_OUT_OF_RESOURCE} for the lengths), and every
 * later byte is ignored. Each payload is copied once into an array of its own.
 *
 * <p>One per connection, on the progress thread.
 */
final class InboundStream {
  private static final int HEADER = FrameDecoder.HEADER_LENGTH;

  /** Told what the stream carries, in order. */
  interface Sink {
    /** The connect request (once). */
    void connectRequest(ConnectRequest request);

    /** A frame after it. */
    void frame(int tag, byte[] payload);

    /** The stream cannot go on; nothing more is told. */
    void failed(PmixException cause);
  }

  private final int maxRequestLength;
  private final int maxFrameLength;
  private final FrameBudget budget;
  private final Sink sink;

  private final byte[] header = new byte[HEADER];
  private int headerHave;
  private boolean requestSeen;
  private byte @Nullable [] payload;
  private int payloadHave;
  private int expected;
  private int tag;
  /** What the frame being received holds of {@link #budget}. */
  private long reserved;
  private boolean stopped;

  InboundStream(int maxRequestLength, int maxFrameLength, FrameBudget budget, Sink sink) {
    this.maxRequestLength = maxRequestLength;
    this.maxFrameLength = maxFrameLength;
    this.budget = budget;
    this.sink = sink;
  }

  /** Takes {@code len} bytes at {@code b[off]}; the sink is told of what they complete. */
  void feed(byte[] b, int off, int len) {
    int end = off + len;
    while (off < end && !stopped) {
      byte[] p = payload;
      if (p == null) {
        long nbytes;
        if (headerHave == 0 && end - off >= HEADER) {
          if (requestSeen) {
            tag = intBE(b, off + 4);
            nbytes = intBE(b, off + 8) & 0xffffffffL;
          } else {
            nbytes = intLE(b, off + 8) & 0xffffffffL;
          }
          off += HEADER;
        } else {
          int n = Math.min(HEADER - headerHave, end - off);
          System.arraycopy(b, off, header, headerHave, n);
          headerHave += n;
          off += n;
          if (headerHave < HEADER) {
            return;
          }
          headerHave = 0;
          if (requestSeen) {
            tag = intBE(header, 4);
            nbytes = intBE(header, 8) & 0xffffffffL;
          } else {
            nbytes = intLE(header, 8) & 0xffffffffL;
          }
        }
        p = begin(nbytes, end - off);
        if (p == null) {
          return;
        }
      }
      int n = Math.min(expected - payloadHave, end - off);
      if (payloadHave + n > p.length) {
        p = Arrays.copyOf(p, Math.min(expected, Math.max(payloadHave + n, 2 * p.length)));
        payload = p;
      }
      System.arraycopy(b, off, p, payloadHave, n);
      payloadHave += n;
      off += n;
      if (payloadHave == expected) {
        payload = null;
        giveBack();
        complete(p);
      }
    }
  }

  private void complete(byte[] p) {
    if (requestSeen) {
      sink.frame(tag, p);
      return;
    }
    requestSeen = true;
    ConnectRequest request;
    try {
      request = ConnectRequestCodec.decodePayload(WireBuffer.wrap(p));
    } catch (PmixException e) {
      fail(e);
      return;
    }
    sink.connectRequest(request);
  }

  /** The new payload's array, or null after failing the stream. */
  private byte @Nullable [] begin(long nbytes, int available) {
    if (!requestSeen) {
      if (nbytes > maxRequestLength) {
        fail(ConnectRequestCodec.tooLong(nbytes, maxRequestLength));
        return null;
      }
    } else {
      PmixException refused = FrameLimits.admit(nbytes, tag, maxFrameLength, available, budget);
      if (refused != null) {
        fail(refused);
        return null;
      }
      reserved = FrameLimits.held(nbytes, available);
    }
    expected = (int) nbytes;
    byte[] p = FrameLimits.payloadArray(expected, available);
    payload = p;
    payloadHave = 0;
    return p;
  }

  private void fail(PmixException e) {
    stop();
    sink.failed(e);
  }

  /** Ignores every later byte and gives back what a partial frame held of the budget. */
  void stop() {
    stopped = true;
    payload = null;
    giveBack();
  }

  /** The bytes held for the payload being received (for tests). */
  int held() {
    byte[] p = payload;
    return p == null ? 0 : p.length;
  }

  private void giveBack() {
    if (reserved != 0) {
      budget.release(reserved);
      reserved = 0;
    }
  }

  private static int intBE(byte[] b, int i) {
    return (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | (b[i + 3] & 0xff);
  }

  private static int intLE(byte[] b, int i) {
    return (b[i] & 0xff) | (b[i + 1] & 0xff) << 8 | (b[i + 2] & 0xff) << 16 | (b[i + 3] & 0xff) << 24;
  }
}
