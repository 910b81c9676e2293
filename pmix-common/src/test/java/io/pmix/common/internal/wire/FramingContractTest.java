package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.wire.FrameCaptures.FrameCapture;
import io.pmix.common.internal.wire.Segmentations.Segmentation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The steady-state framing (docs/transport.md §5.1) as both of its readers must do it: {@link
 * FrameDecoder} (frames holding slices of the received buffers) and {@link FrameReader} (frames
 * holding arrays of their own) frame the captured C traffic however TCP cuts it, ignore the
 * padding word, refuse a payload over the limit from its header alone and everything after it,
 * share one budget for partial frames and give it back, and pass other messages through.
 */
class FramingContractTest {
  private static final int MAX = 1 << 20;

  /** The two readers, and how to see what a frame each emits holds. */
  enum Framer {
    DECODER(FrameDecoder::new, FramingContractTest::seenSlice),
    READER(FrameReader::new, FramingContractTest::seenArray);

    private final BiFunction<Integer, FrameBudget, ChannelHandler> make;
    private final Function<Object, Seen> seen;

    Framer(BiFunction<Integer, FrameBudget, ChannelHandler> make, Function<Object, Seen> seen) {
      this.make = make;
      this.seen = seen;
    }

    ChannelHandler handler(int max, FrameBudget budget) {
      return make.apply(max, budget);
    }

    /** What {@code frame} holds (released, for a frame that must be). */
    Seen seen(Object frame) {
      return seen.apply(frame);
    }

    EmbeddedChannel channel(int max) {
      return new EmbeddedChannel(handler(max, FrameBudget.UNLIMITED));
    }

    /** Feeds the segments and returns what came out, each frame as {@link Seen}. */
    List<Seen> feed(EmbeddedChannel ch, List<byte[]> segments) {
      List<Seen> out = new ArrayList<>();
      for (Object m : Channels.feed(ch, segments)) {
        out.add(seen(m));
      }
      return out;
    }
  }

  /** A frame's fields. */
  record Seen(int pindex, int tag, byte[] payload) {}

  /** A {@link FrameDecoder} frame: a slice of the received buffers, copied out and released. */
  private static Seen seenSlice(Object frame) {
    Frame f = (Frame) frame;
    try {
      byte[] p = new byte[f.payload().readableBytes()];
      f.payload().getBytes(f.payload().readerIndex(), p);
      return new Seen(f.pindex(), f.tag(), p);
    } finally {
      f.release();
    }
  }

  /** A {@link FrameReader} frame: an array of its own. */
  private static Seen seenArray(Object frame) {
    ArrayFrame f = (ArrayFrame) frame;
    return new Seen(f.pindex(), f.tag(), f.payload());
  }

  private static void assertFrame(FrameCapture expected, Seen actual, String what) {
    assertEquals(expected.pindex(), actual.pindex(), what);
    assertEquals(expected.tag(), actual.tag(), what);
    assertArrayEquals(expected.payload(), actual.payload(), what);
  }

  static List<Arguments> framersAndCaptures() {
    List<Arguments> all = new ArrayList<>();
    for (Framer f : Framer.values()) {
      for (FrameCapture c : FrameCaptures.all()) {
        all.add(Arguments.of(f, c));
      }
    }
    return all;
  }

