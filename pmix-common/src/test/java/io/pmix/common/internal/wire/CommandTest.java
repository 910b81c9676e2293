package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class CommandTest {

  @Test
  void codesOfTheTransportTable() {
    assertEquals(0, Command.REQ.code());
    assertEquals(5, Command.FINALIZE.code());
    assertEquals(12, Command.NOTIFY.code());
    assertEquals(13, Command.REGEVENTS.code());
    assertEquals(15, Command.QUERY.code());
    assertEquals(32, Command.COMPUTE_DEVICE_DISTANCES.code());
    assertEquals(39, Command.GDS_FALLBACK.code());
  }

  @Test
  void everyCodeFrom0To39IsDefinedOnceAndLooksUpToItself() {
    Command[] all = Command.values();
    assertEquals(40, all.length);
    for (int code = 0; code < all.length; code++) {
      Command c = all[code];
      assertEquals(code, c.code(), c.name());
      assertEquals(Optional.of(c), Command.fromCode(c.code()));
      assertEquals(c.code(), c.wireByte() & 0xff);
      assertEquals(c.code() <= 32, c.isIn422(), c.name());
    }
  }

  @Test
  void unknownCodesAreEmptyNotErrors() {
    assertEquals(Optional.empty(), Command.fromCode(40));
    assertEquals(Optional.empty(), Command.fromCode(255));
    assertEquals(Optional.empty(), Command.fromCode(256));
    assertEquals(Optional.empty(), Command.fromCode(-1));
    assertEquals(Optional.empty(), Command.fromCode(Integer.MIN_VALUE));
  }

  @Test
  void fullyDescribedReqCarriesTheCommandByte() {
    // 11.8: "09 02 22 00" = INT32-typed count 1, COMMAND-typed (34 = 0x22) REQ.
    assertEquals(
        Optional.of(Command.REQ), Command.fromCode(FrameCaptures.FULLY_DESC_REQ.payload()[3]));
    assertEquals(0x22, FrameCaptures.FULLY_DESC_REQ.payload()[2]);
  }
}
