package io.pmix.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Packs and unpacks the {@link ModexPayload} (32 infos in one pack call), the work {@code
 * codec_bench.c} times for libpmix; {@code bin/bench-codec} runs both and prints the ratio.
 *
 * <p>Sized for a 2-core machine: one benchmark thread, 2 forks of 8 warm-up and 5 measured
 * iterations of 1 s each, about a minute for both benchmarks. The warm-up is long because the
 * codec needs 3 to 5 s here before its time per op settles.
 *
 * <p>One instance per benchmark thread ({@link Scope#Thread}); it owns its two buffers and
 * releases them at tear-down.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 8, time = 1)
@Measurement(iterations = 5, time = 1)
public class CodecBenchmark {
  private List<Info> infos;
  private ByteBuf packOut;
  private ByteBuf packed;

  /** Builds the infos and packs them once; allocates the reused output buffer. */
  @Setup(Level.Trial)
  public void setUp() {
    infos = ModexPayload.infos();
    byte[] bytes = ModexPayload.packed();
    packed = Unpooled.wrappedBuffer(bytes);
    packOut = Unpooled.buffer(2 * bytes.length);
    List<Value> back = new PmixReader(packed, WireFormat.DEFAULT).unpack(DataType.INFO, 64);
    packed.readerIndex(0);
    if (!back.equals(infos)) {
      throw new IllegalStateException("the payload does not survive a pack/unpack round trip");
    }
  }

  /** Releases the buffers. */
  @TearDown(Level.Trial)
  public void tearDown() {
    packOut.release();
    packed.release();
  }

  /** One pack call of the 32 infos into a cleared, reused heap buffer. */
  @Benchmark
  public ByteBuf pack() {
    packOut.clear();
    return new PmixWriter(packOut, WireFormat.DEFAULT).pack(DataType.INFO, infos).buffer();
  }

  /** One unpack call of the 32 infos from the packed bytes. */
  @Benchmark
  public List<Value> unpack() {
    packed.readerIndex(0);
    return new PmixReader(packed, WireFormat.DEFAULT).unpack(DataType.INFO, ModexPayload.COUNT);
  }
}