  @ParameterizedTest
  @MethodSource("framersAndCaptures")
  void framesEachCaptureHowEverItIsSegmented(Framer framer, FrameCapture capture) {
    for (Segmentation s : Segmentations.of(capture.bytes())) {
      EmbeddedChannel ch = framer.channel(MAX);
      List<Seen> out = framer.feed(ch, s.segments());
      assertEquals(1, out.size(), s.name());
      assertFrame(capture, out.get(0), s.name());
      assertFalse(ch.finish(), s.name());
    }
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void framesAStreamInOrder(Framer framer) {
    // 11.9 then 11.2: the notification arrives before the reply to the first request.
    List<FrameCapture> conversation = FrameCaptures.serverSideOf11_2();
    byte[] stream = new byte[0];
    for (FrameCapture c : conversation) {
      stream = Hex.concat(stream, c.bytes());
    }
    for (Segmentation s : Segmentations.of(stream)) {
      EmbeddedChannel ch = framer.channel(MAX);
      List<Seen> out = framer.feed(ch, s.segments());
      assertEquals(conversation.size(), out.size(), s.name());
      for (int i = 0; i < out.size(); i++) {
        assertFrame(conversation.get(i), out.get(i), s.name() + ", frame " + i);
      }
      assertFalse(ch.finish(), s.name());
    }
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void zeroLengthFramesBetweenOthers(Framer framer) {
    byte[] stream =
        Hex.concat(
            FrameCaptures.HEARTBEAT.bytes(),
            FrameCaptures.HEARTBEAT.bytes(),
            FrameCaptures.REQ.bytes(),
            FrameCaptures.HEARTBEAT.bytes());
    EmbeddedChannel ch = framer.channel(2);
    List<Seen> out = framer.feed(ch, List.of(stream));
    assertEquals(4, out.size());
    assertEquals(Tags.HEARTBEAT, out.get(0).tag());
    assertEquals(0, out.get(0).payload().length);
    assertEquals(101, out.get(2).tag());
    assertEquals(0, out.get(3).payload().length);
    assertFalse(ch.finish());
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void partialHeaderAndPartialPayloadProduceNothing(Framer framer) {
    byte[] bytes = FrameCaptures.NOTIFY.bytes();
    EmbeddedChannel ch = framer.channel(MAX);
    assertTrue(framer.feed(ch, List.of(Arrays.copyOf(bytes, 15))).isEmpty());
    assertTrue(framer.feed(ch, List.of(Arrays.copyOfRange(bytes, 15, 40))).isEmpty());
    List<Seen> out = framer.feed(ch, List.of(Arrays.copyOfRange(bytes, 40, bytes.length)));
    assertEquals(1, out.size());
    assertFrame(FrameCaptures.NOTIFY, out.get(0), "completed");
    assertTrue(framer.feed(ch, List.of(Arrays.copyOf(bytes, 20))).isEmpty());
    assertFalse(ch.finish(), "EOF inside a frame releases the partial bytes");
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void padWordIsIgnored(Framer framer) {
    byte[] bytes = FrameCaptures.REQ.bytes().clone();
    bytes[12] = (byte) 0xde;
    bytes[15] = (byte) 0xef;
    EmbeddedChannel ch = framer.channel(MAX);
    List<Seen> out = framer.feed(ch, List.of(bytes));
    assertEquals(1, out.size());
    assertFrame(FrameCaptures.REQ, out.get(0), "pad ignored");
    assertFalse(ch.finish());
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void payloadAtTheLimitIsAcceptedAndOneMoreIsRefusedFromTheHeaderAlone(Framer framer) {
    byte[] bytes = FrameCaptures.NOTIFY.bytes();
    EmbeddedChannel ok = framer.channel(47);
    assertEquals(1, framer.feed(ok, List.of(bytes)).size());
    assertFalse(ok.finish());

    EmbeddedChannel refused = framer.channel(46);
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> refused.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(bytes, 16))));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("47"), e.getMessage());
    // Nothing after the refused header is framed, and nothing else is reported.
    assertTrue(
        framer
            .feed(
                refused,
                List.of(Arrays.copyOfRange(bytes, 16, bytes.length), FrameCaptures.REQ.bytes()))
            .isEmpty());
    assertFalse(refused.finish());
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void partialFramesOfAllChannelsShareTheBudgetAndGiveItBack(Framer framer) {
    FrameBudget budget = FrameBudget.of(1000);
    EmbeddedChannel a = new EmbeddedChannel(framer.handler(MAX, budget));
    EmbeddedChannel b = new EmbeddedChannel(framer.handler(MAX, budget));
    // a holds 800 bytes of the budget while its frame is incomplete.
    assertFalse(a.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(800, 10))));
    assertEquals(800, budget.reserved());
    // b's 300-byte frame does not fit: refused from its header, nothing kept.
    PmixException e =
        assertThrows(
            PmixException.class,
            () -> b.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(300, 5))));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertEquals(800, budget.reserved());
    assertFalse(b.finish());
    // a's frame completes: its bytes come back, and the next frame may take them.
    List<Seen> done = framer.feed(a, List.of(new byte[790]));
    assertEquals(1, done.size());
    assertEquals(800, done.get(0).payload().length);
    assertEquals(0, budget.reserved());
    EmbeddedChannel c = new EmbeddedChannel(framer.handler(MAX, budget));
    assertFalse(c.writeInbound(Unpooled.wrappedBuffer(FrameCaptures.partialFrame(900, 1))));
    assertEquals(900, budget.reserved());
    // A connection closed in the middle of a frame gives its share back.
    assertFalse(c.finish());
    assertEquals(0, budget.reserved());
    // A frame that arrives whole reserves nothing.
    List<Seen> whole = framer.feed(a, List.of(FrameCaptures.partialFrame(2000, 2000)));
    assertEquals(2000, whole.get(0).payload().length);
    assertEquals(0, budget.reserved());
    assertFalse(a.finish());
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void hugeUnsignedLengthIsRefusedWithoutAllocating(Framer framer) {
    byte[] header = Hex.bytes("00 00 00 00 00 00 00 65 ff ff ff ff 00 00 00 00");
    EmbeddedChannel ch = framer.channel(MAX);
    PmixException e =
        assertThrows(PmixException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(header)));
    assertEquals(Status.ERR_OUT_OF_RESOURCE, e.status());
    assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
    assertFalse(ch.finish());
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void passesOtherMessagesThrough(Framer framer) {
    EmbeddedChannel ch = framer.channel(MAX);
    assertTrue(ch.writeInbound(RequestCaptures.DOC_CLIENT.request()));
    assertEquals(RequestCaptures.DOC_CLIENT.request(), ch.readInbound());
    assertFalse(ch.finish());
  }

  @ParameterizedTest
  @EnumSource(Framer.class)
  void rejectsANegativeLimit(Framer framer) {
    assertThrows(IllegalArgumentException.class, () -> framer.handler(-1, FrameBudget.UNLIMITED));
  }
}
