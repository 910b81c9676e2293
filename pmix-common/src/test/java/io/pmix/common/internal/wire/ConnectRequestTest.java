package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class ConnectRequestTest {

  private static ConnectRequest.Builder client() {
    return ConnectRequest.builder()
        .security("native", new byte[] {1, 2, 3, 4, 5, 6, 7, 8})
        .kind(ConnectorKind.SIMPLE_CLIENT)
        .procId("testns", 0);
  }

  @Test
  void defaultsAreThoseOfAJavaConnector() {
    ConnectRequest r = client().build();
    assertEquals("4.2.2", r.version());
    assertEquals("v41", r.bfropsModule());
    assertEquals(ConnectRequest.BUFFER_NON_DESC, r.bufferType());
    assertEquals("hash", r.gdsModule());
    assertEquals(0, r.infoBlobLength());
    assertFalse(r.padPresent());
  }

  @Test
  void identityMustMatchTheKind() {
    assertThrows(IllegalArgumentException.class, () -> client().ids(1, 2).build());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            ConnectRequest.builder()
                .security("none", new byte[0])
                .kind(ConnectorKind.TOOL_NEEDS_ID)
                .build());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            ConnectRequest.builder()
                .security("none", new byte[0])
                .kind(ConnectorKind.TOOL_NEEDS_ID)
                .ids(1, 2)
                .procId("ns", 0)
                .build());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            ConnectRequest.builder()
                .security("none", new byte[0])
                .kind(ConnectorKind.SINGLETON_CLIENT)
                .ids(1, 2)
                .build());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new ConnectRequest(
                "none",
                new byte[0],
                ConnectorKind.TOOL_GIVEN_ID,
                OptionalInt.of(1),
                OptionalInt.empty(),
                Optional.of("ns"),
                OptionalInt.of(0),
                "4.2.2",
                "v41",
                1,
                "hash",
                new byte[0],
                false));
  }

  @Test
  void stringFieldsAreChecked() {
    assertThrows(IllegalArgumentException.class, () -> client().version("4.2\0.2").build());
    assertThrows(IllegalArgumentException.class, () -> client().procId("a".repeat(256), 0).build());
    assertThrows(IllegalArgumentException.class, () -> client().procId("é".repeat(128), 0).build());
    assertEquals(255, client().procId("a".repeat(255), 0).build().nspace().orElseThrow().length());
    assertThrows(IllegalArgumentException.class, () -> client().bufferType(256).build());
    assertThrows(IllegalArgumentException.class, () -> client().bufferType(-1).build());
    assertThrows(
        NullPointerException.class,
        () -> ConnectRequest.builder().kind(ConnectorKind.SIMPLE_CLIENT).build());
    assertThrows(
        NullPointerException.class,
        () -> ConnectRequest.builder().security("none", new byte[0]).build());
  }

  @Test
  void padOnlyAfterAnEmptyBlob() {
    assertTrue(client().padPresent(true).build().padPresent());
    assertThrows(
        IllegalArgumentException.class,
        () -> client().infoBlob(new byte[] {2, 0}).padPresent(true).build());
  }

  @Test
  void arraysAreCopiedAndCompareByContent() {
    byte[] cred = {1, 2, 3, 4, 5, 6, 7, 8};
    ConnectRequest r = client().security("native", cred).build();
    cred[0] = 9;
    assertEquals(1, r.credential()[0]);
    r.credential()[1] = 9;
    assertEquals(2, r.credential()[1]);
    assertEquals(client().build(), r);
    assertEquals(client().build().hashCode(), r.hashCode());
    assertNotEquals(client().infoBlob(new byte[] {1}).build(), r);
    assertArrayEquals(new byte[0], r.infoBlob());
  }

  @Test
  void toStringShowsTheCredentialLengthOnly() {
    ConnectRequest r =
        client()
            .security("munge", "MUNGE:secret:".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
            .build();
    String s = r.toString();
    assertFalse(s.contains("secret"), s);
    assertTrue(s.contains("credential=13 bytes"), s);
    assertTrue(s.contains("nspace=testns"), s);
  }
}
