package io.pmix.common.internal.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.common.io.BaseEncoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.wire.Command;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * What the decoders refuse, with the statuses pmix-server's readers answer today: counts beyond
 * the limits, collectives without a proc, a GETNB without a namespace; what they normalise (the
 * participants of a collective sorted); the LOG of an old peer; and that any truncation or
 * corruption of a golden vector gives a PmixException and nothing else.
 */
class MessageDecodingTest {
  private static PmixReader reader(Consumer<PmixWriter> body) {
    return reader(body, CodecLimits.DEFAULT);
  }

  private static PmixReader reader(Consumer<PmixWriter> body, CodecLimits limits) {
    ByteBuf b = Unpooled.buffer();
    body.accept(new PmixWriter(b, WireFormat.DEFAULT));
    return new PmixReader(b, WireFormat.DEFAULT, limits);
  }

  private static Status failure(Function<PmixReader, ?> decode, PmixReader r) {
    return assertThrows(PmixException.class, () -> decode.apply(r)).status();
  }

  @Test
  void collectivesNeedAProcAndComeBackSorted() {
    for (Function<PmixReader, ?> d :
        List.<Function<PmixReader, ?>>of(
            FenceNbRequest::decode, ConnectNbRequest::decode, DisconnectNbRequest::decode)) {
      assertEquals(
          Status.ERR_BAD_PARAM,
          failure(d, reader(w -> {
            w.packSize(0);
            w.pack(DataType.PROC, List.of());
            w.packSize(0);
          })));
    }
    List<Proc> unsorted =
        List.of(Proc.of("b", 0), Proc.of("a", Proc.RANK_WILDCARD), Proc.of("a", 2), Proc.of("a", 1));
    PmixReader r =
        reader(
            w -> {
              w.packSize(unsorted.size());
              w.pack(DataType.PROC, unsorted);
              w.packSize(0);
            });
    assertEquals(
        List.of(Proc.of("a", 1), Proc.of("a", 2), Proc.of("a", Proc.RANK_WILDCARD), Proc.of("b", 0)),
        FenceNbRequest.decode(r).procs());
  }

  @Test
  void countsBeyondTheLimitsAreBadParameters() {
    CodecLimits tight = CodecLimits.DEFAULT.withMaxItems(2);
    List<Info> three = List.of(Info.of("a", true), Info.of("b", true), Info.of("c", true));
    assertEquals(
        Status.ERR_BAD_PARAM,
        failure(
            PublishNbRequest::decode,
            reader(w -> new PublishNbRequest(0, three).encodeFields(w), tight)));
    assertEquals(
        Status.ERR_BAD_PARAM,
        failure(
            LookupNbRequest::decode,
            reader(w -> new LookupNbRequest(0, List.of("a", "b", "c"), List.of()).encodeFields(w),
                tight)));
    assertEquals(
        Status.ERR_BAD_PARAM,
        failure(
            AbortRequest::decode,
            reader(
                w -> new AbortRequest(Status.ERROR, "x", List.of(Proc.of("a", 0), Proc.of("a", 1),
                    Proc.of("a", 2))).encodeFields(w),
                tight)));
  }

  /** {@code size_t} 2^64-1, which a signed reading takes for -1. */
  private static final long HUGE = 0xFFFFFFFFFFFFFFFFL;

