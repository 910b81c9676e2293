package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReplyLayoutTest {

  @ParameterizedTest(name = "{0} -> client layout: {1}")
  @CsvSource({
    "4.2.2rc2, false",
    "4.2.2, false",
    "4.2.9, false",
    "5.0.0, false",
    "5.0.8, false",
    "5.0.9, true",
    "5.0.11, true",
    "5.0.11rc1, true",
    "5.1.0, true",
    "6.0.0, false",
    "6.0.2rc1, false",
    "6.1.0, true",
    "6.1.1rc2, true",
    "7.0.0a1, true",
    "v5.0.9, true",
    "10.0.0, true",
    "5.0, false",
    "6.1, true",
    "garbage, false",
    "'', false",
    "5, false",
    "x5.0.9, false",
    "99999999999.0.0, false"
  })
  void singletonLayoutFollowsTheVersion(String version, boolean client) {
    assertEquals(client, ReplyLayout.singletonUsesClientLayout(version));
  }

  @Test
  void layoutByKind() {
    assertEquals(
        ReplyLayout.CLIENT, ReplyLayout.forConnector(ConnectorKind.SIMPLE_CLIENT, "garbage"));
    assertEquals(
        ReplyLayout.TOOL_WITH_ASSIGNED_ID,
        ReplyLayout.forConnector(ConnectorKind.TOOL_NEEDS_ID, "4.2.2"));
    assertEquals(
        ReplyLayout.TOOL_WITH_ASSIGNED_ID,
        ReplyLayout.forConnector(ConnectorKind.LAUNCHER_NEEDS_ID, "5.0.11"));
    for (ConnectorKind kind :
        new ConnectorKind[] {
          ConnectorKind.LEGACY_TOOL,
          ConnectorKind.LEGACY_LAUNCHER,
          ConnectorKind.TOOL_GIVEN_ID,
          ConnectorKind.TOOL_CLIENT,
          ConnectorKind.LAUNCHER_GIVEN_ID,
          ConnectorKind.LAUNCHER_CLIENT
        }) {
      assertEquals(ReplyLayout.TOOL, ReplyLayout.forConnector(kind, "5.0.11"), kind.name());
    }
    assertEquals(
        ReplyLayout.TOOL, ReplyLayout.forConnector(ConnectorKind.SINGLETON_CLIENT, "4.2.2rc2"));
    assertEquals(
        ReplyLayout.CLIENT, ReplyLayout.forConnector(ConnectorKind.SINGLETON_CLIENT, "5.0.11"));
    assertEquals(
        ReplyLayout.TOOL, ReplyLayout.forConnector(ConnectorKind.SINGLETON_CLIENT, "6.0.0"));
    assertEquals(
        ReplyLayout.CLIENT, ReplyLayout.forConnector(ConnectorKind.SINGLETON_CLIENT, "6.1.0"));
    assertEquals(
        ReplyLayout.TOOL, ReplyLayout.forConnector(ConnectorKind.SINGLETON_CLIENT, "garbage"));
  }
}
