package io.pmix.server.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.server.ServerOptions;
import org.junit.jupiter.api.Test;

/**
 * The start-up rehearsal of a client's first exchanges ({@link ClientRehearsal}) must keep
 * following the real codecs: if a codec changes so that a step fails, the rehearsal silently
 * stops warming anything, which only this test would notice.
 */
class ClientRehearsalTest {
  @Test
  void everyStepRunsWithTheDefaultOptions() {
    assertTrue(ClientRehearsal.run(ServerOptions.defaults()));
  }

  @Test
  void everyStepRunsThroughEitherTransportsDecoders() {
    assertTrue(ClientRehearsal.run(ServerOptions.defaults(), true));
    assertTrue(ClientRehearsal.run(ServerOptions.defaults(), false));
  }

  @Test
  void everyStepRunsAgainInTheSameJvm() {
    // Every server of a process rehearses at its start (a test suite starts hundreds).
    for (int i = 0; i < 3; i++) {
      assertTrue(ClientRehearsal.run(ServerOptions.defaults()));
    }
  }
}