  /**
   * A count of 2^64-1 is a count beyond the limits, not "none": read signed it would be -1 and
   * skip its items, so an ABORT would abort the caller's whole job and every other message would
   * go on as if empty. Each body below is well formed if the hostile count is taken for zero.
   */
  @Test
  void aCountOfTwoToTheSixtyFourMinusOneIsABadParameterNotNone() {
    List<Function<PmixReader, ?>> decoders = new ArrayList<>();
    List<Consumer<PmixWriter>> bodies = new ArrayList<>();
    decoders.add(AbortRequest::decode);
    bodies.add(w -> {
      w.packStatus(Status.ERROR);
      w.packString("why");
      w.packSize(HUGE);
    });
    decoders.add(PublishNbRequest::decode);
    bodies.add(w -> {
      w.packUInt32(0);
      w.packSize(HUGE);
    });
    decoders.add(LookupNbRequest::decode);
    bodies.add(w -> {
      w.packUInt32(0);
      w.packSize(HUGE);
      w.packSize(0);
    });
    decoders.add(UnpublishNbRequest::decode);
    bodies.add(w -> {
      w.packUInt32(0);
      w.packSize(0);
      w.packSize(HUGE);
    });
    for (Function<PmixReader, ?> collective :
        List.<Function<PmixReader, ?>>of(
            FenceNbRequest::decode, ConnectNbRequest::decode, DisconnectNbRequest::decode)) {
      decoders.add(collective);
      bodies.add(w -> {
        w.packSize(1);
        w.pack(DataType.PROC, List.of(Proc.of("a", 0)));
        w.packSize(HUGE);
      });
    }
    decoders.add(GetNbRequest::decode);
    bodies.add(w -> {
      w.packString("ns");
      w.packRank(0);
      w.packSize(HUGE);
      w.packString("k");
    });
    decoders.add(NotifyRequest::decode);
    bodies.add(w -> {
      w.packStatus(Status.of(-31337));
      w.packByteEnum(DataType.DATA_RANGE, 3);
      w.packSize(HUGE);
    });
    decoders.add(RegEventsRequest::decode);
    bodies.add(w -> {
      w.packSize(HUGE);
      w.packSize(0);
    });
    decoders.add(QueryRequest::decode);
    bodies.add(w -> w.packSize(HUGE));
    decoders.add(r -> LogRequest.decode(r, false));
    bodies.add(w -> {
      w.packSize(HUGE);
      w.packSize(0);
    });
    decoders.add(SpawnNbRequest::decode);
    bodies.add(w -> {
      w.packSize(0);
      w.packSize(HUGE);
    });
    decoders.add(JobControlRequest::decode);
    bodies.add(w -> {
      w.packSize(HUGE);
      w.packSize(0);
    });
    decoders.add(MonitorRequest::decode);
    bodies.add(w -> {
      w.pack(DataType.INFO, List.of(Info.of("pmix.monitor.mbeat", true)));
      w.packStatus(Status.SUCCESS);
      w.packSize(HUGE);
    });
    decoders.add(IofPullRequest::decode);
    bodies.add(w -> {
      w.packSize(HUGE);
      w.packSize(0);
      w.pack(Value.unsigned(DataType.IOF_CHANNEL, 2));
      w.packSize(1);
    });
    decoders.add(IofPushRequest::decode);
    bodies.add(w -> {
      w.packSize(0);
      w.packSize(HUGE);
    });
    decoders.add(IofDeregRequest::decode);
    bodies.add(w -> {
      w.packSize(HUGE);
      w.packSize(1);
    });
    decoders.add(LookupNbReply::decode);
    bodies.add(w -> {
      w.packStatus(Status.SUCCESS);
      w.packSize(HUGE);
    });
    decoders.add(QueryReply::decode);
    bodies.add(w -> {
      w.packStatus(Status.SUCCESS);
      w.packSize(HUGE);
    });
    decoders.add(IofDelivery::decode);
    bodies.add(w -> {
      w.packProc(Proc.of("a", 0));
      w.pack(Value.unsigned(DataType.IOF_CHANNEL, 2));
      w.packSize(1);
      w.packSize(HUGE);
    });
    decoders.add(NotifyPush::decode);
    bodies.add(w -> {
      w.packStatus(Status.of(-31337));
      w.packProc(Proc.of("a", 0));
      w.packSize(HUGE);
    });
    for (int i = 0; i < decoders.size(); i++) {
      PmixReader r = reader(bodies.get(i));
      Function<PmixReader, ?> d = decoders.get(i);
      PmixException e = assertThrows(PmixException.class, () -> d.apply(r), "body " + i);
      assertEquals(Status.ERR_BAD_PARAM, e.status(), "body " + i + ": " + e.getMessage());
    }
  }

  @Test
  void aGetWithoutANamespaceIsABadParameter() {
    PmixReader r =
        reader(
            w -> {
              w.packString(null);
              w.packRank(0);
              w.packSize(0);
              w.packString("k");
            });
    assertEquals(Status.ERR_BAD_PARAM, failure(GetNbRequest::decode, r));
    // The key is optional at the end.
    PmixReader noKey = reader(w -> {
      w.packString("ns");
      w.packRank(3);
      w.packSize(0);
    });
    assertEquals(new GetNbRequest(Proc.of("ns", 3), List.of(), null), GetNbRequest.decode(noKey));
  }

