package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.internal.wire.ArrayFrame;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.FrameBudget;
import io.pmix.common.internal.wire.NativeCredential;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server's own transport's reader: one connect request (its length little-endian), then
 * frames (big-endian headers), however the bytes are split; and the limits of Netty's pipeline:
 * an oversized or undecodable request, an oversized frame, a partial frame beyond the budget end
 * the stream with {@code ERR_OUT_OF_RESOURCE} (or the decoding's status) and nothing after.
 */
@Timeout(60)
class InboundStreamTest {
  /** What the sink was told, in order. */
  private static final class Recorder implements InboundStream.Sink {
    final List<Object> seen = new ArrayList<>();

    @Override
    public void connectRequest(ConnectRequest request) {
      seen.add(request);
    }

    @Override
    public void frame(int tag, byte[] payload) {
      seen.add(new ArrayFrame(0, tag, payload));
    }

    @Override
    public void failed(PmixException cause) {
      seen.add(cause);
    }
  }

  private static ConnectRequest request() {
    return ConnectRequest.builder()
        .security(NativeCredential.MODULE, new NativeCredential(1000, 1000).toBytes())
        .kind(ConnectorKind.SIMPLE_CLIENT)
        .procId("job", 3)
        .bfropsModule("v41")
        .bufferType(ConnectRequest.BUFFER_NON_DESC)
        .gdsModule("hash")
        .build();
  }

  private static byte[] requestBytes() {
    WireBuffer w = WireBuffer.allocate(256);
    ConnectRequestCodec.encode(request(), w);
    return w.toByteArray();
  }

  private static byte[] frame(int tag, byte[] payload, int announced) {
    ByteBuffer b = ByteBuffer.allocate(16 + payload.length);
    b.putInt(0).putInt(tag).putInt(announced).putInt(0).put(payload);
    return b.array();
  }

  private static byte[] stream() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(requestBytes());
    out.writeBytes(frame(101, new byte[] {1, 2, 3}, 3));
    out.writeBytes(frame(102, new byte[0], 0));
    byte[] big = new byte[10_000];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) i;
    }
    out.writeBytes(frame(103, big, big.length));
    return out.toByteArray();
  }

  private static void checkStream(List<Object> seen) {
    assertEquals(4, seen.size(), seen.toString());
    ConnectRequest r = assertInstanceOf(ConnectRequest.class, seen.get(0));
    assertEquals("job", r.nspace().orElseThrow());
    assertEquals(3, r.rank().orElseThrow());
    ArrayFrame a = (ArrayFrame) seen.get(1);
    assertEquals(101, a.tag());
    assertArrayEquals(new byte[] {1, 2, 3}, a.payload());
    assertEquals(102, ((ArrayFrame) seen.get(2)).tag());
    assertEquals(0, ((ArrayFrame) seen.get(2)).payload().length);
    ArrayFrame c = (ArrayFrame) seen.get(3);
    assertEquals(103, c.tag());
    assertEquals(10_000, c.payload().length);
    assertEquals((byte) 9_999, c.payload()[9_999]);
  }

  @Test
  void aRequestAndFramesInOneRead() {
    Recorder rec = new Recorder();
    byte[] s = stream();
    new InboundStream(1 << 17, 1 << 20, FrameBudget.UNLIMITED, rec).feed(s, 0, s.length);
    checkStream(rec.seen);
  }

  @Property(tries = 50)
  void theSameHoweverTheBytesAreSplit(@ForAll @IntRange(min = 1, max = 700) int chunk) {
    Recorder rec = new Recorder();
    FrameBudget budget = FrameBudget.of(1 << 20);
    InboundStream in = new InboundStream(1 << 17, 1 << 20, budget, rec);
    byte[] s = stream();
    // Through an offset in a larger array, as the transport's receive buffer holds them.
    byte[] buffer = new byte[chunk + 7];
    for (int off = 0; off < s.length; off += chunk) {
      int n = Math.min(chunk, s.length - off);
      System.arraycopy(s, off, buffer, 7, n);
      in.feed(buffer, 7, n);
    }
    checkStream(rec.seen);
    assertEquals(0, budget.reserved());
  }

  @Test
  void aRequestLongerThanItsLimitFailsTheStreamAndNothingFollows() {
    Recorder rec = new Recorder();
    byte[] s = stream();
    new InboundStream(10, 1 << 20, FrameBudget.UNLIMITED, rec).feed(s, 0, s.length);
    assertEquals(1, rec.seen.size());
    PmixException e = assertInstanceOf(PmixException.class, rec.seen.get(0));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
  }

  @Test
  void aBigEndianRequestLengthIsNamedInTheFailure() {
    Recorder rec = new Recorder();
    byte[] s = requestBytes();
    int len = s.length - 16;
    ByteBuffer.wrap(s).putInt(8, len); // big-endian, as a wrong encoder would write it
    new InboundStream(1 << 17, 1 << 20, FrameBudget.UNLIMITED, rec).feed(s, 0, s.length);
    PmixException e = (PmixException) rec.seen.get(0);
    assertTrue(e.getMessage().contains("read big-endian it would be " + len), e.getMessage());
  }

  @Test
  void anUndecodableRequestFailsWithTheDecodersStatus() {
    Recorder rec = new Recorder();
    byte[] s = new byte[16 + 8]; // eight bytes without the psec module's NUL
    ByteBuffer.wrap(s).put(8, (byte) 8);
    java.util.Arrays.fill(s, 16, 24, (byte) 'x');
    new InboundStream(1 << 17, 1 << 20, FrameBudget.UNLIMITED, rec).feed(s, 0, s.length);
    PmixException e = (PmixException) rec.seen.get(0);
    assertEquals(Status.ERR_UNPACK_READ_PAST_END_OF_BUFFER, e.status());
  }

  @Test
  void aFrameLongerThanItsLimitFailsTheStream() {
    Recorder rec = new Recorder();
    byte[] s = stream();
    new InboundStream(1 << 17, 5_000, FrameBudget.UNLIMITED, rec).feed(s, 0, s.length);
    assertEquals(4, rec.seen.size());
    assertEquals(Status.ERR_OUT_OF_RESOURCE, ((PmixException) rec.seen.get(3)).status());
  }

  /** A stream on {@code budget} that has taken its connect request already. */
  private static InboundStream afterTheRequest(FrameBudget budget, Recorder rec) {
    InboundStream in = new InboundStream(1 << 17, 1 << 20, budget, rec);
    byte[] r = requestBytes();
    in.feed(r, 0, r.length);
    return in;
  }

  @Test
  void aPartialFrameHoldsItsLengthOfTheBudgetUntilItCompletesOrTheStreamStops() {
    Recorder rec = new Recorder();
    FrameBudget budget = FrameBudget.of(50_000);
    InboundStream in = afterTheRequest(budget, rec);
    byte[] f = frame(7, new byte[40_000], 40_000);
    in.feed(f, 0, 1_000);
    assertEquals(40_000, budget.reserved());
    assertTrue(in.held() < 40_000, "only what came is held: " + in.held());
    in.feed(f, 1_000, f.length - 1_000);
    assertEquals(0, budget.reserved());
    assertEquals(40_000, ((ArrayFrame) rec.seen.get(1)).payload().length);

    in.feed(f, 0, 1_000);
    assertEquals(40_000, budget.reserved());
    in.stop();
    assertEquals(0, budget.reserved());
    assertEquals(0, in.held());
  }

  @Test
  void aPartialFrameBeyondTheBudgetFailsTheStream() {
    Recorder rec = new Recorder();
    FrameBudget budget = FrameBudget.of(1_000);
    InboundStream in = afterTheRequest(budget, rec);
    byte[] f = frame(7, new byte[4_000], 4_000);
    in.feed(f, 0, 100);
    assertEquals(Status.ERR_OUT_OF_RESOURCE, ((PmixException) rec.seen.get(1)).status());
    in.feed(f, 100, f.length - 100);
    assertEquals(2, rec.seen.size());
    assertEquals(0, budget.reserved());
  }
}
