package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TimingTest {
  private final String saved = System.getProperty(Timing.PROPERTY);

  @AfterEach
  void restore() {
    if (saved == null) {
      System.clearProperty(Timing.PROPERTY);
    } else {
      System.setProperty(Timing.PROPERTY, saved);
    }
  }

  @Test
  void scalesByTheProperty() {
    System.setProperty(Timing.PROPERTY, "2.5");
    assertEquals(Duration.ofSeconds(5), Timing.scaled(Duration.ofSeconds(2)));
    assertEquals(Duration.ofMillis(2500), Timing.seconds(1));
    System.clearProperty(Timing.PROPERTY);
    assertEquals(Duration.ofSeconds(2), Timing.scaled(Duration.ofSeconds(2)));
  }

  @Test
  void refusesNonsense() {
    System.setProperty(Timing.PROPERTY, "0");
    assertThrows(IllegalArgumentException.class, Timing::factor);
    System.setProperty(Timing.PROPERTY, "fast");
    assertThrows(IllegalArgumentException.class, Timing::factor);
  }
}