  @Test
  void theLogOfAPeerBeforeVersion3HasNoTimestamp() {
    List<Info> data = List.of(Info.of("pmix.log.stderr", "x"));
    PmixReader old = reader(w -> {
      w.packSize(1);
      w.packInfos(data);
      w.packSize(0);
    });
    assertEquals(new LogRequest(0, data, List.of()), LogRequest.decode(old, LogRequest.carriesTime(2)));
    PmixReader now = reader(w -> new LogRequest(12345, data, List.of()).encodeFields(w));
    assertEquals(12345, LogRequest.decode(now, LogRequest.carriesTime(4)).time());
  }

  @Test
  void aValueOfAnotherTypeWhereAFieldNeedsOneIsAnUnpackFailure() {
    // A namespace longer than PMIX_MAX_NSLEN cannot name a proc: the peer's bytes are wrong.
    PmixReader r = reader(w -> {
      w.packString("n".repeat(Proc.MAX_NSLEN + 1));
      w.packRank(0);
      w.packSize(0);
      w.packString("k");
    });
    assertEquals(Status.ERR_UNPACK_FAILURE, failure(GetNbRequest::decode, r));
    // An unknown command reads as not supported.
    PmixReader u = reader(w -> w.packByteEnum(DataType.COMMAND, 200));
    assertEquals(Status.ERR_NOT_SUPPORTED, failure(Requests::decode, u));
    // A command without a record too (ALLOC is not sent by pmix-java).
    PmixReader a = reader(w -> w.packByteEnum(DataType.COMMAND, Command.ALLOC.code()));
    assertEquals(Status.ERR_NOT_SUPPORTED, failure(Requests::decode, a));
    // An empty reply is a lost connection.
    assertEquals(
        Status.ERR_LOST_CONNECTION,
        failure(StatusReply::decode, new PmixReader(Unpooled.EMPTY_BUFFER)));
  }

  /**
   * Every prefix and 200 random corruptions of every golden request and reply, in both formats:
   * each either decodes or fails with a PmixException; nothing else escapes.
   */
  @Test
  void truncatedOrCorruptedVectorsFailOnlyWithPmixExceptions() {
    Random rnd = new Random(42);
    for (MessageCasesTest.Row row : MessageCasesTest.rows()) {
      MessageCasesTest.Case c = MessageCasesTest.cases(row.format()).get(row.name());
      byte[] bytes = BaseEncoding.base16().lowerCase().decode(row.hex());
      for (int n = 0; n < bytes.length; n++) {
        tryDecode(c, row, java.util.Arrays.copyOf(bytes, n));
      }
      for (int i = 0; i < 200 && bytes.length > 0; i++) {
        byte[] bad = bytes.clone();
        bad[rnd.nextInt(bad.length)] = (byte) rnd.nextInt(256);
        tryDecode(c, row, bad);
      }
    }
  }

  private static void tryDecode(MessageCasesTest.Case c, MessageCasesTest.Row row, byte[] bytes) {
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(bytes), row.format());
    try {
      var unused = c.decode().apply(r);
    } catch (PmixException e) {
      // expected for most
    } catch (AssertionError e) {
      // decodePush asserts the COMMAND unit; a corrupted one is fine to refuse so
    } catch (RuntimeException e) {
      fail(row + " " + ByteBufUtil.hexDump(bytes) + " threw " + e, e);
    }
  }

  @Test
  void spawnWithoutSuccessCarriesNoNamespace() {
    PmixReader r = reader(w -> w.packStatus(Status.ERR_NOT_SUPPORTED));
    SpawnNbReply s = SpawnNbReply.decode(r);
    assertEquals(Status.ERR_NOT_SUPPORTED, s.status());
    assertEquals(null, s.nspace());
    assertEquals(0, s.jobData().length);
    PmixReader blobless =
        reader(w -> {
          w.packStatus(Status.SUCCESS);
          PmixWriter inner = new PmixWriter(Unpooled.buffer(), WireFormat.DEFAULT);
          inner.packString("");
          w.pack(Value.of(ByteBufUtil.getBytes(inner.buffer())));
          inner.buffer().release();
        });
    assertEquals(Status.ERR_BAD_PARAM, failure(ConnectNbReply::decode, blobless));
  }
}
