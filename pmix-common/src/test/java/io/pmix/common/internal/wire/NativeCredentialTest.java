package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.PmixException;
import org.junit.jupiter.api.Test;

class NativeCredentialTest {

  @Test
  void uidAndGidAreHostOrder() {
    // docs/transport.md §8.2: uid 4660, gid 22136 as observed.
    byte[] bytes = Hex.bytes("34 12 00 00 78 56 00 00");
    assertArrayEquals(bytes, new NativeCredential(0x1234, 0x5678).toBytes());
    assertEquals(new NativeCredential(0x1234, 0x5678), NativeCredential.fromBytes(bytes));
  }

  @Test
  void rootSendsEightZeros() {
    assertArrayEquals(new byte[8], new NativeCredential(0, 0).toBytes());
  }

  @Test
  void unsignedIdsRoundTrip() {
    NativeCredential nobody = new NativeCredential(0xFFFFFFFE, 65534);
    assertEquals(nobody, NativeCredential.fromBytes(nobody.toBytes()));
    assertEquals("NativeCredential{uid=4294967294, gid=65534}", nobody.toString());
  }

  @Test
  void bytesAfterTheFirstEightAreIgnoredLikeTheCValidator() {
    byte[] bytes = Hex.bytes("34 12 00 00 78 56 00 00 ff ff");
    assertEquals(new NativeCredential(0x1234, 0x5678), NativeCredential.fromBytes(bytes));
  }

  @Test
  void shortCredentialIsInvalidCred() {
    PmixException e =
        assertThrows(PmixException.class, () -> NativeCredential.fromBytes(new byte[7]));
    assertEquals(-12, e.status().code());
    assertThrows(PmixException.class, () -> NativeCredential.fromBytes(new byte[0]));
  }

  @Test
  void identityBlockOrderDiffers() {
    // The same ids in a tool's identity block are big-endian: 00 00 12 34.
    byte[] request = RequestCaptures.DOC_TOOL_NEEDS_ID.bytes();
    assertArrayEquals(
        Hex.bytes("00 00 12 34 00 00 56 78"), java.util.Arrays.copyOfRange(request, 0x24, 0x2c));
    assertArrayEquals(
        Hex.bytes("34 12 00 00 78 56 00 00"), java.util.Arrays.copyOfRange(request, 0x1b, 0x23));
  }
}
