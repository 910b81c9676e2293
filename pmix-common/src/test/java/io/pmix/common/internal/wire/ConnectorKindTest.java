package io.pmix.common.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConnectorKindTest {

  @Test
  void flagsZeroToNineLookUpToThemselves() {
    for (ConnectorKind k : ConnectorKind.values()) {
      assertEquals(Optional.of(k), ConnectorKind.fromFlag(k.flag()));
    }
    assertEquals(10, ConnectorKind.values().length);
  }

  @Test
  void otherFlagsAreUnknown() {
    assertEquals(Optional.empty(), ConnectorKind.fromFlag(10)); // 5.0+ scheduler
    assertEquals(Optional.empty(), ConnectorKind.fromFlag(255));
    assertEquals(Optional.empty(), ConnectorKind.fromFlag(-1));
  }

  @Test
  void identityBlockContentsFollowTheTransportTable() {
    Set<ConnectorKind> idsOnly =
        EnumSet.of(
            ConnectorKind.LEGACY_TOOL,
            ConnectorKind.LEGACY_LAUNCHER,
            ConnectorKind.TOOL_NEEDS_ID,
            ConnectorKind.LAUNCHER_NEEDS_ID);
    for (ConnectorKind k : ConnectorKind.values()) {
      assertEquals(k != ConnectorKind.SIMPLE_CLIENT, k.carriesIds(), k.name());
      assertEquals(!idsOnly.contains(k), k.carriesProcId(), k.name());
    }
  }

  @Test
  void needsIdAndLauncher() {
    assertTrue(ConnectorKind.TOOL_NEEDS_ID.needsId());
    assertTrue(ConnectorKind.LAUNCHER_NEEDS_ID.needsId());
    assertFalse(ConnectorKind.TOOL_GIVEN_ID.needsId());
    assertFalse(ConnectorKind.SINGLETON_CLIENT.needsId());
    assertEquals(
        EnumSet.of(
            ConnectorKind.LEGACY_LAUNCHER,
            ConnectorKind.LAUNCHER_NEEDS_ID,
            ConnectorKind.LAUNCHER_GIVEN_ID,
            ConnectorKind.LAUNCHER_CLIENT),
        EnumSet.copyOf(
            java.util.Arrays.stream(ConnectorKind.values())
                .filter(ConnectorKind::isLauncher)
                .toList()));
  }
}
