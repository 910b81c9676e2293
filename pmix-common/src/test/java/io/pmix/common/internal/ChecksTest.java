package io.pmix.common.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The argument checks pass silently and fail with their template filled in, as Guava's did. */
@Timeout(10)
class ChecksTest {
  @Test
  void aPassingCheckThrowsNothing() {
    assertDoesNotThrow(() -> Checks.checkArgument(true, "never %s", (Object) null));
    assertDoesNotThrow(() -> Checks.checkArgument(true, "%s %s", 1L, "x"));
  }

  @Test
  void aFailingCheckFillsTheTemplateInOrder() {
    assertEquals("plain", failure(() -> Checks.checkArgument(false, "plain")));
    assertEquals("a 1 b", failure(() -> Checks.checkArgument(false, "a %s b", 1)));
    assertEquals(
        "300 out of range for UINT8",
        failure(() -> Checks.checkArgument(false, "%s out of range for %s", 300L, "UINT8")));
    assertEquals("x null y", failure(() -> Checks.checkArgument(false, "x %s y", (Object) null)));
  }

  @Test
  void argumentsBeyondThePlaceholdersAreAppended() {
    assertEquals("none [1, 2]", failure(() -> Checks.checkArgument(false, "none", 1, 2)));
    assertEquals("one 1 [2]", failure(() -> Checks.checkArgument(false, "one %s", 1, 2)));
    assertEquals("%s left %s", Checks.format("%s left %s"));
  }

  private static String failure(Runnable check) {
    return assertThrows(IllegalArgumentException.class, check::run).getMessage();
  }
}
