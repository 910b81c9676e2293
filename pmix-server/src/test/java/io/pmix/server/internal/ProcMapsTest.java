package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The map encodings of docs/commands.md §6.4, with the outputs 4.2.2 was observed to make. */
class ProcMapsTest {
  @Test
  void nativeNodeMaps() {
    assertEquals(
        List.of("node01", "node02", "node03", "node10"),
        ProcMaps.parseNodes("pmix[node[2:1-3,10]]"));
    assertEquals(List.of("c1n1", "c1n2", "c2n1"), ProcMaps.parseNodes("pmix[c[1:1]n1,c[1:1]n2,c[1:2]n1]"));
    assertEquals(List.of("vm", "remotenode"), ProcMaps.parseNodes("pmix[vm,remotenode]"));
    assertEquals(List.of("b.x.y"), ProcMaps.parseNodes("pmix[b.x.y]"));
  }

  @Test
  void rawAndPlainMaps() {
    assertEquals(List.of("a", "b"), ProcMaps.parseNodes("raw:a,b"));
    assertEquals(List.of("a", "b"), ProcMaps.parseNodes("a,b"));
    assertEquals(List.of(List.of(0, 1), List.of(2, 3)), ProcMaps.parseProcs("raw:0,1;2,3"));
    assertEquals(List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), ProcMaps.parseProcs("pmix[0-3;4-7]"));
  }

  @Test
  void refusals() {
    PmixException zlib = assertThrows(PmixException.class, () -> ProcMaps.parseNodes("blob:\0x"));
    assertEquals(Status.ERR_NOT_SUPPORTED, zlib.status());
    PmixException bad = assertThrows(PmixException.class, () -> ProcMaps.parseProcs("0,x"));
    assertEquals(Status.ERR_BAD_PARAM, bad.status());
    assertThrows(PmixException.class, () -> ProcMaps.parseProcs("5-2"));
  }
}
