package io.pmix.common.internal.connector;

import static io.pmix.common.internal.connector.Bytes.hex;
import static io.pmix.common.internal.connector.Bytes.hexAndRelease;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.message.IofDelivery;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The tool's requests and the forwarded-output push against the captures of docs/commands.md
 * §9.2 and §9.10, and the connect request's info blob against docs/transport.md §11.3 (OpenPMIx
 * 4.2.2, NON_DESC).
 */
class ToolMessagesTest {
  private static final Proc JOB = Proc.wildcard("testjob");
  private final Messages m = new Messages(WireFormat.DEFAULT);

  @Test
  void iofPullDeregisterAndPush() {
    assertEquals(
        hex(Bytes.of("02 16 02 01 02 10", "'testjob", "fe ff ff ff 0f 02 00 02 06 02 01")),
        hexAndRelease(m.iofPull(List.of(JOB), List.of(), 6, 1)));
    assertEquals("021d02000201", hexAndRelease(m.iofDeregister(List.of(), 1)));
    assertEquals(
        hex(
            Bytes.of(
                "02 17 02 01 02 10",
                "'testjob",
                "fe ff ff ff 0f 02 00 02 0b 73 74 64 69 6e 2d 64 61 74 61 0a")),
        hexAndRelease(
            m.iofPush(List.of(JOB), List.of(), "stdin-data\n".getBytes(StandardCharsets.UTF_8))));
  }

  @Test
  void jobControl() {
    assertEquals(
        hex(
            Bytes.of(
                "02 12 02 01 02 10",
                "'testjob",
                "fe ff ff ff 0f 02 01 02 20",
                "'pmix.jctrl.kill",
                "00 01 01")),
        hexAndRelease(m.jobControl(List.of(JOB), List.of(Info.of("pmix.jctrl.kill", true)))));
  }

  @Test
  void spawn() {
    Value.App app =
        new Value.App("/bin/true", List.of("/bin/true", "arg1"), List.of(), "/home/app", 1, List.of());
    assertEquals(
        hex(
            Bytes.of(
                "02 09 02 01 02 16",
                "'pmix.mapby",
                "00 03 0a",
                "'slot",
                "02 01 02 14",
                "'/bin/true",
                "04 14",
                "'/bin/true",
                "0a",
                "'arg1",
                "00 14",
                "'/home/app",
                "02 00")),
        hexAndRelease(m.spawn(List.of(Info.of("pmix.mapby", "slot")), List.of(app))));
  }

  @Test
  void forwardedOutput() {
    byte[] text = "fake-stdout-line-0\n".getBytes(StandardCharsets.UTF_8);
    byte[] push =
        Bytes.of(
            "02 10",
            "'testjob",
            "00 02 02 02 01 02 00 02 13",
            Bytes.hexOf(text));
    IofDelivery c =
        Messages.iofChunk(new PmixReader(Unpooled.wrappedBuffer(push), WireFormat.DEFAULT));
    assertEquals(Proc.of("testjob", 0), c.source());
    assertEquals(2, c.channel());
    assertEquals(1, c.localId());
    assertEquals(List.of(), c.info());
    assertEquals(hex(text), hex(c.data()));
  }

  @Test
  void connectInfoBlobAsA422Tool() {
    byte[] blob =
        m.connectInfoBlob(
            List.of(
                Info.of(Keys.PROC_PID, Value.pid(13122)), Info.of(Keys.CMD_LINE, Value.of("./tool"))));
    assertEquals(
        hex(
            Bytes.of(
                "02 02 04 14",
                "'pmix.ppid",
                "00 05 0e c2 66 1c",
                "'pmix.cmd.line",
                "00 03 0e",
                "'./tool")),
        hex(blob));
  }
}
